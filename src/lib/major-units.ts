// Money in a currency's major unit as text (`-3.50` USD, `-350` JPY, `-3.500` KWD), for what people
// read (the statement's CSV and PDF, the CLI's output; the console's amount forms take the
// exponent). The exponent is the currency's ISO 4217 minor unit as ICU knows it; the digits come
// from the integer, never from float division. The one place the exponent is worked out.

const digitsCache = new Map<string, number>();

/** The currency's minor-unit exponent (USD 2, JPY 0, KWD 3). */
export function minorUnitDigits(currency: string): number {
  let digits = digitsCache.get(currency);
  if (digits === undefined) {
    const format = new Intl.NumberFormat("en-US", { style: "currency", currency });
    digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    digitsCache.set(currency, digits);
  }
  return digits;
}

/** Minor units as a signed decimal in major units, no thousands separator: -3.50 for -350 USD. */
export function majorUnits(amount_minor: number, currency: string): string {
  const digits = minorUnitDigits(currency);
  const sign = amount_minor < 0 ? "-" : "";
  const text = String(Math.abs(amount_minor)).padStart(digits + 1, "0");
  return digits === 0 ? `${sign}${text}` : `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}
