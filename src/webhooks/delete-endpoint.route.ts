// DELETE /v1/webhook-endpoints/{endpoint_id}: nothing more is sent to it; its delivery log goes too.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { EndpointParams } from "./endpoint-params.ts";
import { removeEndpoint } from "./manage-endpoint.ts";

export const deleteEndpointRoute = endpoint({
  method: "DELETE",
  url: "/webhook-endpoints/:endpoint_id",
  schema: {
    operationId: "deleteWebhookEndpoint",
    summary: "Delete a webhook endpoint",
    tags: ["Webhooks"],
    security: PARTNER_SECURITY,
    description:
      "Allowed while the partner is suspended (it only takes access away: no more traveller data is sent there).",
    params: EndpointParams,
    response: {
      204: Type.Null({ description: "Deleted." }),
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "ip_not_allowed",
        "webhook_endpoint_not_found",
      ),
    },
  },
  handler: (ctx) => async (request, reply) => {
    await removeEndpoint(ctx, request.partner!.partner_id, request.params.endpoint_id, actorOf(request));
    return reply.code(204).send(null);
  },
});
