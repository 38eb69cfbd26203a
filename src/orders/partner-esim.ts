// The eSIMs this service provisioned, as other domains may read them (top-ups, by ICCID).
import type { Executor } from "../db/executor.ts";
import { type EsimRow, esimProfile } from "./esims.sql.ts";

export type { EsimRow };

/** The partner's eSIM, or null: another partner's eSIM is indistinguishable from an unknown one. */
export async function partnerEsim(db: Executor, partner_id: string, iccid: string): Promise<EsimRow | null> {
  const esim = await esimProfile(db, iccid);
  return esim && esim.partner_id === partner_id ? esim : null;
}
