// The events' partner endpoints, mounted under /v1 in this order (the order of the OpenAPI document).
import { routesOf } from "../shared/endpoint.ts";
import { getEventRoute } from "./get-event.route.ts";
import { listEventsRoute } from "./list-events.route.ts";

export const eventRoutes = routesOf([listEventsRoute, getEventRoute]);
