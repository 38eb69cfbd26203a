// POST /v1/webhook-endpoints/{endpoint_id}/rotate-secret: a new signing secret, shown once.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { EndpointParams } from "./endpoint-params.ts";
import { rotateEndpointSecret } from "./manage-endpoint.ts";

export const rotateSecretRoute = endpoint({
  method: "POST",
  url: "/webhook-endpoints/:endpoint_id/rotate-secret",
  schema: {
    operationId: "rotateWebhookSecret",
    summary: "Rotate the signing secret",
    description:
      "For 24 hours the previous secret keeps signing beside the new one (`webhook-signature` then carries two " +
      "space-separated signatures), so your receiver verifies with either while you deploy the new one. A " +
      "second rotation within those 24 hours does not cut them short: every replaced secret signs until 24 hours " +
      "after its own replacement (three signatures after two rotations), up to five signatures at once (the " +
      "current secret and the four replaced last; a fifth rotation within 24 hours retires the oldest at once).",
    tags: ["Webhooks"],
    security: PARTNER_SECURITY,
    params: EndpointParams,
    response: {
      200: Type.Object({ secret: Type.String() }, { additionalProperties: false }),
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
  handler: (ctx) => async (request) =>
    rotateEndpointSecret(ctx, request.partner!.partner_id, request.params.endpoint_id, actorOf(request)),
});
