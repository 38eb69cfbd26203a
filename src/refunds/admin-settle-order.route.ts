// POST /admin/orders/{orderID}/settle: the operator's word for a pending order whose carrier cannot
// answer (issue 32; orders/settle-by-operator.ts decides what the carrier's record allows). Here,
// beside the operator's refund and held-refund settlement, because settling finishes an order with
// the steps of its type, and a top-up's steps belong to the top-ups above the orders.
import { Type } from "typebox";
import { orderBody } from "../orders/refunded-order.ts";
import { Order } from "../orders/render-order.ts";
import { settleByOperator } from "../orders/settle-by-operator.ts";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import {
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  errorResponses,
  MAX_REASON_LENGTH,
  NO_CONTROL_CHARACTERS,
  ReasonText,
} from "../shared/schemas.ts";
import { orderFinishers } from "../topups/order-finishers.ts";

const DESCRIPTION =
  "For a pending order whose carrier cannot answer, when the operator knows the outcome out of band. The carrier " +
  "is asked first, by reference, with a look-up that provisions nothing, and its own record wins. `failed` always " +
  "voids the hold at once; a profile or bundle the carrier made is then cancelled (the failure is recorded first, so " +
  "nobody can complete the order meanwhile); a cancel the carrier refuses (an installed eSIM) or cannot answer, and a " +
  "failure while the carrier could not be asked, are still 200, recorded as `carrier_cancel` in the audit entry and " +
  "looked up again later. `completed` posts the charge with what the carrier made: 409 `carrier_disagrees` when it " +
  "made nothing (there is no eSIM to deliver), 503 `carrier_unavailable` while it cannot be asked (a new eSIM is " +
  "usable only with the carrier's ICCID and activation code). An order already completed or failed is 409 " +
  "`order_not_pending`; one being driven right now (the resolver, a retry) 409 `request_in_progress`; a group order " +
  "(several eSIMs, each with its own carrier reference) 409 `group_order_not_settled`: the resolver settles each " +
  "of its eSIMs with the carrier's word, and past PENDING_FAIL_AFTER_HOURS fails those the carrier has no record of. Exactly once; " +
  "audited as `order.settled` with `reason`.";

export const adminSettleOrderRoute = endpoint({
  method: "POST",
  url: "/orders/:orderID/settle",
  schema: {
    operationId: "adminSettleOrder",
    summary: "Settle a pending order the carrier cannot answer for",
    description: DESCRIPTION,
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({
      orderID: Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
    }),
    body: Type.Object(
      {
        outcome: Type.Union([Type.Literal("completed"), Type.Literal("failed")]),
        reason: ReasonText(
          `How the outcome is known (a carrier ticket), kept in the audit log: one line, 1 to ${MAX_REASON_LENGTH} characters once trimmed.`,
        ),
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(Order.properties, {
        additionalProperties: false,
        description: "The settled order (`completed` or `failed`).",
      }),
      ...errorResponses(
        ...ADMIN_ERRORS,
        "order_not_found",
        "order_not_pending",
        "group_order_not_settled",
        "carrier_disagrees",
        "request_in_progress",
        "carrier_unavailable",
      ),
    },
  },
  handler: (ctx) => async (request) => {
    const { orderID } = request.params;
    const settled = await settleByOperator(
      ctx,
      orderID,
      { outcome: request.body.outcome, reason: request.body.reason, actor: actorOf(request) },
      orderFinishers(ctx.config),
    );
    return orderBody(ctx.db, settled);
  },
});
