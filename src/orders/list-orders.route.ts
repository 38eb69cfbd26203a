// GET /v1/profile/orders: the partner's orders, newest first, by pages, filtered for support.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY, pageSize } from "../shared/schemas.ts";
import { DEFAULT_PAGE_SIZE, listOrders, OrderPage } from "./list-orders.ts";
import { ORDER_FILTERS_DESCRIPTION, orderFilterParameters, orderFiltersOf } from "./order-filters.ts";

export const listOrdersRoute = endpoint({
  method: "GET",
  url: "/profile/orders",
  schema: {
    operationId: "listOrders",
    summary: "Your orders, newest first",
    description: ORDER_FILTERS_DESCRIPTION,
    tags: ["Orders"],
    security: PARTNER_SECURITY,
    querystring: Type.Object(orderFilterParameters, { additionalProperties: false }),
    response: {
      200: OrderPage,
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed"),
    },
  },
  handler: (ctx) => async (request) => {
    const query = request.query;
    return listOrders(ctx.db, {
      ...orderFiltersOf(query),
      partner_id: request.partner!.partner_id,
      limit: pageSize(query.limit, DEFAULT_PAGE_SIZE),
      cursor: query.cursor ?? null,
    });
  },
});
