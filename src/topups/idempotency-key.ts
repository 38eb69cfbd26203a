// The `Idempotency-Key` request header of POST /orders/submit-topup (IETF draft "The
// Idempotency-Key HTTP Header Field"): parsing, and the fingerprint of the request it names.
// Pure functions: what a key is and what "the same request" means, with no database in sight.
import { createHash } from "node:crypto";
import { ApiError } from "../shared/errors.ts";

export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
export const MAX_KEY_LENGTH = 255;
/** The longest header value that can carry a valid key: 255 characters, each escaped, in quotes. */
export const MAX_HEADER_LENGTH = 2 + 2 * MAX_KEY_LENGTH;
/** Bodies are flat today; a limit on recursion keeps a hostile body from costing a deep stack. */
const MAX_JSON_DEPTH = 32;

// 1-255 printable ASCII characters (0x20-0x7E), neither starting nor ending with a space: a
// space at either end is invisible in logs and easy to lose in a copy, so it cannot be part of a key.
const KEY = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

function malformed(message: string): ApiError {
  return new ApiError(
    "invalid_request",
    `The ${IDEMPOTENCY_KEY_HEADER} header is malformed: ${message}. Send 1-${MAX_KEY_LENGTH} printable ASCII ` +
      `characters, such as a UUID, bare or as a quoted structured-field string.`,
    { errors: [{ field: IDEMPOTENCY_KEY_HEADER, code: "invalid_format", message }] },
  );
}

/**
 * Decodes an RFC 8941 sf-string (`"..."`, with `\"` and `\\` as its only escapes) and returns its
 * content, or null when it is not one. Parameters (`"abc";p=1`) are not accepted.
 */
export function decodeSfString(value: string): string | null {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return null;
  let decoded = "";
  const last = value.length - 1;
  for (let index = 1; index < last; index++) {
    const char = value[index]!;
    if (char === "\\") {
      // An escape needs a following character that is not the closing quote, and only two exist.
      const next = value[index + 1]!;
      if (index + 1 >= last || (next !== '"' && next !== "\\")) return null;
      decoded += next;
      index++;
    } else if (char === '"' || char < " " || char > "~") {
      return null;
    } else {
      decoded += char;
    }
  }
  return decoded;
}

/**
 * Every value of the header as sent, from the raw header lines: Node joins repeated headers it does
 * not know with ", ", so `Idempotency-Key: a` and `Idempotency-Key: b` would read as the one key
 * `a, b`, and a retry with `a` alone would be a new top-up. More than one line is refused.
 */
export function idempotencyKeyHeader(raw_headers: readonly string[]): string | string[] | undefined {
  const values: string[] = [];
  for (let index = 0; index + 1 < raw_headers.length; index += 2) {
    if (raw_headers[index]!.toLowerCase() === "idempotency-key") values.push(raw_headers[index + 1]!);
  }
  return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
}

/**
 * The key a header value names, or null when there is no header. A value that starts with a double
 * quote is a structured-field string, so `"abc"` and `abc` name the same key; anything else is the
 * key itself. Throws 400 invalid_request (field `Idempotency-Key`) for a malformed value.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== "string") throw malformed("the header must be sent once");
  if (header.length > MAX_HEADER_LENGTH) throw malformed(`longer than ${MAX_HEADER_LENGTH} characters`);
  let key = header;
  if (header.startsWith('"')) {
    const decoded = decodeSfString(header);
    if (decoded === null) throw malformed("not a valid quoted structured-field string");
    key = decoded;
  }
  if (key.length === 0) throw malformed("empty");
  if (key.length > MAX_KEY_LENGTH) throw malformed(`longer than ${MAX_KEY_LENGTH} characters`);
  if (!KEY.test(key)) {
    throw malformed("only printable ASCII characters, not starting or ending with a space");
  }
  return key;
}

/** JSON with object keys sorted at every level: the same value always gives the same text. */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_JSON_DEPTH) throw new Error(`canonicalJson: deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item, depth + 1)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map(
        (key) =>
          `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key], depth + 1)}`,
      );
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * SHA-256 of method, route path and the canonical JSON of a body. Parsed, not raw: a retry that
 * reorders keys or changes whitespace is the same request; one that changes any value (even
 * `client_reference`) is another request, refused with 422 under the same key.
 */
export function requestFingerprint(method: string, path: string, body: unknown): Buffer {
  return createHash("sha256")
    .update(`${method.toUpperCase()}\n${path}\n${canonicalJson(body)}`, "utf8")
    .digest();
}

/**
 * The fingerprints of one request. Stored: that of the request as the service acts on it (its
 * normalised body, null fields left out, so an absent field and null are one request), which for a
 * body sent already normalised is exactly what the previous release stored, so old and new
 * processes agree during a rolling deploy. Also matched, never stored: that of the body as sent,
 * which is what the previous release stored, so its keys keep answering their requests. Two equal
 * hashes of either kind mean two bodies that normalise alike, so the fallback never lets another
 * request through. It can go once no key from before this release is left (IDEMPOTENCY_TTL_HOURS).
 */
export function requestFingerprints(
  method: string,
  path: string,
  body: unknown,
  normalised: Record<string, unknown>,
): { fingerprint: Buffer; legacy_fingerprint: Buffer } {
  const present = Object.fromEntries(Object.entries(normalised).filter(([, value]) => value !== null));
  return {
    fingerprint: requestFingerprint(method, path, present),
    legacy_fingerprint: requestFingerprint(method, path, body),
  };
}
