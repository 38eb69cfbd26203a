// The one place where schema violations become words: ajv's errors, several per field (a union
// answers once per branch, a field can break its length and its pattern at once), collapse to one
// entry per field with a stable code (FIELD_ERROR_CODES) and a message a person can act on. A
// pattern is never shown: a field whose form is a pattern says it in words with `x-expected`.
import type { FieldError, FieldErrorCode } from "./errors.ts";
import { EXPECTED_KEYWORD, PATTERN_WORDS } from "./schemas.ts";

/** An ajv error object, with `parentSchema` (ajv's `verbose` option). */
export type AjvError = {
  instancePath?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  parentSchema?: Record<string, unknown>;
};

/** Entries in one answer at most: a 64 KiB body of unknown fields would otherwise list thousands. */
export const MAX_FIELD_ERRORS = 20;
/** ajv errors read at most (allErrors lists them all); the first ones name the first fields. */
const MAX_AJV_ERRORS = 1_000;

type Judged = FieldError & { rank: number; types?: string[] };

/** One entry per field, in the order fields were first refused. */
export function fieldErrorsOf(validation: readonly AjvError[], context: string): FieldError[] {
  const by_field = new Map<string, Judged>();
  for (const item of validation.slice(0, MAX_AJV_ERRORS)) {
    const judged = judge(item, context);
    const earlier = by_field.get(judged.field);
    if (earlier === undefined) {
      if (by_field.size < MAX_FIELD_ERRORS) by_field.set(judged.field, judged);
    } else if (earlier.code === "invalid_type" && judged.code === "invalid_type") {
      // A union's branches each say which type they wanted: one message naming them all.
      const types = [...new Set([...(earlier.types ?? []), ...(judged.types ?? [])])];
      by_field.set(judged.field, { ...earlier, types, message: typeMessage(types) });
    } else if (judged.rank < earlier.rank) {
      by_field.set(judged.field, judged);
    }
  }
  return [...by_field.values()].map(({ field, code, message }) => ({ field, code, message }));
}

/** "phone must be ...; email is required." : the entries as one sentence for `detail`. */
export function detailOf(errors: readonly FieldError[], context: string): string {
  if (errors.length === 0) return `The ${context} is not valid.`;
  const shown = errors.slice(0, 3).map((error) => `${error.field} ${error.message}`);
  const more = errors.length > 3 ? `; and ${errors.length - 3} more (see errors)` : "";
  return `${shown.join("; ")}${more}.`;
}

function fieldName(item: AjvError, context: string): string {
  const path = (item.instancePath ?? "").replace(/^\//, "").replaceAll("/", ".");
  const params = item.params ?? {};
  const child =
    item.keyword === "required"
      ? params.missingProperty
      : item.keyword === "additionalProperties"
        ? params.additionalProperty
        : undefined;
  if (typeof child === "string") {
    const name = child.slice(0, 64);
    return path ? `${path}.${name}` : name;
  }
  return path || context;
}

/** Lower ranks say more: a length or a form beats "must be a string" from a union's other branch. */
function judge(item: AjvError, context: string): Judged {
  const field = fieldName(item, context);
  const params = item.params ?? {};
  const schema = item.parentSchema ?? {};
  const entry = (code: FieldErrorCode, message: string, rank: number): Judged => ({
    field,
    code,
    message,
    rank,
  });
  switch (item.keyword) {
    case "required":
      return entry("required", "is required", 0);
    case "additionalProperties":
      return entry("unknown_field", "is not a known field", 0);
    case "minLength":
      return params.limit === 1
        ? entry("too_short", "must not be empty", 1)
        : entry("too_short", `must be at least ${String(params.limit)} characters`, 1);
    case "maxLength":
      return entry("too_long", `must be at most ${String(params.limit)} characters`, 1);
    case "minItems":
      return entry("too_short", `must list at least ${String(params.limit)} items`, 1);
    case "maxItems":
      return entry("too_long", `must list at most ${String(params.limit)} items`, 1);
    case "minProperties":
      return entry("too_short", `must have at least ${String(params.limit)} fields`, 1);
    case "maxProperties":
      return entry("too_long", `must have at most ${String(params.limit)} fields`, 1);
    case "pattern":
    case "format":
      return entry("invalid_format", formMessage(schema, params.format), 2);
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return entry("out_of_range", rangeMessage(schema), 2);
    case "enum":
      return entry("not_allowed", enumMessage(params.allowedValues), 2);
    case "const":
      return entry("not_allowed", `must be ${JSON.stringify(params.allowedValue)?.slice(0, 80)}`, 2);
    case "uniqueItems":
      return entry("not_allowed", "must not list the same item twice", 2);
    case "type": {
      const types = String(params.type ?? "").split(",");
      return { ...entry("invalid_type", typeMessage(types), 4), types };
    }
    case "anyOf":
    case "oneOf":
      return entry("invalid_format", expected(schema) ?? "is not in any of the forms this field takes", 5);
    default:
      return entry("invalid_format", expected(schema) ?? "is not valid", 3);
  }
}

function expected(schema: Record<string, unknown>): string | null {
  const words = schema[EXPECTED_KEYWORD];
  return typeof words === "string" ? `must be ${words}` : null;
}

const FORMAT_WORDS: Record<string, string> = {
  date: "a date such as 2026-03-01",
  "date-time": "a timestamp such as 2026-11-22T10:00:00Z",
  email: "an email address such as ann@example.com",
  uri: "an absolute URL such as https://example.com/path",
  url: "an absolute URL such as https://example.com/path",
  uuid: "a UUID",
};

function formMessage(schema: Record<string, unknown>, format: unknown): string {
  const words = expected(schema);
  if (words !== null) return words;
  if (typeof format === "string" && FORMAT_WORDS[format]) return `must be ${FORMAT_WORDS[format]}`;
  const pattern = schema.pattern;
  if (typeof pattern === "string" && PATTERN_WORDS[pattern]) return `must be ${PATTERN_WORDS[pattern]}`;
  // Never the pattern itself: it is for machines, and names nothing a person can act on.
  return "is not in the form this field takes (see its description in the API reference)";
}

function rangeMessage(schema: Record<string, unknown>): string {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
  if (typeof minimum === "number" && typeof maximum === "number")
    return `must be from ${minimum} to ${maximum}`;
  if (typeof minimum === "number") return `must be at least ${minimum}`;
  if (typeof maximum === "number") return `must be at most ${maximum}`;
  if (typeof exclusiveMinimum === "number") return `must be greater than ${exclusiveMinimum}`;
  if (typeof exclusiveMaximum === "number") return `must be less than ${exclusiveMaximum}`;
  return "is out of range";
}

function enumMessage(values: unknown): string {
  if (!Array.isArray(values) || values.length > 12) return "is not one of the values this field takes";
  return `must be one of ${values.map((value) => JSON.stringify(value)).join(", ")}`;
}

const TYPE_WORDS: Record<string, string> = {
  string: "text",
  integer: "a whole number",
  number: "a number",
  boolean: "true or false",
  object: "an object",
  array: "a list",
  null: "null",
};

function typeMessage(types: readonly string[]): string {
  return `must be ${types.map((type) => TYPE_WORDS[type] ?? type).join(" or ")}`;
}
