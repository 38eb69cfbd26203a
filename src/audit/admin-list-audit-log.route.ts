// GET /admin/audit-log: every partner's audit log and the operator's own, newest first, by pages.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import {
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  errorResponses,
  PrefixedId,
  pageParameters,
  pageSize,
} from "../shared/schemas.ts";
import { AuditPage, auditFilters, DEFAULT_PAGE_SIZE, listAuditLog } from "./list-audit-log.ts";

export const adminListAuditLogRoute = endpoint({
  method: "GET",
  url: "/audit-log",
  schema: {
    operationId: "adminListAuditLog",
    summary: "The audit log of every partner and of the operator, newest first",
    description:
      "Filter by `partner_id` (that partner's log, as GET /v1/audit-log shows it), `action` and UTC days " +
      "`from`-`to` (both included). Without `partner_id`, the operator's own entries (a catalog import) too.",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    querystring: Type.Object(
      {
        partner_id: Type.Optional(PrefixedId("ptr")),
        ...auditFilters,
        ...pageParameters(DEFAULT_PAGE_SIZE),
      },
      { additionalProperties: false },
    ),
    response: { 200: AuditPage, ...errorResponses(...ADMIN_ERRORS) },
  },
  handler: (ctx) => async (request) =>
    listAuditLog(ctx.db, {
      partner_id: request.query.partner_id ?? null,
      action: request.query.action ?? null,
      from: request.query.from ?? null,
      to: request.query.to ?? null,
      limit: pageSize(request.query.limit, DEFAULT_PAGE_SIZE),
      cursor: request.query.cursor ?? null,
    }),
});
