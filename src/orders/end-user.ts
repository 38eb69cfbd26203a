// The end user's details on a submit or top-up: schemas, plus the checks a schema cannot make.
// Taken as people type them (issue 36): a phone with spaces, dashes, dots or parentheses is stored
// as E.164; an email's domain may be internationalized; a name must hold something visible.
import { domainToASCII } from "node:url";
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { Type } from "typebox";
import { ApiError, type FieldError } from "../shared/errors.ts";
import { EXPECTED_KEYWORD } from "../shared/schemas.ts";
import { canonicalTag, resolveLanguage } from "../travellers/translate.ts";

// No control characters, and at least one character that is not invisible: not only spaces, format
// characters (U+200B), combining marks, or the fillers that render as nothing (U+3164 HANGUL
// FILLER, U+2800 BRAILLE PATTERN BLANK). The schema and checkName say the same.
const VISIBLE = "[^\\p{Cc}\\p{Cf}\\p{Z}\\p{M}\\p{Default_Ignorable_Code_Point}\\u2800]";
const NAME_PATTERN = `^(?=.*${VISIBLE})[^\\x00-\\x1f\\x7f]+$`;
const VISIBLE_CHARACTER = new RegExp(VISIBLE, "u");
const NAME_WORDS = "a name with at least one visible letter, on one line";

// What a person types for an international number: + or 00, then digits, spaces, dashes, dots and
// parentheses. Letters (vanity numbers) and extensions are refused: E.164 has neither.
const PHONE_PATTERN = "^\\s*(\\+|00)[0-9 ().\\-]+\\s*$";
const PHONE_WORDS = "an international number such as +14155550123";
const MAX_PHONE_LENGTH = 32;

// One address without spaces, control characters or a second @; checkEmail reads it closer.
const EMAIL_PATTERN = "^\\s*[^\\s@\\x00-\\x1f\\x7f]+@[^\\s@\\x00-\\x1f\\x7f]+\\s*$";
const EMAIL_WORDS = "an email address such as ann@example.com";

function name(which: string) {
  return Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: NAME_PATTERN,
    description: `The end user's ${which} name: 1-100 characters, at least one of them visible.`,
    [EXPECTED_KEYWORD]: NAME_WORDS,
  });
}

export const EndUserFields = {
  email: Type.String({
    minLength: 3,
    maxLength: 254,
    pattern: EMAIL_PATTERN,
    description:
      "The end user's email address. The domain may be internationalized (`ann@bücher.example`), stored as " +
      "sent and mailed to in its ASCII form (`xn--bcher-kva.example`); the part before the @ must be ASCII " +
      "(letters, digits and ! # $ % & ' * + / = ? ^ _ ` { | } ~ - with single dots between): an " +
      "internationalized mailbox name is refused (`not_allowed`), as the service cannot promise its delivery.",
    [EXPECTED_KEYWORD]: EMAIL_WORDS,
  }),
  phone: Type.String({
    maxLength: MAX_PHONE_LENGTH,
    pattern: PHONE_PATTERN,
    description:
      "An international number: `+` (or `00`) and the country code, then the number; spaces, dashes, dots " +
      "and parentheses are welcome (`+1 (415) 555-0123`). Stored and answered in E.164 (`+14155550123`). " +
      "Must be a valid number.",
    [EXPECTED_KEYWORD]: PHONE_WORDS,
  }),
  first_name: name("first"),
  last_name: name("last"),
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
      errors: [{ field: "language", code: "invalid_format", message: "is not a BCP 47 language tag" }],
    });
  }
  return resolveLanguage(requested);
}

export type EndUser = { email: string; phone: string; first_name: string; last_name: string };

/** Phone numbers already read, and their E.164 form or null; the oldest is forgotten first. */
const MAX_CHECKED_PHONES = 10_000;
const checked_phones = new Map<string, string | null>();

/**
 * The number in E.164, or null when it is not a valid number anywhere. libphonenumber's full check,
 * remembered: its answer depends only on the string (the schema caps it at 32 characters) and the
 * metadata this process loaded, and it was the largest cost left in a retried submit whose body
 * differs from the one answered (completed-outcomes.ts), and in a partner's many orders for one
 * traveller.
 */
export function e164Of(typed: string): string | null {
  const known = checked_phones.get(typed);
  if (known !== undefined) return known;
  const e164 = readPhone(typed);
  if (checked_phones.size >= MAX_CHECKED_PHONES) {
    const oldest = checked_phones.keys().next().value;
    if (oldest !== undefined) checked_phones.delete(oldest);
  }
  checked_phones.set(typed, e164);
  return e164;
}

const PHONE_SHAPE = new RegExp(PHONE_PATTERN);

