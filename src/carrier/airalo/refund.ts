// Refunds through Airalo: POST /v2/refund {iccids, reason} is a *request*, answered 202 with a
// refund_id and "manually reviewed" later; nothing is revoked by the call, and no endpoint reads a
// request's outcome (docs/suppliers/airalo.md §5). An approval shows as the order's status
// `refunded` (§6, inferred, not stated); `partially_refunded` is not a full refund and stays
// unavailable for an operator.
//
// The port's CancelOutcome has no "requested, decided later": so the first cancelProfile sends the
// request and answers `unavailable` (the refunds domain asks again later); every later one reads
// the order's status and answers `ok` once Airalo shows it refunded. A rejection is never visible:
// such a refund stays unavailable (pending) until an operator settles it. The request is sent once
// per reference (its id is kept); one whose answer was lost is sent again after REFUND_RETRY_MS
// (a duplicate request for an eSIM under review is Airalo's to merge; the rate limit is 1 per 5
// minutes anyway).
// A top-up cannot be refunded alone: the request names eSIMs, not orders.
import type pg from "pg";
import type { CancelOutcome, CancelRequest } from "../carrier.ts";
import { markRefundRequested, recordRefundId, selectIntent } from "./airalo.sql.ts";
import { type AiraloClient, dataOf } from "./client.ts";
import { parseOrder } from "./shapes.ts";

export type RefundDeps = { pool: pg.Pool; client: AiraloClient };

/** The documented reason that fits a partner cancelling an unused eSIM. */
export const REFUND_REASON = "CHANGE_OF_PLAN";
const REFUND_RETRY_MS = 5 * 60_000;

export async function requestRefund(deps: RefundDeps, request: CancelRequest): Promise<CancelOutcome> {
  const intent = await selectIntent(deps.pool, request.reference);
  if (intent === null || intent.kind !== "sim" || intent.airalo_order_id === null) {
    return { kind: "refused", reason: `no Airalo eSIM order of ours for ${request.reference}` };
  }
  if (intent.iccid !== request.iccid) {
    return {
      kind: "refused",
      reason: `order ${request.reference} bought ${intent.iccid}, not ${request.iccid}`,
    };
  }
  if (intent.refund_id !== null) return refundDecided(deps, intent.airalo_order_id, intent.refund_id);
  if (
    intent.refund_requested_at !== null &&
    Date.now() - intent.refund_requested_at.getTime() < REFUND_RETRY_MS
  ) {
    return {
      kind: "unavailable",
      reason: "a refund request was sent to Airalo and its answer is not known yet",
    };
  }
  await markRefundRequested(deps.pool, request.reference);
  const verdict = await deps.client.call("/refund", {
    form: { iccids: [request.iccid], reason: REFUND_REASON },
    limits: [["refund", "account"]],
  });
  if (verdict.kind === "ok") {
    const refund_id = dataOf(verdict.body)?.refund_id;
    if (typeof refund_id === "string" || typeof refund_id === "number") {
      await recordRefundId(deps.pool, request.reference, String(refund_id));
      return {
        kind: "unavailable",
        reason: `refund ${refund_id} requested at Airalo; Airalo reviews it manually and credits us if it accepts`,
      };
    }
    return { kind: "unavailable", reason: "Airalo accepted a refund request without a refund_id" };
  }
  if (verdict.kind === "refused") return { kind: "refused", reason: verdict.reason };
  return {
    kind: "unavailable",
    reason: verdict.kind === "not_found" ? "Airalo answered 404" : verdict.reason,
  };
}

/** ok once Airalo shows the order refunded; otherwise still under review (or rejected: not visible). */
async function refundDecided(
  deps: RefundDeps,
  airalo_order_id: string,
  refund_id: string,
): Promise<CancelOutcome> {
  const verdict = await deps.client.call(`/orders/${airalo_order_id}`, { query: { include: "status" } });
  if (verdict.kind !== "ok") {
    return {
      kind: "unavailable",
      reason: verdict.kind === "not_found" ? "Airalo answered 404" : verdict.reason,
    };
  }
  const status = parseOrder(dataOf(verdict.body))?.status;
  if (status === "refunded") return { kind: "ok" };
  // `partially_refunded` is a status of its own beside `refunded` (filter[order_status]'s values,
  // [DOC:get-order-list-11883022e0], docs/suppliers/airalo.md §6): Airalo gave back part of the
  // order, not all of it. Not ok (the partner would be credited in full for a part), not refused
  // (Airalo did accept something): unavailable, for an operator to settle with Airalo's statement.
  if (status === "partially_refunded") {
    return {
      kind: "unavailable",
      reason: `Airalo refunded order ${airalo_order_id} only partly (refund ${refund_id}): an operator must settle it`,
    };
  }
  return {
    kind: "unavailable",
    reason: `refund ${refund_id} is under Airalo's review (order status ${status ?? "unknown"})`,
  };
}
