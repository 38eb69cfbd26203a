// GET /v1/orders/{orderID}: one of the partner's orders.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import { errorResponses, NO_CONTROL_CHARACTERS, PARTNER_SECURITY } from "../shared/schemas.ts";
import { orderById, purchasesOf } from "./orders.sql.ts";
import { Order, renderOrder } from "./render-order.ts";

export const getOrderRoute = endpoint({
  method: "GET",
  url: "/orders/:orderID",
  schema: {
    operationId: "getOrder",
    summary: "One of your orders",
    tags: ["Orders"],
    security: PARTNER_SECURITY,
    params: Type.Object({
      orderID: Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
    }),
    response: {
      200: Order,
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed", "order_not_found"),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const order = await orderById(ctx.db, request.params.orderID, request.partner!.partner_id);
    if (!order) throw new ApiError("order_not_found", "No such order for this partner.");
    return reply.send(renderOrder(order, await purchasesOf(ctx.db, [order.order_id])));
  },
});
