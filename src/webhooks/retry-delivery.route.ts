// POST /v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry: one more attempt, now.
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { DeliveryParams } from "./endpoint-params.ts";
import { retryDeliveryNow } from "./list-deliveries.ts";
import { Delivery } from "./render-webhooks.ts";

export const retryDeliveryRoute = endpoint({
  method: "POST",
  url: "/webhook-endpoints/:endpoint_id/deliveries/:delivery_id/retry",
  schema: {
    operationId: "retryWebhookDelivery",
    summary: "Retry a delivery now",
    description:
      "Whatever its state: a failed delivery gets one more attempt, a succeeded one is sent again (same " +
      "`webhook-id`). The answer is the delivery, pending. A delivery of a disabled endpoint waits until the " +
      "endpoint is enabled again (`PATCH` with `status` `enabled`). A delivery is kept as long as its event: the " +
      "hourly purge of events 30 days old deletes one still pending with its event, unsent.",
    tags: ["Webhooks"],
    security: PARTNER_SECURITY,
    params: DeliveryParams,
    response: {
      202: Delivery,
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
        "webhook_endpoint_not_found",
        "delivery_not_found",
      ),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const { endpoint_id, delivery_id } = request.params;
    return reply
      .code(202)
      .send(await retryDeliveryNow(ctx, request.partner!.partner_id, endpoint_id, delivery_id));
  },
});
