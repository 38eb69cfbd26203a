// SQL of provisioned eSIMs: the profile a top-up order is completed with, and the one a
// top-up's ICCID must name (partner-esim.ts).
import { type Selectable, sql } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";

/** Exactly the columns esimProfile reads. */
export type EsimRow = Pick<
  Selectable<Database["esims"]>,
  "iccid" | "partner_id" | "order_id" | "package_id" | "smdp_address" | "activation_code" | "status"
>;

export async function esimProfile(db: Executor, iccid: string): Promise<EsimRow | null> {
  const result = await sql<EsimRow>`
    select iccid, partner_id, order_id, package_id, smdp_address, activation_code, status
    from esims where iccid = ${iccid}`.execute(db);
  return result.rows[0] ?? null;
}
