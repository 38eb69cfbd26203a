// Schemas shared by several routes. Each route file holds its own request and response
// schemas; only the shapes every domain speaks (Money, Problem) live here.
import { type Static, type TSchema, Type } from "typebox";
import {
  ALTERNATE_STATUS,
  type AlternateCode,
  ApiError,
  ERROR_CODES,
  type ErrorCode,
  FIELD_ERROR_CODES,
} from "./errors.ts";
import { ID_BODY } from "./ids.ts";

/**
 * Text a partner sends that reaches the database (ids, filters, names): no control characters.
 * PostgreSQL refuses NUL in text outright, so without this a stray \u0000 would be a 500.
 */
export const NO_CONTROL_CHARACTERS = "^[^\\x00-\\x1f\\x7f]+$";

/**
 * The schema keyword holding what a field expects, in words that follow "must be": `an
 * international number such as +14155550123`. Read when a value is refused (field-errors.ts), so
 * a refusal never shows a pattern; declared to ajv as an annotation (app.ts) and kept in the
 * OpenAPI document, where a partner's tooling sees it too.
 */
export const EXPECTED_KEYWORD = "x-expected";

/** A shared pattern's wording, for a schema that uses it without its own `x-expected`. */
export const PATTERN_WORDS: Record<string, string> = {
  [NO_CONTROL_CHARACTERS]: "text without control characters (no line breaks, tabs or NUL)",
};

/**
 * One line of text with something in it: no control characters (a line break included) and not
 * only spaces. For names and an operator's reasons (audit log, statements, the partner's banner).
 */
const ONE_LINE_NOT_BLANK = "^[^\\x00-\\x1f\\x7f]*[^\\x00-\\x20\\x7f][^\\x00-\\x1f\\x7f]*$";
const ONE_LINE = new RegExp(ONE_LINE_NOT_BLANK);
PATTERN_WORDS[ONE_LINE_NOT_BLANK] = "one line of text, not only spaces, without control characters";

/** The longest reason an operator gives (settle, refund on behalf, wallet adjustment, suspension). */
export const MAX_REASON_LENGTH = 500;

/**
 * A one-line text field, 1 to `max_length` characters. The schema counts code points (ajv does, as
 * PostgreSQL's length() does); checkOneLine, which the use case runs, counts the same way after
 * trimming, so an emoji is one character in both and nothing the schema lets through is refused
 * for its length alone, except text that is blank once trimmed.
 */
export function OneLineText(description: string, max_length: number) {
  return Type.String({ minLength: 1, maxLength: max_length, pattern: ONE_LINE_NOT_BLANK, description });
}

/** An operator's reason: one line, 1 to MAX_REASON_LENGTH characters once trimmed. */
export function ReasonText(description: string) {
  return OneLineText(description, MAX_REASON_LENGTH);
}

/**
 * The text trimmed, or 400 invalid_request naming `field`: for the use cases, which also take the
 * console's forms (no schema in between). Lengths in code points, as OneLineText's schema counts.
 */
export function checkOneLine(field: string, value: string, max_length = MAX_REASON_LENGTH): string {
  const text = value.trim();
  const length = [...text].length;
  if (length === 0 || length > max_length || !ONE_LINE.test(text)) {
    const message = `must be 1 to ${max_length} characters once trimmed, on one line (no control characters)`;
    const code = length === 0 ? "too_short" : length > max_length ? "too_long" : "invalid_format";
    throw new ApiError("invalid_request", `${field} ${message}.`, { errors: [{ field, code, message }] });
  }
  return text;
}

export const Money = Type.Object(
  {
    amount_minor: Type.Integer({
      description: "Integer amount in the currency's minor unit (cents for USD).",
    }),
    currency: Type.String({
      pattern: "^[A-Z]{3}$",
      description: "ISO 4217 currency code.",
      [EXPECTED_KEYWORD]: "three capital letters (ISO 4217) such as USD",
    }),
  },
  { additionalProperties: false, description: "An amount of money. Never a float." },
);

export type MoneyBody = Static<typeof Money>;

export function money(amount_minor: number, currency: string): MoneyBody {
  return { amount_minor, currency };
}

