// GET /v1/webhook-endpoints/{endpoint_id}: one of the partner's endpoints (no secret).
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { EndpointParams } from "./endpoint-params.ts";
import { getEndpoint } from "./manage-endpoint.ts";
import { WebhookEndpoint } from "./render-webhooks.ts";

export const getEndpointRoute = endpoint({
  method: "GET",
  url: "/webhook-endpoints/:endpoint_id",
  schema: {
    operationId: "getWebhookEndpoint",
    summary: "One of your webhook endpoints",
    tags: ["Webhooks"],
    security: PARTNER_SECURITY,
    params: EndpointParams,
    response: {
      200: WebhookEndpoint,
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed", "webhook_endpoint_not_found"),
    },
  },
  handler: (ctx) => async (request) =>
    getEndpoint(ctx, request.partner!.partner_id, request.params.endpoint_id),
});
