// GET /v1/audit-log: the partner's own audit log, newest first, by pages.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY, pageParameters, pageSize } from "../shared/schemas.ts";
import { AuditPage, auditFilters, DEFAULT_PAGE_SIZE, listAuditLog } from "./list-audit-log.ts";

export const listAuditLogRoute = endpoint({
  method: "GET",
  url: "/audit-log",
  schema: {
    operationId: "listAuditLog",
    summary: "Your audit log, newest first",
    description:
      "Every change to your account, by whoever made it: your API keys and people, and the operator's actions " +
      "on your account (a wallet credit, your prices; actor `operator`). Each entry is written in the " +
      "transaction of the change it records, so a change is in the log exactly once: a replayed request " +
      "that changes nothing adds nothing. Filter by `action` and by UTC days `from`-`to` (both included). " +
      "Entries are kept at least a year.",
    tags: ["Audit log"],
    security: PARTNER_SECURITY,
    querystring: Type.Object(
      { ...auditFilters, ...pageParameters(DEFAULT_PAGE_SIZE) },
      { additionalProperties: false },
    ),
    response: { 200: AuditPage, ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed") },
  },
  handler: (ctx) => async (request) =>
    listAuditLog(ctx.db, {
      partner_id: request.partner!.partner_id,
      action: request.query.action ?? null,
      from: request.query.from ?? null,
      to: request.query.to ?? null,
      limit: pageSize(request.query.limit, DEFAULT_PAGE_SIZE),
      cursor: request.query.cursor ?? null,
      view: "partner",
    }),
});
