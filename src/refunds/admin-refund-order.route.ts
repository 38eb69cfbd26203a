// POST /admin/orders/{orderID}/refund: the operator refunds an order on its partner's behalf
// (contract "Support and finance work"), under the same carrier rules as the partner's refund but
// not its window, with a reason. Audited as the operator's order.refunded, reason included.
import { Type } from "typebox";
import { orderOf } from "../orders/refunded-order.ts";
import { Order } from "../orders/render-order.ts";
import { endpoint } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import { actorOf } from "../shared/http-types.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, errorResponses, NO_CONTROL_CHARACTERS } from "../shared/schemas.ts";
import { REFUND_CONFLICT, sendAnswer } from "./refund-order.route.ts";
import { refundOrder } from "./refund-order.ts";

const DESCRIPTION =
  "Refunds a partner's order as POST /v1/orders/{orderID}/refund does (the carrier cancels, the wallet is " +
  "credited exactly what the order cost, once, unused top-ups of the eSIM with it), except that " +
  "`REFUND_WINDOW_DAYS` does not apply. An installed eSIM or a used bundle is still 409 `refund_not_allowed`. " +
  "An order already refunded answers 200 again and credits nothing. The refund counts against the partner's " +
  "`REFUNDS_PER_PARTNER_PER_HOUR`. The audit log records `order.refunded` as the operator's, with `reason`.";

export const adminRefundOrderRoute = endpoint({
  method: "POST",
  url: "/orders/:orderID/refund",
  schema: {
    operationId: "adminRefundOrder",
    summary: "Refund a partner's order on its behalf",
    description: DESCRIPTION,
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({
      orderID: Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
    }),
    body: Type.Object(
      {
        reason: Type.String({
          minLength: 1,
          maxLength: 500,
          pattern: "^(?=.*\\S)[^\\x00-\\x1f\\x7f]+$",
          description: "Why (a support ticket, a goodwill gesture): kept in the audit log.",
        }),
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(Order.properties, {
        additionalProperties: false,
        description: "The refunded order (`status` `refunded`).",
      }),
      ...errorResponses(...ADMIN_ERRORS, "order_not_found", "carrier_unavailable"),
      409: REFUND_CONFLICT,
    },
  },
  handler: (ctx) => async (request, reply) => {
    const { orderID } = request.params;
    const order = await orderOf(ctx.db, orderID);
    if (order === null) throw new ApiError("order_not_found", `No order ${orderID}.`);
    const answer = await refundOrder(ctx, order.partner_id, orderID, null, String(request.id), {
      actor: actorOf(request),
      reason: request.body.reason.trim(),
      window_applies: false,
    });
    return sendAnswer(reply, answer);
  },
});
