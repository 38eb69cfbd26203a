// GET /admin/partners/{partner_id}/orders: a partner's orders as the partner lists them, for the
// operator's support people.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, errorResponses, PrefixedId, pageSize } from "../shared/schemas.ts";
import { DEFAULT_PAGE_SIZE, OrderPage } from "./list-orders.ts";
import { listPartnerOrders } from "./list-partner-orders.ts";
import { ORDER_FILTERS_DESCRIPTION, orderFilterParameters, orderFiltersOf } from "./order-filters.ts";

export const listPartnerOrdersRoute = endpoint({
  method: "GET",
  url: "/partners/:partner_id/orders",
  schema: {
    operationId: "adminListPartnerOrders",
    summary: "A partner's orders, newest first, with the partner's filters",
    description: `The partner's own list (GET /v1/profile/orders), same page and cursor. ${ORDER_FILTERS_DESCRIPTION}`,
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr") }),
    querystring: Type.Object(orderFilterParameters, { additionalProperties: false }),
    response: { 200: OrderPage, ...errorResponses(...ADMIN_ERRORS, "partner_not_found") },
  },
  handler: (ctx) => async (request) => {
    const query = request.query;
    return listPartnerOrders(ctx.db, {
      ...orderFiltersOf(query),
      partner_id: request.params.partner_id,
      limit: pageSize(query.limit, DEFAULT_PAGE_SIZE),
      cursor: query.cursor ?? null,
    });
  },
});
