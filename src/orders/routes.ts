// The orders' partner endpoints, mounted under /v1 in this order (the order of the OpenAPI document).
import { routesOf } from "../shared/endpoint.ts";
import { getOrderRoute } from "./get-order.route.ts";
import { listOrdersRoute } from "./list-orders.route.ts";
import { submitOrderRoute } from "./submit-order.route.ts";

export const orderRoutes = routesOf([submitOrderRoute, getOrderRoute, listOrdersRoute]);
