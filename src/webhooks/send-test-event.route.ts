// POST /v1/webhook-endpoints/{endpoint_id}/test: a `webhook.test` event to this endpoint only.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { EndpointParams } from "./endpoint-params.ts";
import { sendTestEvent } from "./send-test-event.ts";

export const sendTestEventRoute = endpoint({
  method: "POST",
  url: "/webhook-endpoints/:endpoint_id/test",
  schema: {
    operationId: "sendWebhookTestEvent",
    summary: "Send a test event to this endpoint",
    description:
      "Delivered like any event (signed, retried, logged); a disabled endpoint gets it once enabled.",
    tags: ["Webhooks"],
    security: PARTNER_SECURITY,
    params: EndpointParams,
    response: {
      202: Type.Object({ event_id: Type.String() }, { additionalProperties: false }),
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
        "webhook_endpoint_not_found",
      ),
    },
  },
  handler: (ctx) => async (request, reply) =>
    reply.code(202).send(await sendTestEvent(ctx, request.partner!.partner_id, request.params.endpoint_id)),
});
