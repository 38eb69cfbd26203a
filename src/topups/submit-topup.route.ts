// POST /v1/orders/submit-topup (spec 4.5): top up one of the partner's eSIMs, paid from the wallet,
// idempotent under the Idempotency-Key header.
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { EndUserFields } from "../orders/end-user.ts";
import type { OrderRow } from "../orders/order.ts";
import { Order } from "../orders/render-order.ts";
import { sendOrderOutcome } from "../orders/send-outcome.ts";
import { JSON_TYPE, PROBLEM_TYPE } from "../orders/stored-outcome.ts";
import { RETRY_AFTER_S } from "../orders/submit-order.ts";
import { endpoint } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import { sendProblem } from "../shared/problem.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { ICCID_DESCRIPTION, ICCID_MAX_LENGTH } from "./iccid-param.ts";
import {
  idempotencyKeyHeader,
  MAX_HEADER_LENGTH,
  MAX_KEY_LENGTH,
  parseIdempotencyKey,
  requestFingerprints,
} from "./idempotency-key.ts";
import { normaliseTopUp, type StoredOutcome, submitTopUp } from "./submit-topup.ts";

const SubmitTopUpBody = Type.Object(
  {
    iccid: Type.String({ maxLength: ICCID_MAX_LENGTH, description: ICCID_DESCRIPTION }),
    package_id: Type.String({ minLength: 1, maxLength: 64, description: "From the available-top-ups row." }),
    external_package_id: Type.String({
      minLength: 1,
      maxLength: 128,
      description: "From the same row. The pair must be exactly a row offered for this ICCID.",
    }),
    ...EndUserFields,
  },
  { additionalProperties: false },
);

const SubmitTopUpHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({
      maxLength: MAX_HEADER_LENGTH,
      description:
        `Optional, recommended: a unique key per top-up attempt, such as a UUID; reuse it on retries. ` +
        `1-${MAX_KEY_LENGTH} printable ASCII characters (0x20-0x7E, no space at either end), bare or as an ` +
        'RFC 8941 quoted string (`"abc"`, with `\\"` and `\\\\` escapes; `"abc"` and `abc` are the same key). ' +
        "Scoped to your partner account. Send it once: two `Idempotency-Key` header lines are 400 `invalid_request`.",
    }),
  ),
});

const SUBMIT_DESCRIPTION = [
  "Validates the ICCID, holds the price on the wallet, tops the eSIM up with the carrier, records the order " +
    "and debits the wallet. No confirmation email is sent for top-ups. A `deleted` or `cancelled` eSIM takes " +
    "no top-up: 422 `topup_not_available`, nothing charged; nor does an eSIM whose own refund is under way " +
    "(its order's `refund_requested_at` set). 503 `carrier_unavailable` before any order: the eSIM's network " +
    "cannot be reached now, nothing charged and no order created.",
  "**Idempotency-Key** (recommended). Without it every request is a new top-up. With it, per partner:",
  [
    "- same key, same request (method, path and JSON body; key order and whitespace do not matter, nor an " +
      "absent `client_reference` against `null`, nor spaces around names and email, which are trimmed): the " +
      "stored outcome again, byte for byte, with `Idempotent-Replayed: true`; no second top-up, no second debit;",
    "- same key, different request: 422 `idempotency_key_reused`, nothing charged;",
    "- same key while the first request is still running: 409 `request_in_progress` with `Retry-After`;",
    "- stored outcomes: 200 (charged), 502 `carrier_error` and 402 `insufficient_balance` (definitive, " +
      "replayed even after the wallet is credited: use a new key);",
    "- not stored: validation errors (400, 404, 422), 409 and 503 `carrier_unavailable`. After a 503 the " +
      "top-up stays pending: a retry with the same key finishes that same top-up (never a second one), and " +
      "the service also finishes it on its own;",
    "- keys are kept for 24 hours after first use (`IDEMPOTENCY_TTL_HOURS`), then purged hourly; an expired " +
      "key is a new key.",
  ].join("\n"),
].join("\n\n");

/** Stored bytes as they were stored: the status says which of the two content types they are. */
function sendStored(reply: FastifyReply, stored: StoredOutcome): FastifyReply {
  if (stored.replayed) reply.header("idempotent-replayed", "true");
  return reply
    .code(stored.status)
    .type(stored.status < 300 ? JSON_TYPE : PROBLEM_TYPE)
    .send(stored.body);
}

/** A top-up still pending after this attempt (carrier unavailable): 503, with what a retry does. */
function sendPending(reply: FastifyReply, order: OrderRow, keyed: boolean): FastifyReply {
  const retry = keyed
    ? "Retry with the same Idempotency-Key to finish this same top-up."
    : "The service finishes it on its own; check GET /orders/{orderID} before retrying, since a retry " +
      "without an Idempotency-Key is a new top-up.";
  return sendProblem(
    reply,
    new ApiError(
      "carrier_unavailable",
      `The carrier did not answer in time for top-up ${order.order_id}. Its price is held, and charged only if ` +
        `the carrier completes it. ${retry}`,
      { headers: { "retry-after": String(RETRY_AFTER_S) }, order_id: order.order_id },
    ),
  );
}

export const submitTopUpRoute = endpoint({
  method: "POST",
  url: "/orders/submit-topup",
  schema: {
    operationId: "submitTopUp",
    summary: "Top up an eSIM: pay from the wallet and add the data",
    description: SUBMIT_DESCRIPTION,
    tags: ["Top-ups"],
    security: PARTNER_SECURITY,
    headers: SubmitTopUpHeaders,
    body: SubmitTopUpBody,
    response: {
      200: Type.Object(Order.properties, {
        additionalProperties: false,
        description: "The completed top-up order (`type` `topup`); its purchase names the same ICCID.",
      }),
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
        "invalid_iccid",
        "insufficient_balance",
        "esim_not_found",
        "request_in_progress",
        "topup_not_available",
        "idempotency_key_reused",
        "carrier_error",
        "carrier_unavailable",
      ),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const { body } = request;
    const input = normaliseTopUp(body);
    const idempotency_key = parseIdempotencyKey(idempotencyKeyHeader(request.raw.rawHeaders));
    const path = request.routeOptions.url ?? request.url;
    const claim =
      idempotency_key === null
        ? null
        : {
            idempotency_key,
            ...requestFingerprints(request.method, path, body, input),
            request_id: String(request.id),
          };
    const outcome = await submitTopUp(ctx, request.partner!.partner_id, input, claim);
    if (outcome.kind === "stored") return sendStored(reply, outcome.stored);
    if (outcome.order.status === "pending") return sendPending(reply, outcome.order, claim !== null);
    return sendOrderOutcome(ctx, reply, outcome.order);
  },
});
