// Orders pending longer than a threshold (the CLI's `orders pending`, the same query): the ones the
// carrier has not answered for, oldest first, flagged once past PENDING_GIVE_UP_HOURS; below them
// the ES2+ refunds held and the profile inventory (operator-profiles.ts). And one partner's orders
// with the partner's own search (order-search.ts), for the operator's support people.
import type { FastifyRequest } from "fastify";
import { listPartnerOrders } from "../orders/list-partner-orders.ts";
import { listPendingOrders } from "../orders/order-totals.ts";
import { findPartner } from "../partners/list-partners.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { PARTNER_ID } from "../shared/ids.ts";
import { readsQuery } from "../shared/query-names.ts";
import { formatInstant } from "./format.ts";
import { html } from "./html.ts";
import { page, scrollTable } from "./layout.ts";
import { profileSections } from "./operator-profiles.ts";
import { SEARCH_QUERY_NAMES } from "./order-search.ts";
import type { ConsolePages } from "./pages.ts";
import { ordersSearchPage } from "./partner-orders.ts";
import { queryValue } from "./request.ts";
import { operatorShell } from "./shells.ts";

const MAX_LISTED = 500;
const DEFAULT_MINUTES = 10;
const MAX_MINUTES = 60 * 24 * 30;

function age(seconds: number): string {
  const minutes = Math.floor(seconds / 60);
  return minutes >= 60 ? `${Math.floor(minutes / 60)} h ${minutes % 60} min` : `${minutes} min`;
}

const PARTNER_PAGE_SIZE = 25;

/** One partner's orders with the partner's search (the operator API's use case, listPartnerOrders). */
async function partnerOrdersPage(
  request: FastifyRequest,
  ctx: AppContext,
  partner_id: string,
): Promise<string> {
  const action = `/console/admin/partners/${partner_id}/orders`;
  // Asked before the search so that an unknown partner is the 404 page, whatever the search's values.
  const partner = await findPartner(ctx.db, partner_id);
  if (!partner) throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
  const body = await ordersSearchPage(
    request,
    action,
    (search, cursor) =>
      listPartnerOrders(ctx.db, {
        ...search,
        client_reference: null,
        partner_id,
        limit: PARTNER_PAGE_SIZE,
        cursor,
      }),
    // The operator's page of the order (operator-order.ts): settle or refund it from there.
    (order_id) => `/console/admin/orders/${order_id}`,
  );
  const shell = operatorShell(request, ctx, "/console/admin");
  return page(
    `Orders of ${partner.name}`,
    shell,
    html`<p><a href="/console/admin/partners/${partner_id}">${partner.name}</a> · <span class="mono">${partner_id}</span></p>${body}`,
  );
}

export const operatorOrderPages: ConsolePages = (scope, ctx) => {
  scope.get("/partners/:partner_id/orders", readsQuery(...SEARCH_QUERY_NAMES), async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    if (!PARTNER_ID.test(partner_id)) throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
    return reply.type("text/html; charset=utf-8").send(await partnerOrdersPage(request, ctx, partner_id));
  });
  scope.get("/orders", readsQuery("older_than_minutes"), async (request, reply) => {
    const given = Number(queryValue(request, "older_than_minutes") ?? DEFAULT_MINUTES);
    const minutes = Number.isInteger(given) && given >= 0 && given <= MAX_MINUTES ? given : DEFAULT_MINUTES;
    const give_up_hours = ctx.config.pending_give_up_hours;
    // Oldest first: the orders older than the threshold are the head of the list.
    const pending = (await listPendingOrders(ctx.db, give_up_hours, MAX_LISTED)).filter(
      (o) => o.age_seconds >= minutes * 60,
    );
    const table = scrollTable(
      "Pending orders",
      html`<table><thead><tr><th scope="col">Order</th><th scope="col">Type</th><th scope="col">Partner</th>
        <th scope="col">Created</th><th scope="col" class="num">Age</th><th scope="col">Flag</th></tr></thead>
        <tbody>${pending.map(
          (
            o,
          ) => html`<tr><td><a class="mono" href="/console/admin/orders/${o.order_id}">${o.order_id}</a></td><td>${o.type}</td>
            <td><a class="mono" href="/console/admin/partners/${o.partner_id}">${o.partner_id}</a></td>
            <td>${formatInstant(o.created_at)}</td><td class="num">${age(o.age_seconds)}</td>
            <td>${o.given_up ? html`<span class="status failed">given up</span>` : ""}</td></tr>`,
        )}</tbody></table>`,
    );
    const body = html`<form method="get" action="/console/admin/orders" class="panel"><div class="fields">
        <div><label for="older">Pending longer than (minutes)</label>
          <input id="older" name="older_than_minutes" type="number" min="0" max="${MAX_MINUTES}" value="${minutes}"></div>
        <div class="submit"><button type="submit">Show</button></div></div></form>
      ${pending.length === 0 ? html`<div class="panel"><p>No order has been pending that long.</p></div>` : table}
      <p class="hint">Given up: pending longer than PENDING_GIVE_UP_HOURS (${give_up_hours} h). The money stays held until
        the order is settled (open it: Settle, when you know the outcome from the carrier) or, past PENDING_FAIL_AFTER_HOURS
        (${ctx.config.pending_fail_after_hours} h), the resolver's last look ends it (failed, the hold voided, unless the carrier made it).</p>
      ${await profileSections(ctx)}`;
    return reply
      .type("text/html; charset=utf-8")
      .send(page("Pending orders", operatorShell(request, ctx, "/console/admin/orders"), body));
  });
};
