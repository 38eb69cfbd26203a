// The operator's partners: list (search by name or id, filter by status, pages) and create, and per
// partner its standing (suspend, reactivate, rename: issue 32), balance, recent orders, keys (issue,
// revoke), wallet credits (idempotent by reference, as the admin API and the CLI) and price list.
import type { FastifyRequest } from "fastify";
import { getPartnerPricing, setPartnerPricing } from "../catalog/partner-pricing.ts";
import { listOrders } from "../orders/list-orders.ts";
import { CreatePartnerBody } from "../partners/create-partner.route.ts";
import { createPartner } from "../partners/create-partner.ts";
import { issueApiKey } from "../partners/issue-api-key.ts";
import { findPartner, type PartnerSummary, partnerKeys } from "../partners/list-partners.ts";
import { revokeApiKey } from "../partners/revoke-api-key.ts";
import { listPartnersPage, MAX_PARTNER_QUERY_LENGTH } from "../partners/search-partners.ts";
import { UpdatePartnerBody } from "../partners/update-partner.route.ts";
import {
  MAX_PARTNER_NAME_LENGTH,
  MAX_SUSPEND_REASON_LENGTH,
  patchPartner,
} from "../partners/update-partner.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { actorOf } from "../shared/http-types.ts";
import { PARTNER_ID } from "../shared/ids.ts";
import { readsQuery } from "../shared/query-names.ts";
import { renderWallet } from "../wallet/get-wallet.route.ts";
import { getWalletBalance } from "../wallet/get-wallet-balance.ts";
import { formatInstant, formatMoney, statusPill } from "./format.ts";
import { type Html, html } from "./html.ts";
import { issuedKey, issueKeyForm, keyAccessFromForm, keysTable } from "./keys-table.ts";
import { csrfField, notice, page, scrollTable } from "./layout.ts";
import { creditPage, parsePricingForm, pricingPanel } from "./operator-partner-money.ts";
import type { ConsolePages } from "./pages.ts";
import { checked, formOf, queryValue, seeOther } from "./request.ts";
import { operatorShell } from "./shells.ts";
import { partnerPeoplePanel } from "./team-pages.ts";

const LISTED_PARTNERS = 50;
/** Recent orders shown on a partner's page; the rest are on its orders pages. */
const RECENT_ORDERS = 10;

/** The list's filters from the query string, checked as the API checks them (a wrong value: ignored). */
function listFilters(request: FastifyRequest) {
  const q = (queryValue(request, "q") ?? "").trim().slice(0, MAX_PARTNER_QUERY_LENGTH);
  const status = queryValue(request, "status");
  return {
    q: q === "" ? null : q,
    status: status === "active" || status === "suspended" ? status : null,
    cursor: queryValue(request, "cursor"),
  } as const;
}

function searchForm(filters: ReturnType<typeof listFilters>): Html {
  const option = (value: string, label: string) =>
    html`<option value="${value}"${(filters.status ?? "") === value ? html` selected` : ""}>${label}</option>`;
  return html`<form method="get" action="/console/admin" class="panel" role="search"><div class="fields">
      <div><label for="q">Name or partner id</label><input id="q" name="q" type="search" maxlength="${MAX_PARTNER_QUERY_LENGTH}" value="${filters.q ?? ""}"></div>
      <div><label for="status">Status</label><select id="status" name="status">${option("", "Any")}${option("active", "Active")}${option("suspended", "Suspended")}</select></div>
      <div class="submit"><button type="submit">Search</button></div></div></form>`;
}

function nextPageLink(filters: ReturnType<typeof listFilters>, cursor: string | null): Html | string {
  if (cursor === null) return "";
  const query = new URLSearchParams({
    ...(filters.q ? { q: filters.q } : {}),
    ...(filters.status ? { status: filters.status } : {}),
    cursor,
  });
  return html`<p><a href="/console/admin?${query.toString()}" rel="next">Next page</a></p>`;
}

async function partnersPage(request: FastifyRequest, ctx: AppContext): Promise<string> {
  const shell = operatorShell(request, ctx, "/console/admin");
  const filters = listFilters(request);
  const found = await listPartnersPage(ctx.db, { ...filters, limit: LISTED_PARTNERS });
  const rows = found.data.map(
    (p) => html`<tr><td><a href="/console/admin/partners/${p.partner_id}">${p.name}</a></td>
      <td class="mono">${p.partner_id}</td><td>${statusPill(p.status)}</td><td class="num">${formatMoney(p.balance)}</td>
      <td class="num">${formatMoney(p.held)}</td><td>${formatInstant(p.created_at)}</td></tr>`,
  );
  const filtered = filters.q !== null || filters.status !== null;
  const body = html`<form method="post" action="/console/admin/partners" class="panel">${csrfField(shell.signed_in!.csrf)}
      <div class="fields"><div><label for="name">New partner's name</label><input id="name" name="name" required maxlength="200"></div>
      <div class="submit"><button type="submit">Create partner</button></div></div></form>
    ${searchForm(filters)}
    ${
      found.data.length === 0
        ? html`<div class="panel"><p>${filtered ? "No partner matches." : "No partners yet."}</p></div>`
        : scrollTable(
            "Partners",
            html`<table><thead><tr><th scope="col">Name</th><th scope="col">Partner</th><th scope="col">Status</th><th scope="col" class="num">Balance</th>
        <th scope="col" class="num">Held</th><th scope="col">Created</th></tr></thead><tbody>${rows}</tbody></table>`,
          )
    }
    ${nextPageLink(filters, found.next_cursor)}
    <p class="hint">Newest first, ${LISTED_PARTNERS} a page. The search finds a part of the name (any case) or a whole partner id.</p>`;
  return page("Partners", shell, body);
}

