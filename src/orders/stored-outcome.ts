// The HTTP outcome of an order, as exact bytes. The submit routes send these bytes, and a
// top-up's Idempotency-Key stores them when the order reaches a final state (in the same
// transaction, topups/finish-topup.ts), so a replay is byte for byte what the first attempt
// answered or would have.
import type { Executor } from "../db/executor.ts";
import type { ExactAnswer } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import { problemBody } from "../shared/problem.ts";
import type { OrderRow, PurchaseEntry } from "./order.ts";
import { purchasesOf } from "./orders.sql.ts";
import { renderOrder } from "./render-order.ts";

/** Exact bytes, as the routes that answer from bytes send them (shared/endpoint.ts). */
export type HttpOutcome = ExactAnswer;

export const JSON_TYPE = "application/json; charset=utf-8";
export const PROBLEM_TYPE = "application/problem+json; charset=utf-8";

/**
 * The error a final failed order answers with. The detail is fixed and documented (README
 * "Errors"): the carrier's own words (orders.carrier_refusal) go to the operator's logs only.
 */
export function failureError(order: OrderRow): ApiError {
  return new ApiError("carrier_error", `The carrier declined order ${order.order_id}. Nothing was charged.`);
}

/**
 * The outcome of `order`; a completed order's purchases are read unless the order carries the ones
 * its completion just recorded (drive-order.ts: no read back after the statement that wrote them).
 * A refunded order (or one with a refund under way) answers as it did when it completed: the
 * outcome of the request that bought it does not change with what happened to the order since (a
 * refund is the only change a completed order sees; its purchases stay). So a retry gets the bytes first sent from every process, the
 * ones that kept them (completed-outcomes.ts) and the ones that read the order, as an
 * Idempotency-Key replays its stored outcome.
 */
export async function outcomeOf(
  db: Executor,
  order: OrderRow & { purchases?: PurchaseEntry[] },
  request_id: string,
): Promise<HttpOutcome | null> {
  if (order.status === "pending") return null;
  if (order.status === "failed") {
    return {
      status: 502,
      content_type: PROBLEM_TYPE,
      body: JSON.stringify(problemBody(failureError(order), request_id)),
    };
  }
  const purchases = order.purchases ?? (await purchasesOf(db, [order.order_id]));
  const as_completed: OrderRow = {
    ...order,
    status: "completed",
    refunded_at: null,
    refund_requested_at: null,
  };
  return { status: 200, content_type: JSON_TYPE, body: JSON.stringify(renderOrder(as_completed, purchases)) };
}
