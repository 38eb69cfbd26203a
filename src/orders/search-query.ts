// The support search box (`q` of GET /v1/profile/orders and /v1/esims): one string, classified once
// into the one thing it can be, so that each kind runs one index-bounded query (migration 0028)
// instead of an OR over every column that a million orders would answer with a scan.
import { Type } from "typebox";
import { isValidIccid } from "../lib/luhn.ts";
import { ApiError } from "../shared/errors.ts";
import { ORDER_ID } from "../shared/ids.ts";
import { NO_CONTROL_CHARACTERS } from "../shared/schemas.ts";

/** The longest `q`: an email address's limit (RFC 5321), longer than any id, ICCID or name prefix. */
export const MAX_SEARCH_LENGTH = 254;
/** The schemas' rule for text that reaches the database (a console form skips the schema). */
const WITHOUT_CONTROL_CHARACTERS = new RegExp(NO_CONTROL_CHARACTERS);
/**
 * U+10FFFF has no next code point: a prefix ending in it has no upper bound to scan to (see
 * startsWithLower, src/db/prefix-match.ts). A noncharacter no name or reference holds, so refused outright.
 */
const LAST_CODE_POINT = "\u{10FFFF}";

/**
 * The most rows of the partner's newest-first index one page examines when no index narrows its
 * filters (status, type, dates, a prefix shorter than MIN_INDEXED_PREFIX): such a page may come back
 * short, even empty, with a cursor to continue from the last row examined. Without it, `?to=` a day
 * before the first order would walk every order of the partner, up to the statement timeout.
 */
export const MAX_ROWS_EXAMINED = 10_000;
/**
 * The shortest prefix read through the prefix indexes. A shorter one matches a large share of the
 * orders (a letter: a twentieth or more), all of which the index read would fetch and sort to find the
 * newest; it is read newest first through the partner's index instead, as the plain list is,
 * examining at most MAX_ROWS_EXAMINED rows a page.
 */
export const MIN_INDEXED_PREFIX = 3;

export type SearchQuery =
  | { kind: "order_id"; order_id: string }
  | { kind: "iccid"; iccid: string }
  /** The whole address, compared case-insensitively (folded on both sides, src/db/prefix-match.ts). */
  | { kind: "email"; email: string }
  /** The start of a client reference or a last name, case-insensitive; `like`: its `like` pattern, escaped. */
  | { kind: "prefix"; prefix: string; like: string };

function invalid(message: string): ApiError {
  return new ApiError("invalid_request", `q ${message}.`, {
    errors: [{ field: "q", code: "invalid_format", message }],
  });
}

/** `%`, `_` and the escape character itself match literally in `like ... escape '\'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/**
 * What `q` is: an order id, an ICCID (19-20 digits, Luhn), an email address (it holds an `@`),
 * else the start of a client reference or last name. Surrounding spaces (a pasted value) do not
 * count. 400 invalid_request (field `q`) when empty, too long or holding control characters.
 */
export function classifySearch(raw: string): SearchQuery {
  const q = raw.trim();
  if (q.length === 0) throw invalid("is empty");
  if (q.length > MAX_SEARCH_LENGTH) throw invalid(`is longer than ${MAX_SEARCH_LENGTH} characters`);
  if (!WITHOUT_CONTROL_CHARACTERS.test(q) || q.includes(LAST_CODE_POINT))
    throw invalid("holds a character not allowed");
  if (ORDER_ID.test(q)) return { kind: "order_id", order_id: q };
  if (isValidIccid(q)) return { kind: "iccid", iccid: q };
  if (q.includes("@")) return { kind: "email", email: q };
  return { kind: "prefix", prefix: q, like: `${escapeLike(q)}%` };
}

export const SEARCH_DESCRIPTION =
  `Find a traveller's order: an order id (\`ord_...\`), an ICCID (19-20 digits with its Luhn check digit: ` +
  "the eSIM bought or topped up), a traveller's email address (anything holding `@`: the whole address, " +
  "case-insensitive), or else the start of a client reference or of a last name (case-insensitive; " +
  "`%` and `_` are plain characters). Spaces around it do not count. " +
  `1-${MAX_SEARCH_LENGTH} characters, no control characters.`;

/** The `q` query parameter: the schema bounds its length; classifySearch does the rest. */
export const searchParameter = Type.Optional(
  Type.String({ minLength: 1, maxLength: MAX_SEARCH_LENGTH, description: SEARCH_DESCRIPTION }),
);

/** Whether an index of migration 0028 (or a key) bounds this search to the rows it finds. */
export function searchIsIndexed(search: SearchQuery): boolean {
  return search.kind !== "prefix" || [...search.prefix].length >= MIN_INDEXED_PREFIX;
}
