// Partner use case: GET /v1/catalog/changes, the changes to the packages this partner is offered,
// oldest first, from a cursor. The log is kept whole (a change is a few dozen bytes), so any cursor
// this deployment returned stays valid, and a feed read from its start (no `since`) begins with an
// `added` for every package offered when the feed began: it rebuilds the catalog.
import { type Static, Type } from "typebox";
import type { AppEnv } from "../config.ts";
import type { Executor } from "../db/executor.ts";
import { type SeqCursor, seqCursor } from "../shared/seq-cursor.ts";
import { pageOfChanges } from "./catalog-changes.sql.ts";
import { CatalogChange, renderChanges } from "./render-catalog-change.ts";

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 100;

/**
 * One tag per environment: a production cursor sent to the sandbox (or the reverse) is refused as
 * one this API did not return, never read as a position in another environment's log.
 */
const CURSORS: Record<AppEnv, SeqCursor> = {
  sandbox: seqCursor("cs1", "since"),
  production: seqCursor("cp1", "since"),
};

export const CatalogChangePage = Type.Object(
  {
    data: Type.Array(CatalogChange),
    has_more: Type.Boolean({ description: "True: ask again at once with `next_cursor`." }),
    next_cursor: Type.String({
      description:
        "Pass as `since` for the next page. Never null: on the last page it is the position to poll from later.",
    }),
  },
  { additionalProperties: false },
);
export type CatalogChangePage = Static<typeof CatalogChangePage>;

export async function listCatalogChanges(
  db: Executor,
  input: { app_env: AppEnv; partner_id: string; since: string | null; limit: number },
): Promise<CatalogChangePage> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_PAGE_SIZE) {
    throw new Error(`listCatalogChanges: limit ${input.limit} outside 1-${MAX_PAGE_SIZE}`);
  }
  const cursor = CURSORS[input.app_env];
  const after_seq = input.since === null ? 0 : cursor.decode(input.since);
  // One extra row tells whether another page exists, without a count.
  const rows = await pageOfChanges(db, { partner_id: input.partner_id, after_seq, limit: input.limit + 1 });
  const page = rows.slice(0, input.limit);
  const data = await renderChanges(
    db,
    page.map((change) => ({ partner_id: input.partner_id, change })),
  );
  return {
    data,
    has_more: rows.length > input.limit,
    next_cursor: cursor.encode(page.at(-1)?.seq ?? after_seq),
  };
}
