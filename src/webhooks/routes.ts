// The webhooks' partner endpoints, mounted under /v1 in this order (the order of the OpenAPI document).
import { routesOf } from "../shared/endpoint.ts";
import { createEndpointRoute } from "./create-endpoint.route.ts";
import { deleteEndpointRoute } from "./delete-endpoint.route.ts";
import { getEndpointRoute } from "./get-endpoint.route.ts";
import { listDeliveriesRoute } from "./list-deliveries.route.ts";
import { listEndpointsRoute } from "./list-endpoints.route.ts";
import { retryDeliveryRoute } from "./retry-delivery.route.ts";
import { rotateSecretRoute } from "./rotate-secret.route.ts";
import { sendTestEventRoute } from "./send-test-event.route.ts";
import { updateEndpointRoute } from "./update-endpoint.route.ts";

export const webhookRoutes = routesOf([
  createEndpointRoute,
  listEndpointsRoute,
  getEndpointRoute,
  updateEndpointRoute,
  deleteEndpointRoute,
  rotateSecretRoute,
  sendTestEventRoute,
  listDeliveriesRoute,
  retryDeliveryRoute,
]);
