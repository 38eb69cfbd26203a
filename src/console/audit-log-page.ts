// The audit log's console pages (issue 31): the partner's own log at /console/audit-log and the
// operator's view of all at /console/admin/audit-log, with the API's filters (action, UTC days;
// the operator's by partner too) and its cursor pages. The table scrolls sideways on a phone.
import type { FastifyRequest } from "fastify";
import { type AuditRecord, auditRecords } from "../audit/list-audit-log.ts";
import type { AppContext } from "../shared/context.ts";
import { formatInstant } from "./format.ts";
import { type Html, html } from "./html.ts";
import { scrollTable } from "./layout.ts";
import { queryValue } from "./request.ts";

const PAGE_SIZE = 25;
/** Characters of an entry's details shown in the table: the API has them whole. */
const MAX_DETAILS_SHOWN = 300;
const MAX_FILTER_LENGTH = 100;

/** The filters a page was asked for; the console hands them to the API's use case as they are. */
export type AuditFilters = {
  partner_id: string | null;
  action: string | null;
  from: string | null;
  to: string | null;
};

export const AUDIT_QUERY_NAMES = ["partner_id", "action", "from", "to", "cursor"] as const;

function filtersOf(request: FastifyRequest, with_partner: boolean): AuditFilters {
  const value = (name: string) => queryValue(request, name)?.slice(0, MAX_FILTER_LENGTH) ?? null;
  return {
    partner_id: with_partner ? value("partner_id") : null,
    action: value("action"),
    from: value("from"),
    to: value("to"),
  };
}

function actorCell(entry: AuditRecord["entry"]): Html {
  const { type, id, email } = entry.actor;
  const who = email ?? id ?? "the service";
  return html`<span class="hint">${type === "api_key" ? "API key" : type}</span> <span class="mono">${who}</span>`;
}

function details(entry: AuditRecord["entry"]): string {
  const text = JSON.stringify(entry.details);
  return text === "{}" ? "" : text.length > MAX_DETAILS_SHOWN ? `${text.slice(0, MAX_DETAILS_SHOWN)}…` : text;
}

function table(records: readonly AuditRecord[], with_partner: boolean): Html {
  if (records.length === 0) return html`<div class="panel"><p>No entries.</p></div>`;
  return scrollTable(
    "Audit log",
    html`<table>
      <thead><tr><th scope="col">When</th>${with_partner ? html`<th scope="col">Partner</th>` : ""}
        <th scope="col">Action</th><th scope="col">By</th><th scope="col">Target</th>
        <th scope="col">Address</th><th scope="col">Details</th></tr></thead>
      <tbody>${records.map(
        ({ partner_id, entry }) => html`<tr>
          <td>${formatInstant(entry.created_at)}</td>
          ${
            with_partner
              ? html`<td>${
                  partner_id === null
                    ? "operator"
                    : html`<a class="mono" href="/console/admin/partners/${partner_id}">${partner_id}</a>`
                }</td>`
              : ""
          }
          <td class="mono">${entry.action}</td>
          <td>${actorCell(entry)}</td>
          <td>${entry.target.type} <span class="mono">${entry.target.id ?? ""}</span></td>
          <td class="mono">${entry.ip ?? "—"}</td>
          <td class="mono">${details(entry)}</td>
        </tr>`,
      )}</tbody>
    </table>`,
  );
}

function filterForm(action: string, filters: AuditFilters, with_partner: boolean): Html {
  return html`<form method="get" action="${action}" class="panel" role="search">
    <div class="fields">
      ${
        with_partner
          ? html`<div><label for="partner_id">Partner</label>
        <input id="partner_id" name="partner_id" value="${filters.partner_id ?? ""}" placeholder="ptr_…" maxlength="${MAX_FILTER_LENGTH}"></div>`
          : ""
      }
      <div><label for="action">Action</label>
        <input id="action" name="action" value="${filters.action ?? ""}" placeholder="wallet.credited" maxlength="${MAX_FILTER_LENGTH}"></div>
      <div><label for="from">From (UTC day)</label>
        <input id="from" name="from" type="date" value="${filters.from ?? ""}"></div>
      <div><label for="to">To (UTC day)</label>
        <input id="to" name="to" type="date" value="${filters.to ?? ""}"></div>
      <div class="submit"><button type="submit">Show</button></div>
    </div>
  </form>`;
}

/**
 * The body of an audit log page: the filters, a page of entries, and the pager. `scope`: the
 * signed-in partner's own log, or every entry (the operator's, filtered by partner when asked).
 */
export async function auditLogBody(
  request: FastifyRequest,
  ctx: AppContext,
  scope: { partner_id: string } | "operator",
  path: string,
): Promise<Html> {
  const with_partner = scope === "operator";
  const filters = filtersOf(request, with_partner);
  const cursor = queryValue(request, "cursor");
  const page = await auditRecords(ctx.db, {
    ...filters,
    partner_id: scope === "operator" ? filters.partner_id : scope.partner_id,
    limit: PAGE_SIZE,
    cursor,
    view: scope === "operator" ? "operator" : "partner",
  });
  const kept = Object.entries(filters).filter((entry): entry is [string, string] => entry[1] !== null);
  const first = new URLSearchParams(kept).toString();
  const next = new URLSearchParams([...kept, ["cursor", page.next_cursor ?? ""]]).toString();
  return html`${filterForm(path, filters, with_partner)}
    ${table(page.records, with_partner)}
    <div class="pager">${cursor ? html`<a href="${path}${first ? `?${first}` : ""}">Newest</a>` : ""}${
      page.next_cursor ? html`<a href="${path}?${next}">Older entries</a>` : ""
    }</div>
    <p class="hint">Every change is recorded in the transaction that makes it; entries are kept at least a year.</p>`;
}
