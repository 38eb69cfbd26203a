// PATCH /v1/webhook-endpoints/{endpoint_id}: change the URL, description, event types or status.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { EndpointParams } from "./endpoint-params.ts";
import { changeEndpoint } from "./manage-endpoint.ts";
import { Description, EndpointStatus, EventTypes, WebhookEndpoint, WebhookUrl } from "./render-webhooks.ts";

export const updateEndpointRoute = endpoint({
  method: "PATCH",
  url: "/webhook-endpoints/:endpoint_id",
  schema: {
    operationId: "updateWebhookEndpoint",
    summary: "Change a webhook endpoint",
    description:
      "Fields left out stay as they are. `status: enabled` re-enables an endpoint that was disabled (a 410, " +
      "5 days of failures, or you); its deliveries that were waiting go out then.",
    tags: ["Webhooks"],
    security: PARTNER_SECURITY,
    params: EndpointParams,
    body: Type.Object(
      {
        url: Type.Optional(WebhookUrl),
        description: Type.Optional(Type.Union([Description, Type.Null()])),
        event_types: Type.Optional(EventTypes),
        status: Type.Optional(EndpointStatus),
      },
      { additionalProperties: false },
    ),
    response: {
      200: WebhookEndpoint,
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
        "webhook_endpoint_not_found",
        "invalid_webhook_url",
      ),
    },
  },
  handler: (ctx) => async (request) =>
    changeEndpoint(
      ctx,
      request.partner!.partner_id,
      request.params.endpoint_id,
      request.body,
      actorOf(request),
    ),
});
