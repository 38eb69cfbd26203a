// The opaque keyset cursor of a newest-first list: the `seq` of the last row of the page, tagged
// per list and base64url-wrapped so that clients treat it as opaque. A cursor this API did not
// return is 400 invalid_request, never a database error.
import { ApiError } from "./errors.ts";

export type SeqCursor = { encode(seq: number): string; decode(cursor: string): number };

/**
 * `tag`: two characters naming the list, so one list's cursor is refused by another. `field`: the
 * query parameter a refusal names.
 */
export function seqCursor(tag: string, field = "cursor"): SeqCursor {
  const pattern = new RegExp(`^${tag}:(\\d{1,15})$`);
  return {
    encode: (seq) => Buffer.from(`${tag}:${seq}`).toString("base64url"),
    decode(cursor) {
      const match = pattern.exec(Buffer.from(cursor, "base64url").toString("utf8"));
      if (!match)
        throw new ApiError("invalid_request", "The cursor is not one this API returned.", {
          errors: [{ field, code: "invalid_format", message: "is not a valid cursor" }],
        });
      return Number(match[1]);
    },
  };
}
