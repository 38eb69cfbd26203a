// GET /v1/orders/{orderID}/events: the order's timeline (its events and its eSIM's), oldest first.
import { Type } from "typebox";
import { MAX_TIMELINE_EVENTS, orderTimeline } from "../events/order-timeline.ts";
import { Event } from "../events/render-event.ts";
import { supportOrder } from "../orders/order-for-support.ts";
import { endpoint } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import { errorResponses, NO_CONTROL_CHARACTERS, PARTNER_SECURITY } from "../shared/schemas.ts";

const DESCRIPTION =
  "Every event of the order (`order.*`) and of its eSIM (`esim.*`: the eSIM it bought, or the one a " +
  "top-up topped up), oldest first, in one answer: a support timeline. Events are the ones GET /v1/events " +
  `shows, kept 30 days. At most ${MAX_TIMELINE_EVENTS} (the oldest), far more than an order makes.`;

export const listOrderEventsRoute = endpoint({
  method: "GET",
  url: "/orders/:orderID/events",
  schema: {
    operationId: "listOrderEvents",
    summary: "An order's timeline",
    description: DESCRIPTION,
    tags: ["Orders"],
    security: PARTNER_SECURITY,
    params: Type.Object({
      orderID: Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
    }),
    response: {
      200: Type.Object({ data: Type.Array(Event) }, { additionalProperties: false }),
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed", "order_not_found"),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const partner_id = request.partner!.partner_id;
    const order = await supportOrder(ctx.db, partner_id, request.params.orderID);
    if (!order) throw new ApiError("order_not_found", "No such order for this partner.");
    const data = await orderTimeline(ctx.db, { partner_id, order_id: order.order_id, iccid: order.iccid });
    return reply.send({ data });
  },
});
