// Partner use case: one of the partner's eSIMs as the contract's Esim, in one indexed query.
import type { Executor } from "../db/executor.ts";
import { ApiError } from "../shared/errors.ts";
import { esimWithBundles } from "./esims.sql.ts";
import { requireValidIccid } from "./iccid-param.ts";
import { type EsimBody, renderEsim } from "./render-esim.ts";

/** 400 invalid_iccid for a malformed ICCID; 404 esim_not_found for an unknown or another partner's. */
export async function getEsim(db: Executor, partner_id: string, iccid: string): Promise<EsimBody> {
  requireValidIccid(iccid);
  const row = await esimWithBundles(db, partner_id, iccid);
  if (!row) throw new ApiError("esim_not_found", `No eSIM ${iccid} for this partner.`);
  return renderEsim(row, row.bundles);
}
