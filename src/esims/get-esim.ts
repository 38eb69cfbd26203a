// Partner use case: one of the partner's eSIMs as the contract's Esim, in one indexed query.
import type { Executor } from "../db/executor.ts";
import type { Pool } from "../db/pool.ts";
import { esimCacheOf } from "./esim-cache.ts";
import { esimWithBundles } from "./esims.sql.ts";
import { requireValidIccid, unknownEsim } from "./iccid-param.ts";
import { type EsimBody, renderEsim } from "./render-esim.ts";

export type { EsimBody };

/**
 * `db` is the pool for a plain read (a prepared statement), or an executor inside a transaction;
 * `public_base_url` (PUBLIC_BASE_URL) is where the install page's address points.
 */
export async function getEsim(
  db: Executor | Pool,
  partner_id: string,
  iccid: string,
  public_base_url: string,
): Promise<EsimBody> {
  requireValidIccid(iccid);
  const row = await esimWithBundles(db, partner_id, iccid);
  if (!row) throw unknownEsim(iccid);
  return renderEsim(row, row.bundles, public_base_url);
}

/**
 * The Esim as the GET route sends it: JSON bytes, from this process's cache (esim-cache.ts) or
 * read and rendered on a miss. JSON.stringify, not the schema's serializer (see get-esim.route.ts).
 */
export function getEsimBody(
  pool: Pool,
  partner_id: string,
  iccid: string,
  public_base_url: string,
): Buffer | Promise<Buffer> {
  requireValidIccid(iccid);
  return esimCacheOf(pool).body(partner_id, iccid, async () =>
    Buffer.from(JSON.stringify(await getEsim(pool, partner_id, iccid, public_base_url)), "utf8"),
  );
}
