// The end user's details on a submit or top-up: schemas, plus the checks a schema cannot make.
import { isValidPhoneNumber } from "libphonenumber-js/max";
import { Type } from "typebox";
import { ApiError } from "../shared/errors.ts";
import { canonicalTag, resolveLanguage } from "../travellers/translate.ts";

// No control characters; at least one visible character.
const NAME_PATTERN = "^(?=.*\\S)[^\\x00-\\x1f\\x7f]+$";

export const EndUserFields = {
  email: Type.String({
    format: "email",
    minLength: 3,
    maxLength: 254,
    description: "The end user's email address.",
  }),
  phone: Type.String({
    pattern: "^\\+[1-9][0-9]{7,14}$",
    description:
      "E.164: `+`, country code and number, 8 to 15 digits (e.g. +14155550123). Must be a valid number.",
  }),
  first_name: Type.String({ minLength: 1, maxLength: 100, pattern: NAME_PATTERN }),
  last_name: Type.String({ minLength: 1, maxLength: 100, pattern: NAME_PATTERN }),
  client_reference: Type.Optional(
    Type.Union(
      [Type.String({ minLength: 1, maxLength: 128, pattern: "^[^\\x00-\\x1f\\x7f]+$" }), Type.Null()],
      {
        description:
          "Your own reference (booking or user id), 1-128 printable characters. Filter orders by it.",
      },
    ),
  ),
};

/** BCP 47's shape (language, then subtags); Intl.getCanonicalLocales checks the rest (checkLanguage). */
export const LANGUAGE_TAG_PATTERN = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,7}$";

/**
 * The language a traveller reads, resolved from a requested tag (translate.ts); a tag of the right
 * shape that is still not BCP 47 (`en-a`: a singleton with nothing after it) is refused.
 */
export function checkLanguage(requested: string | null): string {
  if (requested !== null && canonicalTag(requested) === null) {
    throw new ApiError("invalid_request", `language "${requested}" is not a BCP 47 language tag.`, {
      errors: [{ field: "language", message: "is not a BCP 47 language tag" }],
    });
  }
  return resolveLanguage(requested);
}

export type EndUser = { email: string; phone: string; first_name: string; last_name: string };

/** Phone numbers already checked, and their answer; the oldest is forgotten first. */
const MAX_CHECKED_PHONES = 10_000;
const checked_phones = new Map<string, boolean>();

/**
 * libphonenumber's full check, remembered: its answer depends only on the string (the schema caps it
 * at 16 characters) and the metadata this process loaded, and it was the largest cost left in a
 * retried submit whose body differs from the one answered (the same bytes are answered before any
 * check, completed-outcomes.ts), and in a partner's many orders for one traveller.
 */
function isValidPhone(phone: string): boolean {
  const known = checked_phones.get(phone);
  if (known !== undefined) return known;
  const valid = isValidPhoneNumber(phone);
  if (checked_phones.size >= MAX_CHECKED_PHONES) {
    const oldest = checked_phones.keys().next().value;
    if (oldest !== undefined) checked_phones.delete(oldest);
  }
  checked_phones.set(phone, valid);
  return valid;
}

/** A phone number that matches E.164's shape but is not a number anywhere is still refused. */
export function checkEndUser(input: EndUser): EndUser {
  if (!isValidPhone(input.phone)) {
    throw new ApiError("invalid_request", "The phone number is not a valid E.164 number.", {
      errors: [{ field: "phone", message: "is not a valid phone number in E.164 format" }],
    });
  }
  return {
    email: input.email.trim(),
    phone: input.phone,
    first_name: input.first_name.trim(),
    last_name: input.last_name.trim(),
  };
}
