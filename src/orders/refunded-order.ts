// What a refund (src/refunds/) needs of an order: the order row-locked (every step of a refund that
// writes takes it first, so concurrent refunds of one order take turns), the move completed ->
// refunded, and the Order as the API renders it.
import type { Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import type { OrderRow } from "./order.ts";
import {
  clearRefundRequested,
  hasOpenTopUp,
  hasPendingTopUp,
  lockCompletedTopUpsOf,
  lockOrder,
  markRefunded,
  markRefundRequested,
  orderById,
  purchasesOf,
} from "./orders.sql.ts";
import { type OrderBody, renderOrder } from "./render-order.ts";

/** The order, locked until the transaction ends; with `partner_id`, only that partner's. */
export async function lockOrderForRefund(
  trx: Transaction<Database>,
  order_id: string,
  partner_id?: string,
): Promise<OrderRow | null> {
  return lockOrder(trx, order_id, partner_id);
}

/**
 * A new eSIM's top-up orders for its refund, called with the eSIM row locked: whether one is still
 * pending (its outcome at the carrier is not known here yet), else the completed ones, locked. The
 * eSIM lock does not keep every completion out: one whose eSIM is already due for a pull writes
 * nothing to it (sync-esims.ts: dueNow) and may commit while this runs. So pending is asked first,
 * each statement with a fresh snapshot: a top-up not pending then is final, and the completed ones
 * read after include it. Asked the other way round, a top-up committing in between (the read of the
 * completed ones waiting on another top-up's row, say) was neither: left charged on a cancelled eSIM.
 */
export async function lockTopUpsForRefund(
  trx: Transaction<Database>,
  iccid: string,
): Promise<{ completed: OrderRow[]; pending: boolean }> {
  if (await hasPendingTopUp(trx, iccid)) return { completed: [], pending: true };
  return { completed: await lockCompletedTopUpsOf(trx, iccid), pending: false };
}

/**
 * Whether the eSIM has a top-up not refunded (pending or completed): a supplier's eSIM is not
 * refunded then (refund-rules.ts, `topups_not_refunded`). Call with the eSIM's order locked.
 */
export async function hasUnrefundedTopUps(trx: Transaction<Database>, iccid: string): Promise<boolean> {
  return hasOpenTopUp(trx, iccid);
}

/** The order as it stands, whoever's it is (the refund sweep finishes any partner's refund). */
export async function orderOf(db: Executor, order_id: string): Promise<OrderRow | null> {
  return orderById(db, order_id);
}

/**
 * A refund is under way (its intent just written): the Order's `refund_requested_at` says so while
 * its status still reads `completed`. Call with the order locked.
 */
export async function markOrderRefundRequested(trx: Transaction<Database>, order_id: string): Promise<void> {
  await markRefundRequested(trx, order_id);
}

/** The carrier refused the refund: no refund under way any more. Call with the order locked. */
export async function clearOrderRefundRequested(trx: Transaction<Database>, order_id: string): Promise<void> {
  await clearRefundRequested(trx, order_id);
}

/** completed -> refunded, once; null when the order was not completed (nothing written). */
export async function markOrderRefunded(
  trx: Transaction<Database>,
  order_id: string,
): Promise<OrderRow | null> {
  return markRefunded(trx, order_id);
}

/** The Order body of the contract, with its purchases. */
export async function orderBody(db: Executor, order: OrderRow): Promise<OrderBody> {
  return renderOrder(order, await purchasesOf(db, [order.order_id]));
}
