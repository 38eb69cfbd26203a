// Phase 1 of every order (design.md step 1): the order row as pending, leased to the request
// creating it, in the caller's transaction, which also holds the funds. The row is its own
// outbox: if the request dies, the resolver sweep (resolve-pending-orders.ts) finds it once
// RESOLVE_AFTER_MS have passed and its lease has expired, or at once when the process holding the
// lease stops beating (a crash, liveness.ts). No job row: it exists iff the order does.
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import type { AppContext } from "../shared/context.ts";
import { leaseClaim } from "./lease.ts";
import type { NewOrder, OrderRow } from "./order.ts";
import { insertPendingOrderAhead } from "./orders.sql.ts";

/**
 * Inserts the order as pending, sent with the transaction's next statement or its COMMIT (a
 * round trip fewer; nothing a caller does needs the row sooner): `order()` answers the order as
 * stored once that statement has been answered, or null when its cart already has an order.
 */
export async function createPendingOrderAhead(
  ctx: AppContext,
  trx: Transaction<Database>,
  order: NewOrder,
): Promise<{ order(): Promise<OrderRow | null> }> {
  return insertPendingOrderAhead(trx, order, {
    ...leaseClaim(ctx),
    resolve_after_ms: ctx.config.resolve_after_ms,
  });
}