export const Problem = Type.Object(
  {
    type: Type.String({ description: "A link to the documentation of `code`." }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String({ description: "For people; may change. Match on `code`, not on this." }),
    code: Type.String({ enum: Object.keys(ERROR_CODES), description: "Stable, documented error code." }),
    request_id: Type.String(),
    order_id: Type.Optional(
      Type.String({
        description:
          "On `request_in_progress` and `carrier_unavailable`: the order whose outcome is not known yet. " +
          "Its money is held, not spent; poll GET /v1/orders/{orderID} or retry with the same key.",
      }),
    ),
    errors: Type.Optional(
      Type.Array(
        Type.Object(
          {
            field: Type.String(),
            // Described once, in the guide's "Field errors" (api-guide.ts): this schema is repeated
            // in every problem response of the document.
            code: Type.String({ enum: Object.keys(FIELD_ERROR_CODES) }),
            message: Type.String(),
          },
          { additionalProperties: false },
        ),
        {
          description:
            "On validation failures: one entry per bad field, `{field, code, message}` (see Field errors).",
        },
      ),
    ),
  },
  { additionalProperties: false, description: "RFC 9457 problem details (application/problem+json)." },
);

/** The problem+json responses of a route, keyed by status, each listing the codes it can carry. */
/** What a partner may rely on for some codes, written into the OpenAPI description of their status. */
const CODE_NOTES: Partial<Record<ErrorCode, string>> = {
  // Issue 31: what an API key may do is set when it is issued (POST /admin/partners/{partner_id}/api-keys).
  insufficient_scope:
    "`insufficient_scope`: the API key is `read_only` and this request writes; nothing was changed.",
  ip_not_allowed:
    "`ip_not_allowed`: the API key has `allowed_ips` and this request came from another address; nothing was changed.",
  carrier_error:
    "`carrier_error`: final for this cart or Idempotency-Key, nothing charged; `detail` is always " +
    '"The carrier declined order <orderID>. Nothing was charged." (the carrier\'s own words are never shown).',
  service_unavailable:
    "`service_unavailable`: no database connection was free in time, or the database rolled the transaction back " +
    "to settle a conflict with a concurrent one or cancelled a statement past its timeout; nothing of it was saved, " +
    "retry after `Retry-After`.",
};

/** A code answered with its ALTERNATE_STATUS on this route (src/shared/errors.ts). */
export type Alternate = { code: AlternateCode; alternate: true };
export function alternate(code: AlternateCode): Alternate {
  return { code, alternate: true };
}

export function errorResponses(...listed: Array<ErrorCode | Alternate>): Record<number, ProblemResponse> {
  const codes = listed.filter((code): code is ErrorCode => typeof code === "string");
  const alternates = listed.filter((code): code is Alternate => typeof code !== "string");
  const all: ErrorCode[] = [
    "invalid_request",
    "payload_too_large",
    "unsupported_media_type",
    "rate_limited",
    "internal_error",
    // Any route that reaches the database may find its pool exhausted (src/shared/database-busy.ts).
    "service_unavailable",
    ...codes,
  ];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(all)) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const { code } of alternates) {
    const status = ALTERNATE_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<number, ProblemResponse> = {};
  for (const [status, statusCodes] of byStatus) {
    const notes = statusCodes.flatMap((code) => CODE_NOTES[code] ?? []);
    const description = [
      `Problem details. Codes: ${statusCodes.map((c) => `\`${c}\``).join(", ")}.`,
      ...notes,
    ].join(" ");
    responses[status] = {
      description,
      content: {
        "application/problem+json": {
          schema: Type.Object(Problem.properties, {
            additionalProperties: false,
            "x-error-codes": statusCodes,
          }),
        },
      },
    };
  }
  return responses;
}

type Security = Array<Record<string, string[]>>;
type ProblemResponse = { description: string; content: { "application/problem+json": { schema: TSchema } } };

/** The `client_reference` filter of a partner's lists (orders, eSIMs). */
export const ClientReferenceFilter = Type.Optional(
  Type.String({ minLength: 1, maxLength: 128, pattern: NO_CONTROL_CHARACTERS }),
);

/** `limit` (1-100) and `cursor` of a newest-first list, as query parameters. */
export function pageParameters(default_page_size: number) {
  return {
    limit: Type.Optional(
      Type.String({
        pattern: "^(100|[1-9][0-9]?)$",
        description: `1-100, default ${default_page_size}.`,
        [EXPECTED_KEYWORD]: "a whole number from 1 to 100",
      }),
    ),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  };
}

/** The page size a list was asked for, or its default. */
export function pageSize(limit: string | undefined, default_page_size: number): number {
  return limit === undefined ? default_page_size : Number(limit);
}

export const PARTNER_SECURITY: Security = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
export const ADMIN_SECURITY: Security = [{ adminToken: [] }];
/** What every operator route can answer besides its own codes. */
export const ADMIN_ERRORS = ["unauthorized", "not_found"] as const;

/** A prefixed id in a path (newId in ids.ts), e.g. `ptr_...`. */
export const PrefixedId = (prefix: string) =>
  Type.String({
    pattern: `^${prefix}_${ID_BODY}$`,
    maxLength: 80,
    [EXPECTED_KEYWORD]: `an id starting ${prefix}_`,
  });
