// The partner's audit log: what its keys and its people changed, and what
// the operator did to its account. The API's GET /v1/audit-log, as a page.
import { readsQuery } from "../shared/query-names.ts";
import { AUDIT_QUERY_NAMES, auditLogBody } from "./audit-log-page.ts";
import { page } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { partnerOf } from "./request.ts";
import { partnerShell } from "./shells.ts";

const PATH = "/console/audit-log";

export const partnerAuditLogPages: ConsolePages = (scope, ctx) => {
  scope.get(
    "/audit-log",
    readsQuery(...AUDIT_QUERY_NAMES.filter((n) => n !== "partner_id")),
    async (request, reply) => {
      const body = await auditLogBody(request, ctx, { partner_id: partnerOf(request) }, PATH);
      const shell = await partnerShell(request, ctx, PATH);
      return reply.type("text/html; charset=utf-8").send(page("Audit log", shell, body));
    },
  );
};
