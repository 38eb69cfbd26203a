// Step 1 of both top-up endpoints (spec 4.5 "validate the iccid"): the ICCID's shape, then
// whether it is one of this partner's eSIMs.

import type { Executor } from "../db/executor.ts";
import { isIccidShaped, isValidIccid } from "../lib/luhn.ts";
import { type EsimRow, partnerEsim } from "../orders/partner-esim.ts";
import { ApiError } from "../shared/errors.ts";

/**
 * 400 invalid_iccid unless a valid ICCID or one shaped as a supplier's (18-22 digits, luhn.ts
 * isIccidShaped); the second kind must then be one of ours (foundEsim), else it is malformed too.
 */
export function requireValidIccid(iccid: string, field = "iccid"): string {
  if (!isIccidShaped(iccid)) throw invalidIccid(field);
  return iccid;
}

function invalidIccid(field: string): ApiError {
  return new ApiError(
    "invalid_iccid",
    "An ICCID is 19 or 20 digits, starts with 89 and ends with a Luhn check digit (a supplier's eSIM: the 18-22 digits it was sold with).",
    { errors: [{ field, code: "invalid_format", message: "is not a valid ICCID" }] },
  );
}

/** The partner's eSIM. Unknown and another partner's answer the same 404, detail included. */
export async function requirePartnerEsim(db: Executor, partner_id: string, iccid: string): Promise<EsimRow> {
  return foundEsim(await partnerEsim(db, partner_id, iccid), iccid);
}

/** What partnerEsim read, or that 404 when it found none. */
export function foundEsim(esim: EsimRow | null, iccid: string): EsimRow {
  if (!esim) {
    // A supplier-shaped ICCID without a check digit is accepted only when it is ours: else malformed.
    if (!isValidIccid(iccid)) throw invalidIccid("iccid");
    throw new ApiError("esim_not_found", `No eSIM ${iccid} for this partner.`);
  }
  return esim;
}
