// What other parts of the service read about orders in bulk: totals and statuses for the ledger
// audit (wallet/audit-ledger.ts), pending counts for /metrics, and which orders a carrier callback
// names are still waiting for the carrier's answer (esims/carrier-callback.route.ts, through the server).
import type { Executor } from "../db/executor.ts";
import { unreconciledCount } from "./carrier-checks.sql.ts";
import type { OrderRow } from "./order.ts";
import {
  chargedTotals,
  type OrderStatementFacts,
  type PendingOrderStats,
  pendingAmong,
  pendingOrderStats,
  statementFactsOf,
  statusesAfter,
} from "./orders.sql.ts";

export type { OrderStatementFacts };

/**
 * Per currency: what the orders that were charged cost (completed, or refunded since: what the
 * operator's revenue received) and what the refunded ones among them cost (what it paid back).
 */
export async function chargedOrderTotals(
  db: Executor,
): Promise<Map<string, { charged_minor: number; refunded_minor: number }>> {
  const rows = await chargedTotals(db);
  return new Map(rows.map((row) => [row.currency, row]));
}

/** Up to `limit` orders after `after_seq` (0: from the first), in insertion order. */
export async function orderStatusPage(
  db: Executor,
  after_seq: number,
  limit: number,
): Promise<Array<Pick<OrderRow, "seq" | "order_id" | "status" | "total_minor">>> {
  return statusesAfter(db, after_seq, limit);
}

/** Pending orders, oldest first, with their age and whether they are past the give-up age. */
export { listPendingOrders, type PendingOrderSummary } from "./orders.sql.ts";

/** How many orders are pending and how old the oldest is, cheaply (a partial index). */
export async function pendingOrders(
  db: Executor,
  give_up_hours: number,
): Promise<PendingOrderStats & { carrier_unreconciled: number }> {
  const [stats, carrier_unreconciled] = await Promise.all([
    pendingOrderStats(db, give_up_hours),
    unreconciledCount(db),
  ]);
  return { ...stats, carrier_unreconciled };
}

/**
 * Each named order's type and what it was for (client reference, ICCID, package), for the wallet's
 * statement: it says purchase or top-up, and its CSV names the order's own references.
 */
export async function orderStatementFacts(
  db: Executor,
  order_ids: string[],
): Promise<Map<string, OrderStatementFacts>> {
  const rows = await statementFactsOf(db, order_ids);
  return new Map(rows.map((row) => [row.order_id, row]));
}

/** The orders among `order_ids` that are still pending; at most as many as were named. */
export function pendingOrderIds(db: Executor, order_ids: readonly string[]): Promise<string[]> {
  return pendingAmong(db, order_ids);
}
