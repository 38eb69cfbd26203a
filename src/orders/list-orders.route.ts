// GET /v1/profile/orders: the partner's orders, newest first, by pages.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, NO_CONTROL_CHARACTERS, PARTNER_SECURITY } from "../shared/schemas.ts";
import { DEFAULT_PAGE_SIZE, listOrders, MAX_PAGE_SIZE, OrderPage } from "./list-orders.ts";

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
        client_reference: Type.Optional(
          Type.String({ minLength: 1, maxLength: 128, pattern: NO_CONTROL_CHARACTERS }),
        ),
        limit: Type.Optional(
          Type.String({
            pattern: "^(100|[1-9][0-9]?)$",
            description: `1-${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}.`,
          }),
        ),
        cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      },
      { additionalProperties: false },
    ),
    response: { 200: OrderPage, ...errorResponses("unauthorized", "wrong_environment") },
  },
  handler: (ctx) => async (request) => {
    const query = request.query;
    return listOrders(ctx.db, {
      partner_id: request.partner!.partner_id,
      client_reference: query.client_reference ?? null,
      limit: query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit),
      cursor: query.cursor ?? null,
    });
  },
});
