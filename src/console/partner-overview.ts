// The partner's overview: what support and finance look at first. The balance and held money from
// the wallet (as GET /v1/profile/wallet), today's and pending orders, a search box that opens the
// orders page's search (order-search.ts), the newest orders.
import { countPartnerOrders } from "../orders/get-order.ts";
import { listOrders } from "../orders/list-orders.ts";
import type { OrderBody } from "../orders/render-order.ts";
import { MAX_SEARCH_LENGTH } from "../orders/search-query.ts";
import { renderWallet } from "../wallet/get-wallet.route.ts";
import { getWalletBalance } from "../wallet/get-wallet-balance.ts";
import { failedDeliveries } from "../webhooks/list-deliveries.ts";
import { formatInstant, formatMoney, statusPill } from "./format.ts";
import { type Html, html } from "./html.ts";
import { page, scrollTable } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { partnerOf } from "./request.ts";
import { partnerShell } from "./shells.ts";

const RECENT_ORDERS = 5;

/**
 * The orders as a table; `detail` links an order to its page (the partner's, or the operator's). On a
 * phone the secondary columns (`secondary`, console.css) are hidden so the table fits the screen.
 */
export function ordersTable(
  orders: readonly OrderBody[],
  label: string,
  detail: (order_id: string) => string = (order_id) => `/console/orders/${order_id}`,
): Html {
  if (orders.length === 0) return html`<div class="panel"><p>No orders.</p></div>`;
  return scrollTable(
    label,
    html`<table class="fits-phone">
      <thead><tr><th scope="col">Order</th><th scope="col" class="secondary">Type</th><th scope="col">Status</th>
        <th scope="col" class="secondary">Client reference</th><th scope="col" class="num">Total</th>
        <th scope="col" class="secondary">Created</th></tr></thead>
      <tbody>${orders.map(
        (o) => html`<tr>
          <td><a class="mono" href="${detail(o.orderID)}">${o.orderID}</a></td>
          <td class="secondary">${o.type === "esim" ? "new eSIM" : "top-up"}</td>
          <td>${statusPill(o.status)}</td>
          <td class="secondary">${o.client_reference ?? "—"}</td>
          <td class="num">${formatMoney(o.total)}</td>
          <td class="secondary">${formatInstant(o.created_at)}</td>
        </tr>`,
      )}</tbody>
    </table>`,
  );
}

function card(label: string, value: string, hint?: string): Html {
  return html`<div class="card"><p class="label">${label}</p><p class="value">${value}</p>${
    hint ? html`<p class="hint">${hint}</p>` : ""
  }</div>`;
}

export const partnerOverviewPages: ConsolePages = (scope, ctx) => {
  scope.get("/", async (request, reply) => {
    const partner_id = partnerOf(request);
    const [wallet, counts, recent, failed] = await Promise.all([
      getWalletBalance(ctx.db, partner_id).then(renderWallet),
      countPartnerOrders(ctx.db, partner_id),
      listOrders(ctx.db, { partner_id, client_reference: null, limit: RECENT_ORDERS, cursor: null }),
      failedDeliveries(ctx, partner_id),
    ]);
    const body = html`
      <section aria-label="Wallet and orders" class="cards">
        ${card("Balance", formatMoney(wallet.balance), "Spendable now")}
        ${card("Held", formatMoney(wallet.pending), "By purchases the carrier has not confirmed")}
        ${card("Orders today", counts.today_capped ? `${counts.today}+` : String(counts.today), `${counts.today_completed} completed, ${counts.today_failed} failed (UTC day)`)}
        ${card("Pending orders", String(counts.pending), "Finished by the service on its own")}
        ${card("Failed deliveries", failed.capped ? `${failed.count}+` : String(failed.count), "Webhooks given up on: retry them under Webhooks")}
      </section>
      <form method="get" action="/console/orders" class="panel" role="search">
        <div class="fields"><div class="wide"><label for="find">Find an order</label>
          <input id="find" name="q" type="search" maxlength="${MAX_SEARCH_LENGTH}" autocomplete="off" spellcheck="false"
            aria-describedby="find-hint">
          <p class="hint" id="find-hint">Order id, ICCID, traveller's email, or the start of a client reference or last name.</p></div>
        <div class="submit"><button type="submit">Find</button></div></div>
      </form>
      <h2>Newest orders</h2>
      ${ordersTable(recent.data, "Newest orders")}
      <p><a href="/console/orders">All orders</a> · <a href="/console/wallet">Wallet statement</a> · <a href="/console/webhooks">Webhooks</a></p>`;
    return reply
      .type("text/html; charset=utf-8")
      .send(page("Overview", await partnerShell(request, ctx, "/console"), body));
  });
};
