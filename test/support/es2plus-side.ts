// The ES2+ side of a test deployment (CARRIER_PROFILES=es2plus): certificates, the SM-DP+
// simulator process, and for every package sold in the given destinations (metered, up to 5 GB:
// what the chaos run buys; the whole catalog is 1,500 packages) an ICCID range loaded at the
// SM-DP+ and imported into our inventory; returns the service environment that points at it.
import { rmSync } from "node:fs";
import type pg from "pg";
import { importInventory } from "../../src/carrier/es2plus/import-inventory.ts";
import { luhnCheckDigit } from "../../src/lib/luhn.ts";
import { REQUESTER_ID, SMDP_ADDRESS, type SmdpProcess, startSmdpProcess } from "./smdp.ts";
import { makeCertificates } from "./tls.ts";

export type Es2PlusSide = { smdp: SmdpProcess; env: Record<string, string>; stop: () => Promise<void> };

export type Es2PlusStock = { profiles_per_package: number; destinations: readonly string[] };

export async function startEs2PlusSide(
  databaseUrl: string,
  pool: pg.Pool,
  stock: Es2PlusStock,
): Promise<Es2PlusSide> {
  const { profiles_per_package } = stock;
  const certs = makeCertificates({ removeAfterTests: false });
  const smdp = await startSmdpProcess({ databaseUrl, certs, stopAfterTests: false });
  const stop = async () => {
    await smdp.stop();
    rmSync(certs.dir, { recursive: true, force: true });
  };
  try {
    const packages = await pool.query<{ external_package_id: string }>(
      `select distinct p.external_package_id from packages p
       join package_destinations d on d.package_id = p.package_id
       where d.destination_code = any($1::text[]) and p.data_mb <= 5000 order by 1`,
      [stock.destinations],
    );
    let block = 0;
    for (const { external_package_id } of packages.rows) {
      const payload = `89445${String(++block).padStart(6, "0")}0000000`;
      const first_iccid = `${payload}${luhnCheckDigit(payload)}`;
      const profile_type = `TYPE-${external_package_id}`.slice(0, 64);
      await smdp.load(profile_type, first_iccid, profiles_per_package);
      await importInventory(pool, {
        external_package_id,
        profile_type,
        first_iccid,
        count: profiles_per_package,
      });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const env = {
    CARRIER_PROFILES: "es2plus",
    ES2PLUS_URL: smdp.url,
    ES2PLUS_REQUESTER_ID: REQUESTER_ID,
    ES2PLUS_CLIENT_CERT_FILE: certs.client.cert_file,
    ES2PLUS_CLIENT_KEY_FILE: certs.client.key_file,
    ES2PLUS_CA_FILE: certs.ca_file,
    ES2PLUS_SMDP_ADDRESS: SMDP_ADDRESS,
    ES2PLUS_CALLBACK_TOKEN: "cluster-smdp-callback-token-0123456789",
  };
  return { smdp, env, stop };
}
