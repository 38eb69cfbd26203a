// GET /v1/webhook-endpoints: the partner's endpoints, newest first (at most 10: one page), no secrets.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { listEndpoints } from "./manage-endpoint.ts";
import { WebhookEndpoint } from "./render-webhooks.ts";

export const listEndpointsRoute = endpoint({
  method: "GET",
  url: "/webhook-endpoints",
  schema: {
    operationId: "listWebhookEndpoints",
    summary: "Your webhook endpoints",
    tags: ["Webhooks"],
    security: PARTNER_SECURITY,
    response: {
      200: Type.Object(
        { data: Type.Array(WebhookEndpoint), has_more: Type.Boolean(), next_cursor: Type.Null() },
        {
          additionalProperties: false,
          description: "All of them at once (at most 10): never a second page.",
        },
      ),
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed"),
    },
  },
  handler: (ctx) => async (request) => ({
    data: await listEndpoints(ctx, request.partner!.partner_id),
    has_more: false,
    next_cursor: null,
  }),
});