const FLASH: Record<string, string> = {
  credited: "The wallet is credited.",
  already: "That reference was credited before: nothing was added.",
  revoked: "The key is revoked.",
  priced: "The price list is saved.",
  invited: "The invitation is sent: its link works once, for 72 hours.",
  renamed: "The partner is renamed.",
  suspended: "The partner is suspended: its keys and people may read, every change is refused.",
  reactivated: "The partner is active again.",
  unchanged: "Nothing changed.",
};

/** The partner's standing and name, and the forms that change them (partners.write). */
function standingPanel(base: string, csrf: string, partner: PartnerSummary): Html {
  const suspended = partner.status === "suspended";
  const standing = suspended
    ? html`<p>${statusPill("suspended")} since ${formatInstant(partner.suspended_at)}: <span data-testid="suspended-reason">${partner.suspended_reason ?? ""}</span></p>`
    : html`<p>${statusPill("active")}</p>`;
  const change = suspended
    ? html`<form method="post" action="${base}/status" class="panel">${csrfField(csrf)}
        <input type="hidden" name="status" value="active">
        <div class="fields"><div><label for="reactivate-reason">Why (optional)</label><input id="reactivate-reason" name="reason" maxlength="${MAX_SUSPEND_REASON_LENGTH}"></div>
        <div class="submit"><button type="submit">Reactivate</button></div></div></form>`
    : html`<form method="post" action="${base}/status" class="panel">${csrfField(csrf)}
        <input type="hidden" name="status" value="suspended">
        <div class="fields"><div><label for="suspend-reason">Why (the partner's console shows it)</label><input id="suspend-reason" name="reason" required maxlength="${MAX_SUSPEND_REASON_LENGTH}"></div>
        <div class="submit"><button type="submit" class="danger">Suspend</button></div></div>
        <p class="hint">Its API keys and console people may still read; every change answers 403 partner_suspended. Orders already pending still finish.</p></form>`;
  return html`<h2>Status</h2>${standing}${change}
    <form method="post" action="${base}/name" class="panel">${csrfField(csrf)}
      <div class="fields"><div><label for="rename">Partner name</label><input id="rename" name="name" required maxlength="${MAX_PARTNER_NAME_LENGTH}" value="${partner.name}"></div>
      <div class="submit"><button type="submit">Rename</button></div></div></form>`;
}

/** The partner's newest orders, each linking to the operator's view of it (settle, refund). */
async function recentOrdersPanel(ctx: AppContext, partner_id: string): Promise<Html> {
  const orders = await listOrders(ctx.db, {
    partner_id,
    client_reference: null,
    limit: RECENT_ORDERS,
    cursor: null,
  });
  if (orders.data.length === 0)
    return html`<h2>Recent orders</h2><div class="panel"><p>No orders yet.</p></div>`;
  return html`<h2>Recent orders</h2>${scrollTable(
    "Recent orders",
    html`<table><thead><tr><th scope="col">Order</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
      <tbody>${orders.data.map(
        (o) => html`<tr><td><a class="mono" href="/console/admin/orders/${o.orderID}">${o.orderID}</a></td>
          <td>${statusPill(o.status)}</td><td>${formatInstant(o.created_at)}</td></tr>`,
      )}</tbody></table>`,
  )}<p class="hint">The newest ${RECENT_ORDERS}. Pending ones are also on <a href="/console/admin/orders">Pending orders</a>.</p>`;
}

/** The partner a form names, or 404 (an id that is not one: the same page, never a database error). */
async function knownPartner(ctx: AppContext, partner_id: string): Promise<PartnerSummary> {
  const partner = PARTNER_ID.test(partner_id) ? await findPartner(ctx.db, partner_id) : null;
  if (!partner) throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
  return partner;
}

