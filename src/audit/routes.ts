// The audit log's endpoints: the partner's under /v1, the operator's under /admin.
import { routesOf } from "../shared/endpoint.ts";
import { adminListAuditLogRoute } from "./admin-list-audit-log.route.ts";
import { listAuditLogRoute } from "./list-audit-log.route.ts";

export const auditRoutes = routesOf([listAuditLogRoute]);
export const auditAdminRoutes = routesOf([adminListAuditLogRoute]);