function readPhone(typed: string): string | null {
  if (typed.length > MAX_PHONE_LENGTH || !PHONE_SHAPE.test(typed)) return null;
  // Without a default country libphonenumber reads only "+": 00 is the international prefix of
  // most countries, and the only other form this service takes.
  const text = typed.trim().replace(/^00/, "+");
  const digits = text.replace(/[^0-9]/g, "").length;
  if (digits < 8 || digits > 15) return null;
  const parsed = parsePhoneNumberFromString(text);
  return parsed?.isValid() ? parsed.number : null;
}

// RFC 5322 dot-atom of ASCII: what every relay takes before the @.
const ASCII_LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const NON_ASCII = /[\u0080-\u{10ffff}]/u;
const DNS_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The address to store (trimmed, as typed), or the reason it is refused. */
export function checkEmail(field: string, typed: string): string {
  const email = typed.trim();
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (at > 0 && NON_ASCII.test(local)) {
    // SMTPUTF8 (RFC 6531): a relay without it refuses or mangles such an address, and the email
    // would be lost after the order succeeded. Refused here, before anything is charged.
    throw refused({
      field,
      code: "not_allowed",
      message:
        "must have an ASCII mailbox name before the @ (an internationalized one such as josé@example.com " +
        "cannot be delivered by this service yet); the domain may be internationalized",
    });
  }
  if (at <= 0 || local.length > 64 || !ASCII_LOCAL_PART.test(local) || asciiDomain(domain) === null) {
    throw refused({ field, code: "invalid_format", message: `must be ${EMAIL_WORDS}` });
  }
  return email;
}

/** The domain in ASCII (IDNA, `bücher.example` -> `xn--bcher-kva.example`), or null if it is not one. */
export function asciiDomain(domain: string): string | null {
  // Most domains are ASCII already: IDNA's mapping is only paid for the others.
  const ascii = (NON_ASCII.test(domain) ? domainToASCII(domain) : domain).toLowerCase();
  if (ascii === "" || ascii.length > 253) return null;
  const labels = ascii.split(".");
  if (labels.length < 2 || !labels.every((label) => DNS_LABEL.test(label))) return null;
  return /^[0-9]+$/.test(labels.at(-1)!) ? null : ascii;
}

function checkName(field: string, typed: string): string {
  const text = typed.trim();
  if (!VISIBLE_CHARACTER.test(text)) {
    throw refused({ field, code: "invalid_format", message: `must be ${NAME_WORDS}` });
  }
  return text;
}

function refused(error: FieldError): ApiError {
  return new ApiError("invalid_request", `${error.field} ${error.message}.`, { errors: [error] });
}

/**
 * The end user as stored: the phone in E.164, email and names trimmed. What the schema cannot say
 * (a number valid somewhere, a domain IDNA takes, a visible letter in a name) is checked here,
 * for the API and the console's forms alike.
 */
export function checkEndUser(input: EndUser): EndUser {
  return everyField((read) => ({
    email: read(() => checkEmail("email", input.email)),
    phone: read(() => checkPhone(input.phone)),
    first_name: read(() => checkName("first_name", input.first_name)),
    last_name: read(() => checkName("last_name", input.last_name)),
  }));
}

/**
 * Runs `checks`, each field's check through `read`, and throws one 400 naming every field refused:
 * every field is read, so one answer names each bad one, as the schema's answer does.
 */
function everyField<T>(checks: (read: (check: () => string) => string) => T): T {
  const errors: FieldError[] = [];
  const read = (check: () => string): string => {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof ApiError) || error.errors === undefined) throw error;
      errors.push(...error.errors);
      return "";
    }
  };
  const checked = checks(read);
  if (errors.length === 1) throw refused(errors[0]!);
  if (errors.length > 1) {
    const detail = `${errors.map((error) => `${error.field} ${error.message}`).join("; ")}.`;
    throw new ApiError("invalid_request", detail, { errors });
  }
  return checked;
}

function checkPhone(typed: string): string {
  const phone = e164Of(typed);
  if (phone === null)
    throw refused({ field: "phone", code: "invalid_format", message: `must be ${PHONE_WORDS}` });
  return phone;
}

/** A traveller of a group order (issue 34): who gets one of its eSIMs and its own email. */
export type Traveller = { email: string; first_name: string; last_name: string };

export const TravellerFields = Type.Object(
  {
    first_name: EndUserFields.first_name,
    last_name: EndUserFields.last_name,
    email: Type.String({
      ...EndUserFields.email,
      description: "The traveller's address: their eSIM's email.",
    }),
  },
  { additionalProperties: false },
);

/**
 * The travellers of a submit, checked as the end user's fields are (names trimmed, the address's
 * domain in its ASCII form to send to); one answer names every bad field (`travellers.2.email`).
 */
export function checkTravellers(travellers: readonly Traveller[]): Traveller[] {
  return everyField((read) =>
    travellers.map((traveller, i) => ({
      email: read(() => checkEmail(`travellers.${i}.email`, traveller.email)),
      first_name: read(() => checkName(`travellers.${i}.first_name`, traveller.first_name)),
      last_name: read(() => checkName(`travellers.${i}.last_name`, traveller.last_name)),
    })),
  );
}
