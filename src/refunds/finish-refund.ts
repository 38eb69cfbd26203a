// The refund's own transaction, once the carrier has cancelled: the wallet credited with a new
// posted transfer naming the order (never more than was paid, once: ledger/transfers.ts), the order
// `refunded`, the eSIM or the bundle `cancelled`, the `order.refunded` event and the outcome on any
// Idempotency-Key of the refund, all or nothing. The order's row lock, taken first, makes finishers
// take turns: a second one (a retry, the sweep) finds the order refunded and writes nothing. Lock
// order: the order, the eSIM or bundle row, then the wallet (as a top-up's completion: eSIM, wallet).
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { cancelBundleForRefund, cancelEsimForRefund, esimCancelled } from "../esims/cancel-for-refund.ts";
import { recordEvent } from "../events/record-event.ts";
import { refundToWallet } from "../ledger/transfers.ts";
import type { OrderRow } from "../orders/order.ts";
import { lockOrderForRefund, markOrderRefunded, orderBody } from "../orders/refunded-order.ts";
import type { AppContext } from "../shared/context.ts";
import { crashPoint } from "../shared/crash-points.ts";
import { problemBody } from "../shared/problem.ts";
import { completeRefundKeys } from "../topups/idempotency.ts";
import { carrierRefusalReason, refundNotAllowed } from "./refund-rules.ts";
import { deleteRefundIntent, markRefundDone } from "./refunds.sql.ts";

export type Answer = { status: number; body: string };

/** The 200 answer of a refunded order: the Order's bytes, stored on the refund's keys too. */
export async function refundedAnswer(
  trx: Transaction<Database>,
  order: OrderRow,
  ttl_hours: number,
): Promise<Answer> {
  const answer = { status: 200, body: JSON.stringify(await orderBody(trx, order)) };
  await completeRefundKeys(trx, order.order_id, answer, ttl_hours);
  return answer;
}

async function refund(trx: Transaction<Database>, order: OrderRow): Promise<OrderRow> {
  assert.equal(order.status, "completed", "only a completed order is refunded");
  assert.ok(order.iccid, "a completed order names its eSIM");
  // The eSIM (or bundle) rows before the wallet's: a top-up completing on this eSIM locks the eSIM
  // row, then the wallet (drive-order.ts complete); the other way round the two would deadlock.
  if (order.type === "esim") await cancelEsimForRefund(trx, order.iccid, order.order_id);
  else await cancelBundleForRefund(trx, order.order_id);
  const credited = await refundToWallet(trx, order.partner_id, order);
  // The refund transfer and the status move in one transaction: a completed order has none yet.
  assert.equal(credited.kind, "refunded", "a completed order has no refund transfer");
  const refunded = await markOrderRefunded(trx, order.order_id);
  assert.ok(refunded, "the locked completed order becomes refunded");
  await markRefundDone(trx, order.order_id);
  return refunded;
}

/** The carrier cancelled: credit, mark, cancel, record, once. */
export async function finishRefund(ctx: AppContext, order_id: string): Promise<Answer> {
  const ttl_hours = ctx.config.idempotency_ttl_hours;
  const { answer, iccid } = await ctx.db.transaction().execute(async (trx) => {
    const order = await lockOrderForRefund(trx, order_id);
    assert.ok(order, "a refund names an existing order");
    if (order.status === "refunded")
      return { answer: await refundedAnswer(trx, order, ttl_hours), iccid: null };
    const refunded = await refund(trx, order);
    const answer = await refundedAnswer(trx, refunded, ttl_hours);
    await recordEvent(trx, {
      partner_id: order.partner_id,
      type: "order.refunded",
      data: JSON.parse(answer.body),
      dedup_key: `refunded:${order_id}`,
    });
    return { answer, iccid: order.iccid };
  });
  crashPoint("after_refund_commit");
  if (iccid !== null) esimCancelled(ctx.pool, iccid);
  return answer;
}

/** The carrier refused: the intent goes, the order stays completed, the refusal is the answer. */
export async function refuseRefund(
  ctx: AppContext,
  order_id: string,
  carrier_reason: string,
  request_id: string,
): Promise<Answer> {
  const ttl_hours = ctx.config.idempotency_ttl_hours;
  return ctx.db.transaction().execute(async (trx) => {
    const order = await lockOrderForRefund(trx, order_id);
    assert.ok(order, "a refund names an existing order");
    if (order.status === "refunded") return refundedAnswer(trx, order, ttl_hours);
    await deleteRefundIntent(trx, order_id);
    const reason = carrierRefusalReason(order, carrier_reason);
    const error = refundNotAllowed(order_id, reason, ctx.config.refund_window_days);
    const answer = { status: 409, body: JSON.stringify(problemBody(error, request_id)) };
    await completeRefundKeys(trx, order_id, answer, ttl_hours);
    return answer;
  });
}
