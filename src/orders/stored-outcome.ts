// The HTTP outcome of an order, as exact bytes. The submit routes send these bytes, and a
// top-up's Idempotency-Key stores them when the order reaches a final state (in the same
// transaction), so a replay is byte for byte what the first attempt answered or would have.
import { type Kysely, sql, type Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { ApiError } from "../shared/errors.ts";
import { problemBody } from "../shared/problem.ts";
import { type OrderRow, orderById, purchasesOf } from "./orders.sql.ts";
import { renderOrder } from "./render-order.ts";

export type HttpOutcome = { status: number; content_type: string; body: string };

export const JSON_TYPE = "application/json; charset=utf-8";
export const PROBLEM_TYPE = "application/problem+json; charset=utf-8";

/**
 * The error a final failed order answers with. The detail is fixed and documented (README
 * "Errors"): the carrier's own words (orders.carrier_refusal) go to the operator's logs only.
 */
export function failureError(order: OrderRow): ApiError {
  return new ApiError("carrier_error", `The carrier declined order ${order.order_id}. Nothing was charged.`);
}

export async function outcomeOf(
  db: Kysely<Database> | Transaction<Database>,
  order: OrderRow,
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
  const purchases = await purchasesOf(db, [order.order_id]);
  return { status: 200, content_type: JSON_TYPE, body: JSON.stringify(renderOrder(order, purchases)) };
}

/**
 * Stores the final outcome on the Idempotency-Key that created the order, if one did. The key is
 * then kept at least `ttl_hours` from now: an order that stayed pending long still leaves its
 * client a whole retention period to retry and get this outcome.
 */
export async function storeOutcomeForOrder(
  trx: Transaction<Database>,
  order_id: string,
  ttl_hours: number,
): Promise<void> {
  const key = await sql<{ request_id: string }>`
    select request_id from idempotency_keys where order_id = ${order_id} and state = 'running' for update`.execute(
    trx,
  );
  const row = key.rows[0];
  if (!row) return;
  const order = await orderById(trx, order_id);
  const outcome = order ? await outcomeOf(trx, order, row.request_id) : null;
  if (!outcome) return;
  await sql`
    update idempotency_keys
    set state = 'completed', response_status = ${outcome.status}, response_body = ${outcome.body},
        expires_at = greatest(expires_at, now() + make_interval(hours => ${ttl_hours}))
    where order_id = ${order_id} and state = 'running'`.execute(trx);
}
