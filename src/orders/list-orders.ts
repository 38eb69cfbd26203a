// Partner use case: the partner's orders, newest first, with an opaque keyset cursor.
import type { Kysely } from "kysely";
import { type Static, Type } from "typebox";
import type { Database } from "../db/schema.ts";
import { dayWindow } from "../shared/day-range.ts";
import { ApiError } from "../shared/errors.ts";
import type { OrderRow } from "./order.ts";
import { pageOfOrders, purchasesOf } from "./orders.sql.ts";
import { Order, renderOrder } from "./render-order.ts";
import { classifySearch, MAX_ROWS_EXAMINED } from "./search-query.ts";

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

// The cursor is the seq of the last order on the page, wrapped so clients treat it as opaque.
function encodeCursor(seq: number): string {
  return Buffer.from(`o1:${seq}`).toString("base64url");
}

function decodeCursor(cursor: string): number {
  const match = /^o1:(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match)
    throw new ApiError("invalid_request", "The cursor is not one this API returned.", {
      errors: [{ field: "cursor", code: "invalid_format", message: "is not a valid cursor" }],
    });
  return Number(match[1]);
}

export const OrderPage = Type.Object(
  {
    data: Type.Array(Order),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description:
        "Pass as `cursor` for the next page. Under filters no index narrows (status, type, dates, a `q` " +
        `prefix of 1-2 characters), a page examines at most ${MAX_ROWS_EXAMINED} orders: it may hold fewer than \`limit\`, ` +
        "even none, while `has_more` is true.",
    }),
  },
  { additionalProperties: false },
);

export type OrderPage = Static<typeof OrderPage>;

/** The filters of a list of orders as the API and the consoles take them; absent: not filtered. */
export type OrderListFilters = {
  client_reference: string | null;
  /** The search box: classified by classifySearch (400 when unusable). */
  q?: string | null;
  status?: OrderRow["status"] | null;
  type?: OrderRow["type"] | null;
  /** UTC days, both included (day-range.ts). */
  from?: string | null;
  to?: string | null;
};

export async function listOrders(
  db: Kysely<Database>,
  input: OrderListFilters & { partner_id: string; limit: number; cursor: string | null },
): Promise<OrderPage> {
  // Checked before the cursor so that a bad filter is named whatever page is asked for.
  const search = input.q == null ? null : classifySearch(input.q);
  const window = dayWindow({ from: input.from ?? null, to: input.to ?? null });
  const before_seq = input.cursor === null ? null : decodeCursor(input.cursor);
  // One extra row tells whether another page exists, without a count. The cursor is a seq, and
  // every filter is a condition on the row, so the next page under the same filters starts below
  // it whatever was added since. A page that examined its most rows (MAX_ROWS_EXAMINED) without
  // filling up continues below the last row it examined.
  const { rows, examined_to } = await pageOfOrders(db, {
    partner_id: input.partner_id,
    client_reference: input.client_reference,
    search,
    status: input.status ?? null,
    type: input.type ?? null,
    window,
    before_seq,
    limit: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  const purchases = await purchasesOf(
    db,
    page.map((order) => order.order_id),
  );
  const byOrder = Map.groupBy(purchases, (purchase) => purchase.order_id);
  const next_seq = rows.length > input.limit ? page.at(-1)!.seq : examined_to;
  return {
    data: page.map((order) => renderOrder(order, byOrder.get(order.order_id) ?? [])),
    has_more: next_seq !== null,
    next_cursor: next_seq === null ? null : encodeCursor(next_seq),
  };
}
