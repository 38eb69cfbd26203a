// The ICCID path parameter of every /v1/esims/{iccid} route: a length bound only, so that any
// malformed ICCID, however long, reaches the use case and is 400 `invalid_iccid`, not a schema error.
import { Type } from "typebox";
import { isValidIccid } from "../lib/luhn.ts";
import { ApiError } from "../shared/errors.ts";

export const IccidParams = Type.Object({
  iccid: Type.String({
    maxLength: 200,
    description:
      "The eSIM's ICCID: 19 or 20 digits starting with 89, the last a Luhn check digit. A malformed one is " +
      "400 `invalid_iccid`; an unknown one, or another partner's, 404 `esim_not_found`.",
  }),
});

/** 400 invalid_iccid unless 19-20 digits starting 89 with a valid Luhn check digit. */
export function requireValidIccid(iccid: string): string {
  if (!isValidIccid(iccid)) {
    throw new ApiError(
      "invalid_iccid",
      "An ICCID is 19 or 20 digits, starts with 89 and ends with a Luhn check digit.",
      { errors: [{ field: "iccid", code: "invalid_format", message: "is not a valid ICCID" }] },
    );
  }
  return iccid;
}