export async function partnerPage(
  request: FastifyRequest,
  ctx: AppContext,
  partner_id: string,
  top: Html = html``,
): Promise<string> {
  const partner = await knownPartner(ctx, partner_id);
  const shell = operatorShell(request, ctx, "/console/admin");
  const csrf = shell.signed_in!.csrf;
  const [wallet, keys, pricing] = await Promise.all([
    getWalletBalance(ctx.db, partner_id).then(renderWallet),
    partnerKeys(ctx.db, partner_id),
    getPartnerPricing(ctx.db, partner_id),
  ]);
  const flash = FLASH[queryValue(request, "done") ?? ""];
  const base = `/console/admin/partners/${partner_id}`;
  const body = html`${top}${flash ? notice("ok", flash) : ""}
    <section class="cards" aria-label="Wallet">
      <div class="card"><p class="label">Balance</p><p class="value" data-testid="balance">${formatMoney(wallet.balance)}</p></div>
      <div class="card"><p class="label">Held</p><p class="value">${formatMoney(wallet.pending)}</p></div>
    </section>
    <p class="mono">${partner_id}</p>
    <p><a href="${base}/orders">Orders: search by traveller, order id or ICCID</a> ·
      <a href="${base}/money">Money: adjustments and monthly statements</a></p>
    ${standingPanel(base, csrf, partner)}
    ${await recentOrdersPanel(ctx, partner_id)}
    <div id="money">${creditPage(base, csrf, wallet.balance.currency)}</div>
    <h2>API keys</h2>
    ${keysTable(keys, (key_id) => `${base}/keys/${key_id}/revoke`, csrf, null)}
    ${issueKeyForm(`${base}/keys`, csrf)}
    ${pricingPanel(base, csrf, pricing)}
    ${await partnerPeoplePanel(request, ctx, partner_id, csrf)}`;
  return page(partner.name, shell, body);
}

export const operatorPartnerPages: ConsolePages = (scope, ctx) => {
  scope.get("/", readsQuery("q", "status", "cursor"), async (request, reply) =>
    reply.type("text/html; charset=utf-8").send(await partnersPage(request, ctx)),
  );
  scope.post("/partners", async (request, reply) => {
    const { name } = checked(CreatePartnerBody, { name: formOf(request).name ?? "" });
    const { app_env, currency } = ctx.config;
    const created = await createPartner(ctx.db, { name: name.trim(), app_env, currency }, actorOf(request));
    const top = issuedKey(created.api_key, created.key_id);
    return reply
      .type("text/html; charset=utf-8")
      .send(await partnerPage(request, ctx, created.partner_id, top));
  });
  scope.get("/partners/:partner_id", readsQuery("done"), async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    return reply.type("text/html; charset=utf-8").send(await partnerPage(request, ctx, partner_id));
  });
  scope.post("/partners/:partner_id/keys", async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    const issued = await issueApiKey(ctx.db, {
      partner_id,
      app_env: ctx.config.app_env,
      actor: actorOf(request),
      options: keyAccessFromForm(formOf(request)),
    });
    return reply
      .type("text/html; charset=utf-8")
      .send(await partnerPage(request, ctx, partner_id, issuedKey(issued.api_key, issued.key_id)));
  });
  scope.post("/partners/:partner_id/keys/:key_id/revoke", async (request, reply) => {
    const { partner_id, key_id } = request.params as { partner_id: string; key_id: string };
    if (!(await partnerKeys(ctx.db, partner_id)).some((k) => k.key_id === key_id)) {
      throw new ApiError("api_key_not_found", `No API key ${key_id} of ${partner_id}.`);
    }
    await revokeApiKey(ctx.db, key_id, actorOf(request));
    return seeOther(reply, `/console/admin/partners/${partner_id}?done=revoked`);
  });
  scope.post("/partners/:partner_id/name", async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    const before = await knownPartner(ctx, partner_id);
    const after = await patchPartner(
      ctx.db,
      partner_id,
      { name: formOf(request).name ?? "" },
      actorOf(request),
    );
    return seeOther(
      reply,
      `/console/admin/partners/${partner_id}?done=${after.name === before.name ? "unchanged" : "renamed"}`,
    );
  });
  scope.post("/partners/:partner_id/status", async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    const form = formOf(request);
    const status = checked(UpdatePartnerBody.properties.status, form.status);
    if (status === undefined) throw new ApiError("invalid_request", "status: must be active or suspended.");
    const before = await knownPartner(ctx, partner_id);
    const after = await patchPartner(ctx.db, partner_id, { status, reason: form.reason }, actorOf(request));
    const done =
      after.status === before.status && after.suspended_reason === before.suspended_reason
        ? "unchanged"
        : after.status === "suspended"
          ? "suspended"
          : "reactivated";
    return seeOther(reply, `/console/admin/partners/${partner_id}?done=${done}`);
  });
  scope.post("/partners/:partner_id/pricing", async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    await setPartnerPricing(ctx.db, partner_id, parsePricingForm(formOf(request)), actorOf(request));
    return seeOther(reply, `/console/admin/partners/${partner_id}?done=priced`);
  });
};
