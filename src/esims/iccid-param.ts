// The ICCID path parameter of every /v1/esims/{iccid} route: a length bound only, so that any
// malformed ICCID, however long, reaches the use case and is 400 `invalid_iccid`, not a schema error.
import { Type } from "typebox";
import { isIccidShaped, isValidIccid } from "../lib/luhn.ts";
import { ApiError } from "../shared/errors.ts";

export const IccidParams = Type.Object({
  iccid: Type.String({
    maxLength: 200,
    description:
      "The eSIM's ICCID: 19 or 20 digits starting with 89, the last a Luhn check digit, or, for an eSIM " +
      "bought from a wholesale supplier, the 18-22 digits the supplier gave it (shown on the order). A " +
      "malformed one is 400 `invalid_iccid`; an unknown one, or another partner's, 404 `esim_not_found` " +
      "(400 `invalid_iccid` when it has no valid check digit either).",
  }),
});

/** 400 invalid_iccid unless a valid ICCID or one shaped as a supplier's (luhn.ts isIccidShaped). */
export function requireValidIccid(iccid: string): string {
  if (!isIccidShaped(iccid)) throw invalidIccid();
  return iccid;
}

function invalidIccid(): ApiError {
  return new ApiError(
    "invalid_iccid",
    "An ICCID is 19 or 20 digits, starts with 89 and ends with a Luhn check digit (a supplier's eSIM: the 18-22 digits it was sold with).",
    { errors: [{ field: "iccid", code: "invalid_format", message: "is not a valid ICCID" }] },
  );
}

/**
 * The error for an ICCID this partner has no eSIM under: 404 esim_not_found for a valid ICCID, and
 * 400 invalid_iccid for one without a check digit, accepted only because a supplier's eSIM of ours
 * could carry it ("Luhn-valid or known to us": a mistyped ICCID is still malformed).
 */
export function unknownEsim(iccid: string): ApiError {
  if (!isValidIccid(iccid)) return invalidIccid();
  return new ApiError("esim_not_found", `No eSIM ${iccid} for this partner.`);
}
