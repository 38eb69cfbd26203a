// The Luhn (mod 10) check digit that ends every ICCID (ITU-T E.118). The simulator uses it to
// mint ICCIDs from its inventory range; the API uses isValidIccid to reject a mistyped ICCID
// before it reaches the carrier, and the carrier adapter to reject a malformed carrier answer.

const DIGITS = /^\d+$/;
/** E.118: 18 or 19 digits plus the check digit; "89" is the telecom industry identifier. */
const ICCID = /^89\d{17,18}$/;

/** The digit that makes `digits` + it pass the Luhn check. `digits` must be 1 or more decimal digits. */
export function luhnCheckDigit(digits: string): number {
  if (!DIGITS.test(digits) || digits.length > 64) throw new Error(`luhnCheckDigit: not 1 to 64 digits`);
  // Double every second digit counting from the right, starting with the rightmost payload digit,
  // because the check digit appended after it takes the undoubled position.
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (index % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return (10 - (sum % 10)) % 10;
}

/** True when the last digit of `digits` is the Luhn check digit of the ones before it. */
export function hasValidLuhnDigit(digits: string): boolean {
  if (!DIGITS.test(digits) || digits.length < 2 || digits.length > 65) return false;
  return luhnCheckDigit(digits.slice(0, -1)) === digits.charCodeAt(digits.length - 1) - 48;
}

/** A 19- or 20-digit ICCID that starts with 89 and ends with a valid Luhn check digit. */
export function isValidIccid(value: string): boolean {
  return typeof value === "string" && ICCID.test(value) && hasValidLuhnDigit(value);
}

/** 18 to 22 digits: the Airalo SDK's own ICCID check ([NODE] SimService.isIccid, docs/suppliers/airalo.md §1). */
const SUPPLIER_ICCID = /^\d{18,22}$/;

/**
 * An ICCID as a wholesale supplier writes it: 18-22 digits, no check digit required. The ICCIDs of
 * Airalo's and eSIM Go's order examples fail the Luhn rule ("891000000000009125", "8944123456789012345"), so
 * the supplier adapters take what the supplier answered, and check only this shape.
 */
export function isSupplierIccid(value: string): boolean {
  return typeof value === "string" && SUPPLIER_ICCID.test(value);
}

/**
 * What a partner may name as an ICCID: a valid one (isValidIccid), or one shaped as a supplier's.
 * The second kind is only ever found (an eSIM of ours bought from a supplier): an unknown one is
 * answered as malformed, `invalidUnlessValid` (src/esims/iccid-param.ts), so a mistyped ICCID is
 * still 400 invalid_iccid and only a known supplier's ICCID gets through ("Luhn-valid or known").
 */
export function isIccidShaped(value: string): boolean {
  return isValidIccid(value) || isSupplierIccid(value);
}
