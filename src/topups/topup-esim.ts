// Step 1 of both top-up endpoints (spec 4.5 "validate the iccid"): the ICCID's shape, then
// whether it is one of this partner's eSIMs.

import type { Executor } from "../db/executor.ts";
import { isValidIccid } from "../lib/luhn.ts";
import { type EsimRow, partnerEsim } from "../orders/partner-esim.ts";
import { ApiError } from "../shared/errors.ts";

/** 400 invalid_iccid unless 19-20 digits starting 89 with a valid Luhn check digit. */
export function requireValidIccid(iccid: string, field = "iccid"): string {
  if (!isValidIccid(iccid)) {
    throw new ApiError(
      "invalid_iccid",
      "An ICCID is 19 or 20 digits, starts with 89 and ends with a Luhn check digit.",
      { errors: [{ field, code: "invalid_format", message: "is not a valid ICCID" }] },
    );
  }
  return iccid;
}

/** The partner's eSIM. Unknown and another partner's answer the same 404, detail included. */
export async function requirePartnerEsim(db: Executor, partner_id: string, iccid: string): Promise<EsimRow> {
  return foundEsim(await partnerEsim(db, partner_id, iccid), iccid);
}

/** What partnerEsim read, or that 404 when it found none. */
export function foundEsim(esim: EsimRow | null, iccid: string): EsimRow {
  if (!esim) throw new ApiError("esim_not_found", `No eSIM ${iccid} for this partner.`);
  return esim;
}
