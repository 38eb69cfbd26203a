// What other parts of the service read about orders in bulk: totals and statuses for the ledger
// audit (wallet/audit-ledger.ts), pending counts for /metrics.
import type { Executor } from "../db/executor.ts";
import type { OrderRow } from "./order.ts";
import {
  completedTotals,
  type PendingOrderStats,
  pendingOrderStats,
  statusesAfter,
  typesOf,
} from "./orders.sql.ts";

/** What completed orders cost, per currency: what the operator's revenue must have received. */
export async function completedOrderTotals(db: Executor): Promise<Map<string, number>> {
  const rows = await completedTotals(db);
  return new Map(rows.map((row) => [row.currency, row.total_minor]));
}

/** Up to `limit` orders after `after_seq` (0: from the first), in insertion order. */
export async function orderStatusPage(
  db: Executor,
  after_seq: number,
  limit: number,
): Promise<Array<Pick<OrderRow, "seq" | "order_id" | "status">>> {
  return statusesAfter(db, after_seq, limit);
}

/** Pending orders, oldest first, with their age and whether they are past the give-up age. */
export { listPendingOrders, type PendingOrderSummary } from "./orders.sql.ts";

/** How many orders are pending and how old the oldest is, cheaply (a partial index). */
export async function pendingOrders(db: Executor, give_up_hours: number): Promise<PendingOrderStats> {
  return pendingOrderStats(db, give_up_hours);
}

/** Each named order's type, for the wallet's statement (which says purchase or top-up). */
export async function orderTypes(db: Executor, order_ids: string[]): Promise<Map<string, "esim" | "topup">> {
  const rows = await typesOf(db, order_ids);
  return new Map(rows.map((row) => [row.order_id, row.type]));
}
