// POST /admin/orders/{orderID}/refund/settle: the operator's verdict on a refund held because the
// SM-DP+'s answer to CancelOrder was ambiguous (settle-held-refund.ts; the CLI's `refunds settle`).
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, errorResponses, NO_CONTROL_CHARACTERS } from "../shared/schemas.ts";
import { RefundProblem } from "./refund-order.route.ts";
import { refundNotAllowed } from "./refund-rules.ts";
import { HeldRefundNotSettled, settleHeldRefund } from "./settle-held-refund.ts";

const DESCRIPTION =
  "A refund whose CancelOrder the SM-DP+ answered 8.2.1/3.5 after the service's earlier CancelOrder got no " +
  "answer, with no download notification, is held: nothing is credited until this verdict or a download " +
  "notification. Ask the SM-DP+'s operator what became of the ICCID first. `cancelled`: the refund finishes " +
  "now (credited once), unless the SM-DP+ has meanwhile notified a download or the eSIM reads past `released` " +
  "(409 `refund_not_allowed`, `esim_installed`). `installed`: CancelOrder is asked afresh and its refusal refuses the refund. " +
  "`outcome` `recorded`: a retry or the refund sweep was driving it at that moment and finishes it. " +
  "404 `order_not_found`: no such order, or none of its refunds is held.";

/** 409 `refund_not_allowed` carries its `reason`, as the refund route's does. */
const SettleProblem = Type.Object(RefundProblem.properties, {
  additionalProperties: false,
  "x-error-codes": ["refund_not_allowed"],
});

const SettleResponse = Type.Object(
  {
    order_id: Type.String(),
    outcome: Type.Union([Type.Literal("refunded"), Type.Literal("refused"), Type.Literal("recorded")]),
  },
  { additionalProperties: false },
);

export const settleHeldRefundRoute = endpoint({
  method: "POST",
  url: "/orders/:orderID/refund/settle",
  schema: {
    operationId: "adminSettleHeldRefund",
    summary: "Settle a refund held on an ambiguous CancelOrder",
    description: DESCRIPTION,
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({
      orderID: Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
    }),
    body: Type.Object(
      {
        outcome: Type.Union([Type.Literal("cancelled"), Type.Literal("installed")], {
          description: "What the SM-DP+'s operator reports of the profile.",
        }),
      },
      { additionalProperties: false },
    ),
    response: {
      200: SettleResponse,
      ...errorResponses(...ADMIN_ERRORS, "order_not_found", "carrier_unavailable"),
      409: {
        description: "Problem details: `refund_not_allowed` with `reason` `esim_installed`.",
        content: { "application/problem+json": { schema: SettleProblem } },
      },
    },
  },
  handler: (ctx) => async (request, reply) => {
    const { orderID } = request.params;
    let driven: Awaited<ReturnType<typeof settleHeldRefund>>;
    try {
      driven = await settleHeldRefund(ctx, orderID, request.body.outcome);
    } catch (error) {
      if (!(error instanceof HeldRefundNotSettled)) throw error;
      if (error.code === "not_found") throw new ApiError("order_not_found", error.message);
      throw refundNotAllowed(orderID, "esim_installed", ctx.config.refund_window_days);
    }
    const outcome =
      driven === null || driven === "topup_pending"
        ? "recorded"
        : driven.status === 200
          ? "refunded"
          : "refused";
    return reply.code(200).send({ order_id: orderID, outcome });
  },
});
