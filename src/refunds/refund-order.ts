// Partner use case: refund one of the partner's orders (POST /v1/orders/{orderID}/refund). A
// purchase in reverse, in the same phases (design.md "Refunds"):
//   1. one transaction: the Idempotency-Key (if any) claimed, the order row-locked, the rules
//      checked (refund-rules.ts), and the refund intent written `refunding` with a lease;
//   2. the carrier told to cancel, no transaction held (drive-refund.ts);
//   3. one transaction making the outcome ours (finish-refund.ts).
// A refunded order answers 200 again, crediting nothing. Concurrent refunds of one order take turns
// on its row lock: one writes the intent and drives it, the others get 409 request_in_progress while
// its lease lives. A driver that dies leaves the intent for a retry or the sweep (sweep-refunds.ts)
// once its lease expires, or as soon as its process stops beating (shared/liveness.ts); the carrier answers the same reference again without cancelling twice.
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { refundableState } from "../esims/cancel-for-refund.ts";
import { crashPoint } from "../lib/crash-points.ts";
import type { OrderRow } from "../orders/order.ts";
import {
  hasUnrefundedTopUps,
  lockOrderForRefund,
  markOrderRefundRequested,
} from "../orders/refunded-order.ts";
import { inProgress, RETRY_AFTER_S } from "../orders/submit-order.ts";
import { networkUnreachable } from "../orders/supplier-not-served.ts";
import type { Actor } from "../shared/actor.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { holderOf } from "../shared/liveness.ts";
import { problemBody } from "../shared/problem.ts";
import {
  answerExisting,
  claimKey,
  completeRefundKeys,
  type IdempotencyClaim,
  type KeyRef,
  linkRefundKey,
  type NewKey,
  type StoredOutcome,
  storedOutcome,
} from "../topups/idempotency.ts";
import { driveRefund } from "./drive-refund.ts";
import { refundedAnswer } from "./finish-refund.ts";
import { checkRefundBudget } from "./refund-budget.ts";
import { refundNotAllowed, refusalReason, supplierTopUpsReason } from "./refund-rules.ts";
import { insertRefundIntent, type RefundLease, selectRefund, takeExpiredLease } from "./refunds.sql.ts";

/**
 * Who asks for a refund: the partner (its key; the window applies) or the operator on its behalf
 * (POST /admin/orders/{orderID}/refund: a reason, and the window does not apply). Kept on the
 * intent, so the credit, whoever finishes it, is audited as theirs, once.
 */
export type RefundRequester = { actor: Actor; reason: string | null; window_applies: boolean };

type Start =
  | { kind: "answer"; answer: StoredOutcome }
  | { kind: "drive"; lease: RefundLease }
  /** The key's first request is refunding this order still. */
  | { kind: "running"; order_id: string };

/** A refund's carrier operation is bounded (Carrier.operation_ms); its lease outlasts it. */
export function refundLeaseMs(ctx: AppContext): number {
  return ctx.carrier.operation_ms + 5_000;
}

function orderNotFound(): ApiError {
  return new ApiError("order_not_found", "No such order for this partner.");
}

/** Phase 1 after the key: answer from the order as it stands, or write the intent to drive. */
async function startOnOrder(
  ctx: AppContext,
  trx: Transaction<Database>,
  order: OrderRow,
  key: NewKey | null,
  requester: RefundRequester,
): Promise<Start> {
  const ttl_hours = ctx.config.idempotency_ttl_hours;
  const link = async () => {
    if (key !== null) await linkRefundKey(trx, key, order.order_id);
  };
  if (order.status === "refunded") {
    await link();
    return { kind: "answer", answer: { ...(await refundedAnswer(trx, order, ttl_hours)), replayed: false } };
  }
  const intent = await selectRefund(trx, order.order_id);
  if (intent?.state === "refunding") {
    if (intent.lease_live) throw inProgress(order.order_id);
    const lease = await takeExpiredLease(trx, order.order_id, refundLeaseMs(ctx), holderOf(ctx.liveness));
    if (lease === null) throw inProgress(order.order_id);
    await link();
    return { kind: "drive", lease };
  }
  const esim = order.iccid === null ? null : await refundableState(trx, order.iccid, order.order_id);
  const window_days = requester.window_applies ? ctx.config.refund_window_days : Number.POSITIVE_INFINITY;
  const reason =
    refusalReason(order, esim, window_days, new Date()) ??
    (order.type === "esim" && order.supplier !== "carrier" && order.iccid !== null
      ? supplierTopUpsReason(order, await hasUnrefundedTopUps(trx, order.iccid))
      : null);
  if (reason !== null) {
    const error = refundNotAllowed(order.order_id, reason, ctx.config.refund_window_days);
    if (key === null) throw error;
    // Stored like a top-up's 402: a retry with the key replays it; a new attempt takes a new key.
    const answer = { status: 409, body: JSON.stringify(problemBody(error, key.request_id)) };
    await link();
    await completeRefundKeys(trx, order.order_id, answer, ttl_hours);
    return { kind: "answer", answer: { ...answer, replayed: false } };
  }
  if (!ctx.carrier.serves(order.supplier)) {
    // Thrown, not stored on the key: the same request succeeds once the supplier is configured.
    throw networkUnreachable(`order ${order.order_id}`, "Nothing was credited and no refund was started.");
  }
  await checkRefundBudget(trx, order.partner_id, ctx.config.refunds_per_partner_per_hour);
  const lease = await insertRefundIntent(trx, order, refundLeaseMs(ctx), holderOf(ctx.liveness), requester);
  // The Order says a refund is under way from now on, however long it waits (finish-refund.ts).
  await markOrderRefundRequested(trx, order.order_id);
  await link();
  return { kind: "drive", lease };
}

