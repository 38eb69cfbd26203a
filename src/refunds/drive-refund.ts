// Phase two and three of a refund, for whoever holds its lease (the request, a retry, the sweep):
// tell the carrier first (idempotent by our reference, the order id), then make the outcome ours in
// one transaction: ok -> the refund (finish-refund.ts); refused -> the intent goes and the order
// stays completed; unknown -> the lease is given up for a retry or the sweep, nothing else changes.
import type { CancelOutcome, Carrier } from "../carrier/carrier.ts";
import { crashPoint } from "../lib/crash-points.ts";
import { orderOf } from "../orders/refunded-order.ts";
import type { AppContext } from "../shared/context.ts";
import { finishRefund, refuseRefund } from "./finish-refund.ts";
import { giveUpLease, type RefundLease } from "./refunds.sql.ts";

/**
 * The final answer's bytes; null when the carrier's answer is unknown, "topup_pending" when a
 * top-up of the eSIM has no outcome yet (either way the refund stays refunding, its lease given up).
 */
export type Driven = { status: number; body: string } | null | "topup_pending";

export async function cancelAtCarrier(
  carrier: Carrier,
  order: { order_id: string; type: "esim" | "topup"; iccid: string | null },
): Promise<CancelOutcome> {
  if (order.iccid === null) return { kind: "refused", reason: "the order has no eSIM" };
  const request = { reference: order.order_id, iccid: order.iccid };
  return order.type === "esim" ? carrier.cancelProfile(request) : carrier.cancelBundle(request);
}

/**
 * Drives one leased refund to its end or to an unknown outcome. `backoff`: the sweep waits longer
 * after each unknown answer; a request gives the lease up at once, so its client's retry drives again.
 */
export async function driveRefund(
  ctx: AppContext,
  lease: RefundLease,
  request_id: string,
  backoff: boolean,
): Promise<Driven> {
  const order = await orderOf(ctx.db, lease.order_id);
  if (order === null) throw new Error(`refund of unknown order ${lease.order_id}`);
  // This process's heartbeat is late: another may be taking the refund over (shared/liveness.ts).
  // No call; the lease is given up (only if still ours) like after an unknown answer.
  if (ctx.liveness !== undefined && !ctx.liveness.fresh()) {
    await giveUpLease(ctx.db, lease, backoff, "this process's heartbeat was late: not driven");
    return null;
  }
  try {
    const outcome = await cancelAtCarrier(ctx.carrier, order);
    crashPoint("after_cancel_answer");
    return await record(ctx, lease, request_id, backoff, outcome);
  } catch (error) {
    // A statement of the adapter's or the outcome's transaction failed (a deadlock, a cancelled
    // statement: answered 503, "retry"), with no carrier call left in flight: the lease is given up
    // (only if still ours) as after an unknown answer, so the retry drives the refund again instead
    // of a 409 until the lease runs out.
    const reason = `recording the carrier's answer failed: ${(error as Error).message ?? String(error)}`;
    await giveUpLease(ctx.db, lease, backoff, reason).catch(() => undefined);
    throw error;
  }
}

/** Makes the carrier's answer to the cancel ours (finish-refund.ts), or gives the lease up. */
async function record(
  ctx: AppContext,
  lease: RefundLease,
  request_id: string,
  backoff: boolean,
  outcome: CancelOutcome,
): Promise<Driven> {
  if (outcome.kind === "ok") {
    const finished = await finishRefund(ctx, lease.order_id);
    if (finished !== null) return finished;
    // Backed off like an unknown answer (the sweep: 1 s doubling to 5 min; a request: at once, its
    // client's retry drives again): a top-up pending at a carrier that does not answer stays
    // pending for hours, and each retry asks the carrier the same cancel again.
    await giveUpLease(ctx.db, lease, backoff, "a top-up of the eSIM is still pending");
    return "topup_pending";
  }
  if (outcome.kind === "refused") return refuseRefund(ctx, lease.order_id, outcome.reason, request_id);
  await giveUpLease(ctx.db, lease, backoff, outcome.reason);
  return null;
}
