// Partner use case: the partner's eSIMs, newest first, with an opaque keyset cursor on `seq`, so
// pages stay stable while new eSIMs are sold.
import { type Static, Type } from "typebox";
import type { Executor } from "../db/executor.ts";
import type { EsimStatus } from "../db/schema.ts";
import { classifySearch, MAX_ROWS_EXAMINED } from "../orders/search-query.ts";
import { dayWindow } from "../shared/day-range.ts";
import { ApiError } from "../shared/errors.ts";
import { pageOfEsims } from "./esims.sql.ts";
import { Esim, renderEsim } from "./render-esim.ts";

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

// The cursor is the seq of the last eSIM on the page, wrapped so clients treat it as opaque.
function encodeCursor(seq: number): string {
  return Buffer.from(`e1:${seq}`).toString("base64url");
}

function decodeCursor(cursor: string): number {
  const match = /^e1:(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match)
    throw new ApiError("invalid_request", "The cursor is not one this API returned.", {
      errors: [{ field: "cursor", code: "invalid_format", message: "is not a valid cursor" }],
    });
  return Number(match[1]);
}

export const EsimPage = Type.Object(
  {
    data: Type.Array(Esim),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description:
        "Pass as `cursor` for the next page. Under filters no index narrows (status, type, dates, a `q` " +
        `prefix of 1-2 characters), a page examines at most ${MAX_ROWS_EXAMINED} eSIMs: it may hold fewer than \`limit\`, ` +
        "even none, while `has_more` is true.",
    }),
  },
  { additionalProperties: false },
);

export type EsimPage = Static<typeof EsimPage>;

export async function listEsims(
  db: Executor,
  input: {
    partner_id: string;
    client_reference: string | null;
    status: EsimStatus | null;
    /** The search box (search-query.ts); from/to: UTC days, both included (day-range.ts). */
    q?: string | null;
    from?: string | null;
    to?: string | null;
    limit: number;
    cursor: string | null;
  },
): Promise<EsimPage> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_PAGE_SIZE) {
    throw new Error(`listEsims: limit ${input.limit} outside 1-${MAX_PAGE_SIZE}`);
  }
  const search = input.q == null ? null : classifySearch(input.q);
  const window = dayWindow({ from: input.from ?? null, to: input.to ?? null });
  const before_seq = input.cursor === null ? null : decodeCursor(input.cursor);
  // One extra row tells whether another page exists, without a count.
  const { rows, examined_to } = await pageOfEsims(db, {
    partner_id: input.partner_id,
    client_reference: input.client_reference,
    status: input.status,
    search,
    window,
    before_seq,
    limit: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  // A page that examined its most rows without filling up continues below the last one examined.
  const next_seq = rows.length > input.limit ? page.at(-1)!.seq : examined_to;
  return {
    data: page.map((row) => renderEsim(row, row.bundles)),
    has_more: next_seq !== null,
    next_cursor: next_seq === null ? null : encodeCursor(next_seq),
  };
}
