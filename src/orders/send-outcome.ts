// How an order's outcome goes on the wire: 200 completed, 502 failed, 503 still pending after
// this attempt. Shared by the submit endpoints of new eSIMs and top-ups.
import type { FastifyReply } from "fastify";
import type { AppContext } from "../shared/context.ts";
import { sendExact } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import { sendProblem } from "../shared/problem.ts";
import type { OrderRow } from "./order.ts";
import { type HttpOutcome, outcomeOf } from "./stored-outcome.ts";
import { RETRY_AFTER_S } from "./submit-order.ts";

/** Sends an order's outcome: 200 completed, 502 failed, 503 still pending after this attempt. */
export async function sendOrderOutcome(
  ctx: AppContext,
  reply: FastifyReply,
  order: OrderRow,
): Promise<FastifyReply> {
  return sendOutcome(reply, order, await outcomeOf(ctx.db, order, String(reply.request.id)));
}

export function sendOutcome(reply: FastifyReply, order: OrderRow, outcome: HttpOutcome | null): FastifyReply {
  if (order.status === "failed") {
    // The partner gets a fixed detail; the operator sees what the carrier actually said.
    reply.request.log.warn(
      { order_id: order.order_id, failure_code: order.failure_code, carrier_refusal: order.carrier_refusal },
      "order failed",
    );
  }
  if (outcome === null) {
    return sendProblem(
      reply,
      new ApiError(
        "carrier_unavailable",
        `The carrier did not answer in time for order ${order.order_id}. Its price is held, and charged only ` +
          "if the carrier completes it; retry with the same key to get the outcome.",
        { headers: { "retry-after": String(RETRY_AFTER_S) }, order_id: order.order_id },
      ),
    );
  }
  return sendBytes(reply, outcome);
}

export function sendBytes(reply: FastifyReply, outcome: HttpOutcome): FastifyReply {
  return sendExact(reply, outcome);
}
