// An inventory range as operators hand it over: the first ICCID (with its Luhn digit) and a count.
// The payload (every digit but the last) counts up; each ICCID gets its own check digit.
import { isValidIccid, luhnCheckDigit } from "./luhn.ts";

/** ICCIDs per import: a bound on one statement and one command, not on the inventory. */
export const MAX_RANGE_COUNT = 100_000;

export function iccidRange(first: string, count: number): string[] {
  if (!isValidIccid(first))
    throw new Error(`${first} is not a valid ICCID (89..., 19 or 20 digits, Luhn digit)`);
  if (!Number.isInteger(count) || count < 1 || count > MAX_RANGE_COUNT) {
    throw new Error(`count must be 1 to ${MAX_RANGE_COUNT}, got ${count}`);
  }
  const width = first.length - 1;
  const start = BigInt(first.slice(0, -1));
  const iccids: string[] = [];
  for (let offset = 0; offset < count; offset++) {
    const payload = (start + BigInt(offset)).toString().padStart(width, "0");
    if (payload.length !== width || !payload.startsWith("89"))
      throw new Error("the range runs past its prefix");
    iccids.push(`${payload}${luhnCheckDigit(payload)}`);
  }
  return iccids;
}
