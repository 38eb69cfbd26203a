// SQL of provisioned eSIMs, read by top-ups.
import { type Kysely, sql, type Transaction } from "kysely";
import type { Database } from "../db/schema.ts";

type Executor = Kysely<Database> | Transaction<Database>;

export type EsimRow = {
  iccid: string;
  partner_id: string;
  order_id: string;
  package_id: string;
  smdp_address: string;
  activation_code: string;
};

export async function esimProfile(db: Executor, iccid: string): Promise<EsimRow | null> {
  const result = await sql<EsimRow>`
    select iccid, partner_id, order_id, package_id, smdp_address, activation_code from esims where iccid = ${iccid}`.execute(
    db,
  );
  return result.rows[0] ?? null;
}

/** The partner's eSIM, or null: another partner's eSIM is indistinguishable from an unknown one. */
export async function partnerEsim(db: Executor, partner_id: string, iccid: string): Promise<EsimRow | null> {
  const esim = await esimProfile(db, iccid);
  return esim && esim.partner_id === partner_id ? esim : null;
}
