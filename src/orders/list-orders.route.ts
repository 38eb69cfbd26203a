// GET /v1/profile/orders: the partner's orders, newest first, by pages.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import {
  ClientReferenceFilter,
  errorResponses,
  PARTNER_SECURITY,
  pageParameters,
  pageSize,
} from "../shared/schemas.ts";
import { DEFAULT_PAGE_SIZE, listOrders, OrderPage } from "./list-orders.ts";

export const listOrdersRoute = endpoint({
  method: "GET",
  url: "/profile/orders",
  schema: {
    operationId: "listOrders",
    summary: "Your orders, newest first",
    description: "Pages stay stable while new orders arrive. Filter by the `client_reference` you stored.",
    tags: ["Orders"],
    security: PARTNER_SECURITY,
    querystring: Type.Object(
      {
        client_reference: ClientReferenceFilter,
        ...pageParameters(DEFAULT_PAGE_SIZE),
      },
      { additionalProperties: false },
    ),
    response: { 200: OrderPage, ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed") },
  },
  handler: (ctx) => async (request) => {
    const query = request.query;
    return listOrders(ctx.db, {
      partner_id: request.partner!.partner_id,
      client_reference: query.client_reference ?? null,
      limit: pageSize(query.limit, DEFAULT_PAGE_SIZE),
      cursor: query.cursor ?? null,
    });
  },
});
