// The refunds' partner endpoints, mounted under /v1.
import { routesOf } from "../shared/endpoint.ts";
import { refundOrderRoute } from "./refund-order.route.ts";

export const refundRoutes = routesOf([refundOrderRoute]);
