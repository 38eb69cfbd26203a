// GET /v1/webhook-endpoints/{endpoint_id}/deliveries: the endpoint's delivery log, newest first.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY, pageParameters, pageSize } from "../shared/schemas.ts";
import { EndpointParams } from "./endpoint-params.ts";
import { DEFAULT_PAGE_SIZE, DeliveryPage, listDeliveries } from "./list-deliveries.ts";

export const listDeliveriesRoute = endpoint({
  method: "GET",
  url: "/webhook-endpoints/:endpoint_id/deliveries",
  schema: {
    operationId: "listWebhookDeliveries",
    summary: "The endpoint's deliveries, newest first",
    description:
      "A delivery is kept as long as its event: an hourly purge deletes both once the event is 30 days " +
      "old. Filter by `status`.",
    tags: ["Webhooks"],
    security: PARTNER_SECURITY,
    params: EndpointParams,
    querystring: Type.Object(
      {
        status: Type.Optional(
          Type.Union([Type.Literal("pending"), Type.Literal("succeeded"), Type.Literal("failed")]),
        ),
        ...pageParameters(DEFAULT_PAGE_SIZE),
      },
      { additionalProperties: false },
    ),
    response: {
      200: DeliveryPage,
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed", "webhook_endpoint_not_found"),
    },
  },
  handler: (ctx) => async (request) =>
    listDeliveries(ctx, {
      partner_id: request.partner!.partner_id,
      endpoint_id: request.params.endpoint_id,
      status: request.query.status ?? null,
      limit: pageSize(request.query.limit, DEFAULT_PAGE_SIZE),
      cursor: request.query.cursor ?? null,
    }),
});
