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
