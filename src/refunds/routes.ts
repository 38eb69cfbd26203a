// The refunds' endpoints: for partners under /v1, for the operator under /admin.
import { routesOf } from "../shared/endpoint.ts";
import { adminRefundOrderRoute } from "./admin-refund-order.route.ts";
import { adminSettleOrderRoute } from "./admin-settle-order.route.ts";
import { refundOrderRoute } from "./refund-order.route.ts";
import { settleHeldRefundRoute } from "./settle-held-refund.route.ts";

export const refundRoutes = routesOf([refundOrderRoute]);
export const refundAdminRoutes = routesOf([
  adminRefundOrderRoute,
  settleHeldRefundRoute,
  adminSettleOrderRoute,
]);
