// The operator's audit log: every partner's entries and the operator's own (a catalog import),
// filtered by partner, action and UTC days. The API's GET /admin/audit-log, as a page.
import { readsQuery } from "../shared/query-names.ts";
import { AUDIT_QUERY_NAMES, auditLogBody } from "./audit-log-page.ts";
import { page } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { operatorShell } from "./shells.ts";

const PATH = "/console/admin/audit-log";

export const operatorAuditLogPages: ConsolePages = (scope, ctx) => {
  scope.get("/audit-log", readsQuery(...AUDIT_QUERY_NAMES), async (request, reply) => {
    const body = await auditLogBody(request, ctx, "operator", PATH);
    return reply
      .type("text/html; charset=utf-8")
      .send(page("Audit log", operatorShell(request, ctx, PATH), body));
  });
};
