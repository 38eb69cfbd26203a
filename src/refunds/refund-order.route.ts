// POST /v1/orders/{orderID}/refund: refund one of the partner's orders (contract "Order
// additions"), optionally under an Idempotency-Key with the rules of top-ups.
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { Order } from "../orders/render-order.ts";
import { JSON_TYPE, PROBLEM_TYPE } from "../orders/stored-outcome.ts";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { errorResponses, NO_CONTROL_CHARACTERS, PARTNER_SECURITY, Problem } from "../shared/schemas.ts";
import type { StoredOutcome } from "../topups/idempotency.ts";
import {
  idempotencyKeyHeader,
  MAX_HEADER_LENGTH,
  MAX_KEY_LENGTH,
  parseIdempotencyKey,
  requestFingerprints,
} from "../topups/idempotency-key.ts";
import { refundOrder } from "./refund-order.ts";
import { REFUSAL_REASONS } from "./refund-rules.ts";

const DESCRIPTION = [
  "Cancels the order's eSIM (a new-eSIM order) or its bundle (a top-up order) with the carrier, then " +
    "credits the wallet exactly what the order cost, once, and answers the order with status `refunded`.",
  "Allowed for a completed order whose bundle was never used: a new eSIM still `released`, or a top-up " +
    "bundle still `queued`, within `REFUND_WINDOW_DAYS` (default 30) of the purchase. Otherwise 409 " +
    "`refund_not_allowed` with `reason`: `not_completed`, `esim_installed`, `bundle_used`, " +
    "`window_passed` (the carrier may refuse too, with the same reasons) or `topups_not_refunded` (an eSIM " +
    "from a network that cancels the eSIM's own bundle only, with a top-up pending or not refunded: refund " +
    "the top-ups first, where that network allows it) or `group_order` (an order of several eSIMs, " +
    "`quantity` > 1: not refunded through the API; the operator credits what a traveller did not use). An order already refunded answers 200 again and " +
    "credits nothing. 503 `carrier_unavailable` without a refund under way: the order's network cannot be " +
    "reached now; nothing was credited and no refund was started.",
  "Refunding an eSIM of our carrier refunds its unused top-ups with it: the carrier cancels the whole profile, so every " +
    "completed top-up order of that eSIM not refunded yet is refunded in the same step (each its own " +
    "`refund` transaction and `order.refunded` event, its bundle `cancelled`); refunding one of them later " +
    "answers it again (200) and credits nothing. While a top-up of the eSIM is still pending, the refund " +
    "answers 409 `request_in_progress` and is finished by a retry or on its own.",
  "**Idempotency-Key** (optional): the rules of top-ups. Same key and request: the stored outcome (200 or " +
    "409 `refund_not_allowed`) with `Idempotent-Replayed: true`; another request: 422 " +
    "`idempotency_key_reused`; while the first is running: 409 `request_in_progress`. 503 " +
    "`carrier_unavailable` is not stored: the refund stays under way, finished by a retry or on its own.",
  "**Never credited on an ambiguous carrier answer.** With profiles from an SM-DP+ (ES2+), CancelOrder's " +
    'refusal 8.2.1/3.5 means "already cancelled" or "downloaded". When the service\'s earlier CancelOrder ' +
    "got no answer and no download notification has arrived, the refund is held: it stays under way (the " +
    "order `completed`, nothing credited; a retry gets 503 `carrier_unavailable`, or 409 " +
    "`request_in_progress` while the refund sweep waits to look again) until a download " +
    "notification refuses it (409 `refund_not_allowed`, `esim_installed`) or the operator settles it after " +
    "checking with the SM-DP+ (then 200 once, or the same 409).",
  "**Bounded per partner:** at most `REFUNDS_PER_PARTNER_PER_HOUR` (default 30) refunds start per rolling " +
    "hour (a refunded eSIM's ICCID is never sold again, so refunds consume the package's inventory). Past " +
    "it: 429 `rate_limited` with `Retry-After` (when the oldest of the hour's refunds leaves it); nothing is " +
    "changed and an `Idempotency-Key` sent with it is not used up. Replays and retries of a refund under " +
    "way are not counted again.",
].join("\n\n");

export const RefundProblem = Type.Object(
  {
    ...Problem.properties,
    reason: Type.Optional(
      Type.Union(
        REFUSAL_REASONS.map((reason) => Type.Literal(reason)),
        { description: "On `refund_not_allowed`: why the order cannot be refunded." },
      ),
    ),
  },
  { additionalProperties: false, "x-error-codes": ["request_in_progress", "refund_not_allowed"] },
);

/** A refund's 409, for the partner's route and the operator's: in progress, or not allowed (why). */
export const REFUND_CONFLICT = {
  description:
    "Problem details. Codes: `request_in_progress` (retry after `Retry-After`), `refund_not_allowed` " +
    "(with `reason`).",
  content: { "application/problem+json": { schema: RefundProblem } },
};

/** The answer's bytes as they are (stored on a key too): the status says which content type they are. */
export function sendAnswer(reply: FastifyReply, answer: StoredOutcome): FastifyReply {
  if (answer.replayed) reply.header("idempotent-replayed", "true");
  return reply
    .code(answer.status)
    .type(answer.status < 300 ? JSON_TYPE : PROBLEM_TYPE)
    .send(answer.body);
}

export const refundOrderRoute = endpoint({
  method: "POST",
  url: "/orders/:orderID/refund",
  schema: {
    operationId: "refundOrder",
    summary: "Refund an order whose eSIM or bundle was never used",
    description: DESCRIPTION,
    tags: ["Orders"],
    security: PARTNER_SECURITY,
    params: Type.Object({
      orderID: Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
    }),
    headers: Type.Object({
      "idempotency-key": Type.Optional(
        Type.String({
          maxLength: MAX_HEADER_LENGTH,
          description: `Optional: 1-${MAX_KEY_LENGTH} printable ASCII characters, as for top-ups.`,
        }),
      ),
    }),
    response: {
      200: Type.Object(Order.properties, {
        additionalProperties: false,
        description: "The refunded order (`status` `refunded`, `refunded_at` set, `esim_iccid` kept).",
      }),
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
        "order_not_found",
        "idempotency_key_reused",
        "carrier_unavailable",
      ),
      409: REFUND_CONFLICT,
    },
  },
  handler: (ctx) => async (request, reply) => {
    const { orderID } = request.params;
    const idempotency_key = parseIdempotencyKey(idempotencyKeyHeader(request.raw.rawHeaders));
    const path = request.routeOptions.url ?? request.url;
    const target = { orderID };
    const claim =
      idempotency_key === null
        ? null
        : {
            idempotency_key,
            ...requestFingerprints(request.method, path, target, target),
            request_id: String(request.id),
          };
    const answer = await refundOrder(ctx, request.partner!.partner_id, orderID, claim, String(request.id), {
      actor: actorOf(request),
      reason: null,
      window_applies: true,
    });
    return sendAnswer(reply, answer);
  },
});
