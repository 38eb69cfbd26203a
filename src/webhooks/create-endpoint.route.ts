// POST /v1/webhook-endpoints: add an endpoint; its signing secret is in this answer only.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { createEndpoint } from "./create-endpoint.ts";
import { Description, EventTypes, WebhookEndpointWithSecret, WebhookUrl } from "./render-webhooks.ts";

/** What a new endpoint is made of: the API's body, and the console's form once read. */
export const CreateEndpointBody = Type.Object(
  {
    url: WebhookUrl,
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    event_types: Type.Optional(EventTypes),
  },
  { additionalProperties: false },
);

export const createEndpointRoute = endpoint({
  method: "POST",
  url: "/webhook-endpoints",
  schema: {
    operationId: "createWebhookEndpoint",
    summary: "Add a webhook endpoint (at most 10)",
    description:
      "Events of the types you choose (none: all) are POSTed to `url`, signed the Standard Webhooks way with " +
      "`secret`, which this answer shows once. Only events recorded after the endpoint exists are sent to it; " +
      "GET /v1/events has the earlier ones.",
    tags: ["Webhooks"],
    security: PARTNER_SECURITY,
    body: CreateEndpointBody,
    response: {
      201: WebhookEndpointWithSecret,
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
        "invalid_webhook_url",
        "webhook_endpoint_limit_reached",
      ),
    },
  },
  handler: (ctx) => async (request, reply) =>
    reply
      .code(201)
      .send(await createEndpoint(ctx, request.partner!.partner_id, request.body, actorOf(request))),
});
