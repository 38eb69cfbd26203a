// The orders' operator endpoints (/admin, behind ADMIN_TOKEN, checked by server/app.ts), in this order.
import { routesOf } from "../shared/endpoint.ts";
import { listPartnerOrdersRoute } from "./list-partner-orders.route.ts";

export const orderAdminRoutes = routesOf([listPartnerOrdersRoute]);
