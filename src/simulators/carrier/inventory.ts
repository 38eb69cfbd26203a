// What the simulated carrier hands out: ICCIDs from its inventory range, matching IDs and the
// SM-DP+ address a phone downloads the profile from.
import { randomInt } from "node:crypto";
import { luhnCheckDigit } from "../../lib/luhn.ts";

/** "89" (telecom) + "01" (country code 1) + "260" (issuer): the first 7 of the 19 ICCID digits. */
export const ICCID_PREFIX = "8901260";
/** The serial part: 11 digits, so prefix + serial + Luhn digit = 19 digits. */
const SERIAL_DIGITS = 11;
export const MAX_SERIAL = 10 ** SERIAL_DIGITS - 1;

export const SMDP_ADDRESS = "smdp.sandbox.esim.example";

// Uppercase letters and digits only: the characters an LPA activation code allows in a matching
// ID (SGP.22), and ones a person can type from a printed code.
const MATCHING_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const MATCHING_ID_GROUPS = 3;
const MATCHING_ID_GROUP_LENGTH = 5;

export function iccidFromSerial(serial: number): string {
  if (!Number.isSafeInteger(serial) || serial < 1 || serial > MAX_SERIAL) {
    throw new Error(`ICCID serial ${serial} is outside the inventory range 1..${MAX_SERIAL}`);
  }
  const payload = ICCID_PREFIX + String(serial).padStart(SERIAL_DIGITS, "0");
  return payload + String(luhnCheckDigit(payload));
}

/** `K2-XXXXX-XXXXX-XXXXX`: 36^15 (about 2^77) values, so a collision is not a practical concern. */
export function newMatchingId(): string {
  const groups: string[] = ["K2"];
  for (let group = 0; group < MATCHING_ID_GROUPS; group++) {
    let text = "";
    for (let index = 0; index < MATCHING_ID_GROUP_LENGTH; index++) {
      text += MATCHING_ID_ALPHABET[randomInt(MATCHING_ID_ALPHABET.length)];
    }
    groups.push(text);
  }
  return groups.join("-");
}
