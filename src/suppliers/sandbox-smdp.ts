// The built-in SM-DP+ of a sandbox (CARRIER_PROFILES=es2plus without ES2PLUS_URL): the simulator
// in-process over real mutual TLS, with certificates made once by openssl under DATA_DIR, and an
// inventory that grows on demand: a package with no free ICCID gets a new range of RESTOCK_COUNT,
// loaded here and imported into the service's inventory, as an operator would.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import { importInventory } from "../carrier/es2plus/import-inventory.ts";
import { iccidRange } from "../lib/iccid-range.ts";
import { luhnCheckDigit } from "../lib/luhn.ts";
import { SMDP_ADDRESS } from "../simulators/carrier/inventory.ts";
import { loadProfiles } from "../simulators/smdp/profiles.sql.ts";
import { type RunningSmdpSimulator, startSmdpSimulator } from "../simulators/smdp/server.ts";

export const SANDBOX_REQUESTER_ID = "esim-api-sandbox";
const RESTOCK_COUNT = 1_000;

export type SandboxSmdp = RunningSmdpSimulator & {
  /** PEM: the operator's client certificate and key, and the CA of the simulator's certificate. */
  client: { cert: string; key: string; ca: string };
  requester_id: string;
  smdp_address: string;
  /** Adds a range of profiles for a package at the SM-DP+ and in the inventory. */
  restock: (external_package_id: string) => Promise<void>;
};

export async function startSandboxSmdp(
  pool: pg.Pool,
  data_dir: string,
  log: (m: string) => void,
): Promise<SandboxSmdp> {
  const tls = sandboxCertificates(path.join(data_dir, "smdp-tls"));
  const simulator = await startSmdpSimulator({
    pool,
    port: 0,
    host: "127.0.0.1",
    tls: { cert: tls.server_cert, key: tls.server_key, ca: tls.ca },
    requester_id: SANDBOX_REQUESTER_ID,
    smdp_address: SMDP_ADDRESS,
    log,
  });
  await pool.query(
    "create sequence if not exists smdp_sim.sandbox_block minvalue 1 maxvalue 999999 no cycle",
  );
  return {
    ...simulator,
    client: { cert: tls.client_cert, key: tls.client_key, ca: tls.ca },
    requester_id: SANDBOX_REQUESTER_ID,
    smdp_address: SMDP_ADDRESS,
    restock: async (external_package_id) => {
      const block = await pool.query<{ n: string }>("select nextval('smdp_sim.sandbox_block')::text as n");
      const payload = `89446${block.rows[0]!.n.padStart(6, "0")}0000000`;
      const first_iccid = `${payload}${luhnCheckDigit(payload)}`;
      const profile_type = `SANDBOX-${external_package_id}`.slice(0, 64);
      await loadProfiles(pool, profile_type, iccidRange(first_iccid, RESTOCK_COUNT));
      await importInventory(pool, { external_package_id, profile_type, first_iccid, count: RESTOCK_COUNT });
    },
  };
}

type Pems = { ca: string; server_cert: string; server_key: string; client_cert: string; client_key: string };

/** A CA, a server certificate for 127.0.0.1 and a client certificate, made once per DATA_DIR. */
function sandboxCertificates(dir: string): Pems {
  const file = (name: string) => path.join(dir, name);
  if (!existsSync(file("client.pem"))) {
    mkdirSync(dir, { recursive: true });
    const openssl = (args: string[]) =>
      execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    const key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    openssl([
      "req",
      "-x509",
      ...key,
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "3650",
      "-subj",
      "/CN=sandbox SMDP CA",
    ]);
    for (const [name, extensions] of [
      ["server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"],
      ["client", "extendedKeyUsage=clientAuth\n"],
    ] as const) {
      writeFileSync(file(`${name}.ext`), extensions);
      openssl([
        "req",
        ...key,
        "-keyout",
        `${name}.key`,
        "-out",
        `${name}.csr`,
        "-subj",
        `/CN=sandbox ${name}`,
      ]);
      openssl([
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        `${name}.pem`,
        "-days",
        "3650",
        "-extfile",
        `${name}.ext`,
      ]);
    }
  }
  const read = (name: string) => readFileSync(file(name), "utf8");
  return {
    ca: read("ca.pem"),
    server_cert: read("server.pem"),
    server_key: read("server.key"),
    client_cert: read("client.pem"),
    client_key: read("client.key"),
  };
}