async function start(
  ctx: AppContext,
  partner_id: string,
  order_id: string,
  claim: IdempotencyClaim | null,
  requester: RefundRequester,
): Promise<Start> {
  const key: (NewKey & IdempotencyClaim) | null =
    claim === null
      ? null
      : { partner_id, ...claim, order_id: null, ttl_hours: ctx.config.idempotency_ttl_hours };
  return ctx.db.transaction().execute(async (trx) => {
    if (key !== null) {
      const claimed = await claimKey(trx, key);
      if (claimed.kind === "existing") {
        const existing = answerExisting(claimed.row, key, "refund");
        return existing.kind === "stored" ? { kind: "answer", answer: existing.stored } : existing;
      }
    }
    const order = await lockOrderForRefund(trx, order_id, partner_id);
    if (!order) throw orderNotFound();
    return startOnOrder(ctx, trx, order, key, requester);
  });
}

function carrierUnavailable(order_id: string): ApiError {
  return new ApiError(
    "carrier_unavailable",
    `The carrier did not confirm the cancellation of order ${order_id} in time. Nothing was credited yet; ` +
      "the refund is finished on its own once the carrier answers, or retry with the same key.",
    { headers: { "retry-after": String(RETRY_AFTER_S) }, order_id },
  );
}

/**
 * The carrier has cancelled the profile, but a top-up of the eSIM is still pending at the carrier:
 * the same 409 as any refund in progress, with the truth in `detail` (the Order shows
 * `refund_requested_at` meanwhile).
 */
function waitingForTopUp(order_id: string): ApiError {
  return new ApiError(
    "request_in_progress",
    `The carrier has cancelled the eSIM of order ${order_id}; its refund waits for the outcome of a top-up of ` +
      "that eSIM still pending at the carrier, and is finished on its own once it has one. Nothing was credited yet.",
    { headers: { "retry-after": String(RETRY_AFTER_S) }, order_id },
  );
}

async function drive(ctx: AppContext, lease: RefundLease, request_id: string): Promise<StoredOutcome> {
  const driven = await driveRefund(ctx, lease, request_id, false);
  if (driven === null) throw carrierUnavailable(lease.order_id);
  // A top-up of the eSIM is being decided at the carrier: a retry (or the sweep) finishes both.
  if (driven === "topup_pending") throw waitingForTopUp(lease.order_id);
  return { ...driven, replayed: false };
}

/** A retry of a key whose refund is still refunding: drive it if its driver is gone, else 409. */
async function continueRunning(
  ctx: AppContext,
  key: KeyRef,
  order_id: string,
  request_id: string,
): Promise<StoredOutcome> {
  const lease = await takeExpiredLease(ctx.db, order_id, refundLeaseMs(ctx), holderOf(ctx.liveness));
  if (lease !== null) return drive(ctx, lease, request_id);
  const stored = await storedOutcome(ctx.db, key);
  if (stored !== null) return stored;
  throw inProgress(order_id);
}

/** The bytes to answer (200 Order or 409 refund_not_allowed); other outcomes are thrown. */
export async function refundOrder(
  ctx: AppContext,
  partner_id: string,
  order_id: string,
  claim: IdempotencyClaim | null,
  request_id: string,
  requester: RefundRequester,
): Promise<StoredOutcome> {
  const started = await start(ctx, partner_id, order_id, claim, requester);
  if (started.kind === "answer") return started.answer;
  if (started.kind === "running") {
    const key = { partner_id, idempotency_key: claim!.idempotency_key };
    return continueRunning(ctx, key, started.order_id, request_id);
  }
  crashPoint("after_refund_intent_commit");
  return drive(ctx, started.lease, request_id);
}
