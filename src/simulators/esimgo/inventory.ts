// What the fake hands out: ICCIDs with a valid Luhn digit (ITU-T E.118), matching IDs, PINs and
// PUKs, and the SM-DP+ address. An activation code is `LPA:1$<smdpAddress>$<matchingId>`
// (SGP.22; [3P-OAS] rspUrl): the platform returns its two parts, never the joined string.
import { randomInt } from "node:crypto";
import { luhnCheckDigit } from "../../lib/luhn.ts";

/** "89" (telecom) + "44" (United Kingdom, where eSIM Go is) + "523" (the fake's issuer): 7 digits. */
const ICCID_PREFIX = "8944523";
const SERIAL_DIGITS = 11;
export const SMDP_ADDRESS = "rsp.sandbox.esimgo.example";

export function iccidFromSerial(serial: number): string {
  const payload = ICCID_PREFIX + String(serial).padStart(SERIAL_DIGITS, "0");
  if (payload.length !== ICCID_PREFIX.length + SERIAL_DIGITS)
    throw new Error(`ICCID serial ${serial} out of range`);
  return payload + String(luhnCheckDigit(payload));
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** `XXXX-XXXX-XXXX-XXXX`, the shape of the documented example ("A1B2-C3D4-E5F6-G7H8"). */
export function newMatchingId(): string {
  return Array.from({ length: 4 }, () =>
    Array.from({ length: 4 }, () => ALPHABET[randomInt(ALPHABET.length)]).join(""),
  ).join("-");
}

export function digits(count: number): string {
  return Array.from({ length: count }, () => String(randomInt(10))).join("");
}

export function activationCode(smdp_address: string, matching_id: string): string {
  return `LPA:1$${smdp_address}$${matching_id}`;
}
