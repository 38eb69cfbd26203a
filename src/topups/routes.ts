// GET /v1/orders/available-topups/{iccid} (spec 4.4) and POST /v1/orders/submit-topup (spec 4.5).
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { EndUserFields } from "../orders/end-user.ts";
import type { OrderRow } from "../orders/orders.sql.ts";
import { Order } from "../orders/render-order.ts";
import { sendOrderOutcome } from "../orders/routes.ts";
import { JSON_TYPE, PROBLEM_TYPE } from "../orders/stored-outcome.ts";
import { RETRY_AFTER_S } from "../orders/submit-order.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import type { App } from "../shared/http-types.ts";
import { sendProblem } from "../shared/problem.ts";
import { errorResponses, Money, PARTNER_SECURITY } from "../shared/schemas.ts";
import {
  idempotencyKeyHeader,
  MAX_HEADER_LENGTH,
  MAX_KEY_LENGTH,
  parseIdempotencyKey,
  requestFingerprints,
} from "./idempotency-key.ts";
import { listAvailableTopUps } from "./list-available-topups.ts";
import { normaliseTopUp, type StoredOutcome, submitTopUp } from "./submit-topup.ts";
import { MAX_TOPUP_ROWS } from "./topup-offer.ts";

/**
 * A bound only, as long as the router's longest path parameter: the shape is checked by the use
 * case, so that any malformed ICCID, however long, is 400 `invalid_iccid` rather than a schema error.
 */
const ICCID_MAX_LENGTH = 200;
const ICCID_DESCRIPTION =
  "The eSIM's ICCID: 19 or 20 digits starting with 89, the last a Luhn check digit. A malformed one is " +
  "400 `invalid_iccid`; an unknown one, or another partner's, 404 `esim_not_found`.";

export const TopUpRow = Type.Object(
  {
    package_id: Type.String({ description: "Send it unchanged to `POST /orders/submit-topup`." }),
    external_package_id: Type.String({ description: "The carrier's id; send it unchanged too." }),
    name: Type.String(),
    data_mb: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description:
        "Data added, in megabytes. null would mean unlimited; unlimited packages are not offered as top-ups.",
    }),
    validity_days: Type.Integer({ minimum: 1 }),
    wholesale_price: Type.Object(Money.properties, {
      additionalProperties: false,
      description: "What the wallet is debited for this top-up.",
    }),
    coverage: Type.Enum(["country", "regional", "global"]),
    region: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false, description: "A package that can top up this eSIM." },
);

const AvailableTopUps = Type.Object(
  {
    iccid: Type.String(),
    data: Type.Array(TopUpRow, {
      maxItems: MAX_TOPUP_ROWS,
      description:
        "Active, metered packages covering every destination of the eSIM's original package: country " +
        "packages, then regional, then global; within each by data size, validity and id.",
    }),
  },
  { additionalProperties: false },
);

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
    "and debits the wallet. No confirmation email is sent for top-ups.",
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

export async function topupRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    "/orders/available-topups/:iccid",
    {
      schema: {
        operationId: "listAvailableTopUps",
        summary: "List the top-ups available for an eSIM",
        description:
          "The packages this eSIM can be topped up with: active packages with a data allowance that cover " +
          "every destination of the eSIM's original package (a France eSIM gets France, Europe and Global " +
          "packages; a Europe eSIM only Europe and Global). Submit one row with `POST /orders/submit-topup`.",
        tags: ["Top-ups"],
        security: PARTNER_SECURITY,
        params: Type.Object({
          iccid: Type.String({ maxLength: ICCID_MAX_LENGTH, description: ICCID_DESCRIPTION }),
        }),
        response: {
          200: AvailableTopUps,
          ...errorResponses("unauthorized", "wrong_environment", "invalid_iccid", "esim_not_found"),
        },
      },
    },
    async (request) => listAvailableTopUps(ctx.db, request.partner!.partner_id, request.params.iccid),
  );

  app.post(
    "/orders/submit-topup",
    {
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
    },
    async (request, reply) => {
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
  );
}
