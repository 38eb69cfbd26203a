// Checks of command-line values, before anything touches the database. Each says what was expected,
// because an operator typing at a terminal is the reader; each bounds its input.
import { MAX_AMOUNT_MINOR } from "../ledger/accounts.ts";
import { PARTNER_ID } from "../shared/ids.ts";
import { CliError } from "./command.ts";

// The shapes of src/shared/ids.ts (prefix + 22 base64url characters), with the admin API's slack.
const KEY_ID = /^key_[A-Za-z0-9_-]{16,64}$/;
/** The admin API's rule for a credit reference: 1-128 printable ASCII characters, no spaces. */
const REFERENCE = /^[\x21-\x7e]{1,128}$/;
/** partners.name: 1-200 characters (migration 0001). */
const MAX_PARTNER_NAME_CHARS = 200;
const CONTROL_CHARACTERS = /\p{Cc}/u;

function invalid(message: string): CliError {
  return new CliError("invalid_argument", message);
}

export function partnerId(value: string): string {
  if (!PARTNER_ID.test(value)) throw invalid(`"${shorten(value)}" is not a partner id (ptr_...)`);
  return value;
}

export function keyId(value: string): string {
  if (!KEY_ID.test(value)) throw invalid(`"${shorten(value)}" is not an API key id (key_...)`);
  return value;
}

export function partnerName(value: string): string {
  const name = value.trim();
  if (name === "") throw invalid("the partner name is empty");
  if (name.length > MAX_PARTNER_NAME_CHARS)
    throw invalid(`the partner name is longer than ${MAX_PARTNER_NAME_CHARS} characters`);
  if (CONTROL_CHARACTERS.test(name)) throw invalid("the partner name contains control characters");
  return name;
}

/**
 * Whole minor units only ("1250" is 12.50 USD). A decimal point, a sign or an exponent is refused
 * rather than interpreted: "12.5" could mean 12.50 or 1250 minor units, and money is never guessed.
 */
export function amountMinor(value: string, currency: string): number {
  const example = `e.g. 1250 for 12.50 ${currency}`;
  if (!/^\d{1,15}$/.test(value)) {
    throw new CliError(
      "invalid_amount",
      `amount_minor must be a positive whole number of minor units (${example}); got "${shorten(value)}"`,
    );
  }
  const amount = Number(value);
  if (amount < 1 || amount > MAX_AMOUNT_MINOR) {
    throw new CliError(
      "invalid_amount",
      `amount_minor must be a whole number from 1 to ${MAX_AMOUNT_MINOR} (${example}); got ${value}`,
    );
  }
  return amount;
}

export function creditReference(value: string | undefined): string {
  if (value === undefined) throw invalid("--reference <ref> is required: the same reference credits once");
  if (!REFERENCE.test(value))
    throw invalid("--reference must be 1 to 128 printable ASCII characters without spaces");
  return value;
}

/** `--limit N` of list commands: a whole number from 1 to `max`, `fallback` when absent. */
export function limit(value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const parsed = /^\d{1,7}$/.test(value) ? Number(value) : Number.NaN;
  if (!(parsed >= 1 && parsed <= max)) throw invalid(`--limit must be a whole number from 1 to ${max}`);
  return parsed;
}

/** Echoed values are cut short: an error message is not a place to repeat a pasted megabyte. */
function shorten(value: string): string {
  const printable = value.replace(/\p{Cc}/gu, "?");
  return printable.length > 40 ? `${printable.slice(0, 40)}…` : printable;
}
