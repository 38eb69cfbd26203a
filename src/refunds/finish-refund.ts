// The refund's own transaction, once the carrier has cancelled: the wallet credited with a new
// posted transfer naming the order (never more than was paid, once: ledger/transfers.ts), the order
// `refunded`, the eSIM or the bundle `cancelled`, the `order.refunded` event and the outcome on any
// Idempotency-Key of the refund, all or nothing. The order's row lock, taken first, makes finishers
// take turns: a second one (a retry, the sweep) finds the order refunded and writes nothing. Lock
// order (docs/architecture.md, "Lock order"): the order, the eSIM row, its top-up orders, the
// bundle rows, then the wallet (as a top-up's completion: eSIM, order, bundle, wallet). Every lock
// is FOR NO KEY UPDATE: a carrier signal re-checking its eSIM's foreign key to this order (a key-share
// lock) never waits for the refund, which may be waiting for that signal's eSIM lock.
// Our carrier's cancelProfile of a new eSIM cancelled every bundle on it, so its completed top-up
// orders are refunded in the same transaction, each exactly as its own refund would be (nothing
// was used: the profile is still released). Their order rows are locked after the eSIM row, the
// order a top-up's completion takes them in (eSIM, order, wallet). A top-up still pending waits
// the refund out: the carrier either took it before the cancel (then it was cancelled with the
// profile and must be refunded once completed here) or refuses it (the profile is cancelled).
// A supplier's cancel does not (eSIM Go revokes the eSIM order's own bundle, Airalo approves the
// eSIM order alone): such an eSIM is refunded only without top-ups (refund-rules.ts,
// `topups_not_refunded`), and here only what the supplier cancelled, its own order, is credited.
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import {
  cancelBundleForRefund,
  cancelEsimForRefund,
  esimCancelled,
  lockEsimForRefund,
} from "../esims/cancel-for-refund.ts";
import { recordEvent } from "../events/record-event.ts";
import { refundToWallet } from "../ledger/transfers.ts";
import { crashPoint } from "../lib/crash-points.ts";
import type { OrderRow } from "../orders/order.ts";
import {
  clearOrderRefundRequested,
  lockOrderForRefund,
  lockTopUpsForRefund,
  markOrderRefunded,
  orderBody,
} from "../orders/refunded-order.ts";
import type { Actor } from "../shared/actor.ts";
import type { AppContext } from "../shared/context.ts";
import { problemBody } from "../shared/problem.ts";
import { completeRefundKeys } from "../topups/idempotency.ts";
import { carrierRefusalReason, refundNotAllowed } from "./refund-rules.ts";
import { deleteRefundIntent, markRefundDone, refundRequester } from "./refunds.sql.ts";

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

/**
 * Cancels on our side what the carrier cancelled, before any wallet lock; returns the locked
 * completed orders to credit (the refunded one first), or null while a top-up of the eSIM is pending.
 */
async function cancelForRefund(trx: Transaction<Database>, order: OrderRow): Promise<OrderRow[] | null> {
  assert.equal(order.status, "completed", "only a completed order is refunded");
  assert.ok(order.iccid, "a completed order names its eSIM");
  if (order.type === "topup") {
    await cancelBundleForRefund(trx, order.order_id);
    return [order];
  }
  await lockEsimForRefund(trx, order.iccid);
  const topups = await lockTopUpsForRefund(trx, order.iccid);
  if (topups.pending) return null;
  await cancelEsimForRefund(trx, order.iccid, order.order_id);
  if (order.supplier !== "carrier") return [order];
  for (const topup of topups.completed) await cancelBundleForRefund(trx, topup.order_id);
  return [order, ...topups.completed];
}

/**
 * One locked completed order, cancelled here already: credited once, refunded, answered, announced,
 * and audited as the change of whoever asked for the refund (`refund_of`: the order whose refund
 * took this top-up with it, or null).
 */
async function creditOrder(
  trx: Transaction<Database>,
  order: OrderRow,
  ttl_hours: number,
  audit: { actor: Actor; reason: string | null; refund_of: string | null },
): Promise<Answer> {
  const credited = await refundToWallet(trx, order.partner_id, order);
  // The refund transfer and the status move in one transaction: a completed order has none yet.
  assert.equal(credited.kind, "refunded", "a completed order has no refund transfer");
  const refunded = await markOrderRefunded(trx, order.order_id);
  assert.ok(refunded, "the locked completed order becomes refunded");
  await markRefundDone(trx, order.order_id);
  const answer = await refundedAnswer(trx, refunded, ttl_hours);
  await recordEvent(trx, {
    partner_id: order.partner_id,
    type: "order.refunded",
    data: JSON.parse(answer.body),
    dedup_key: `refunded:${order.order_id}`,
  });
  await recordAudit(trx, {
    actor: audit.actor,
    action: "order.refunded",
    partner_id: order.partner_id,
    target: { type: "order", id: order.order_id },
    details: {
      amount: { amount_minor: order.total_minor, currency: order.currency },
      ...(audit.reason === null ? {} : { reason: audit.reason }),
      ...(audit.refund_of === null ? {} : { with_refund_of: audit.refund_of }),
    },
  });
  return answer;
}

/**
 * The carrier cancelled: credit, mark, cancel, record, once. Null: a top-up of the eSIM is still
 * pending, nothing was written; the refund is finished once that top-up has its outcome.
 */
export async function finishRefund(ctx: AppContext, order_id: string): Promise<Answer | null> {
  const ttl_hours = ctx.config.idempotency_ttl_hours;
  const done = await ctx.db.transaction().execute(async (trx) => {
    const order = await lockOrderForRefund(trx, order_id);
    assert.ok(order, "a refund names an existing order");
    if (order.status === "refunded")
      return { answer: await refundedAnswer(trx, order, ttl_hours), iccid: null };
    const orders = await cancelForRefund(trx, order);
    if (orders === null) return null;
    const requested = await refundRequester(trx, order.order_id);
    const answers: Answer[] = [];
    for (const each of orders) {
      const refund_of = each.order_id === order.order_id ? null : order.order_id;
      answers.push(await creditOrder(trx, each, ttl_hours, { ...requested, refund_of }));
    }
    return { answer: answers[0]!, iccid: order.iccid };
  });
  if (done === null) return null;
  crashPoint("after_refund_commit");
  if (done.iccid !== null) esimCancelled(ctx.pool, done.iccid);
  return done.answer;
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
    await clearOrderRefundRequested(trx, order_id);
    const reason = carrierRefusalReason(order, carrier_reason);
    const error = refundNotAllowed(order_id, reason, ctx.config.refund_window_days);
    const answer = { status: 409, body: JSON.stringify(problemBody(error, request_id)) };
    await completeRefundKeys(trx, order_id, answer, ttl_hours);
    return answer;
  });
}
