// The partner's orders: the support search (order-search.ts: q, status, type, dates) over the API's
// listOrders, page by page, and one order with its eSIM: the QR code, the LPA string and the install links.
import type { FastifyRequest } from "fastify";
import { getPartnerOrder, type OrderDetail } from "../orders/get-order.ts";
import { listOrders, type OrderPage } from "../orders/list-orders.ts";
import type { OrderBody } from "../orders/render-order.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { ORDER_ID } from "../shared/ids.ts";
import { readsQuery } from "../shared/query-names.ts";
import { formatInstant, formatMoney, statusPill } from "./format.ts";
import { type Html, html } from "./html.ts";
import { notice, page } from "./layout.ts";
import { ORDER_STATUSES, SEARCH_QUERY_NAMES, type Search, searchPage } from "./order-search.ts";
import type { ConsolePages } from "./pages.ts";
import { orderSupportPages, supportSections } from "./partner-order-support.ts";
import { ordersTable } from "./partner-overview.ts";
import { partnerOf, queryValue } from "./request.ts";
import { partnerShell } from "./shells.ts";

const PAGE_SIZE = 25;
type OrderStatus = (typeof ORDER_STATUSES)[number];

/**
 * A page of orders under the search form (order-search.ts). `list` is the use case (the partner's
 * own, or the operator's for one partner); `detail` links each order to its page.
 */
export function ordersSearchPage(
  request: FastifyRequest,
  action: string,
  list: (search: Search<OrderStatus>, cursor: string | null) => Promise<OrderPage>,
  detail: (order_id: string) => string,
): Promise<Html> {
  return searchPage(request, {
    action,
    statuses: ORDER_STATUSES,
    types: true,
    older: "Older orders",
    list,
    table: (orders) => ordersTable(orders, "Orders", detail),
  });
}

async function listPage(request: FastifyRequest, ctx: AppContext): Promise<string> {
  const partner_id = partnerOf(request);
  const body = await ordersSearchPage(
    request,
    "/console/orders",
    (search, cursor) =>
      listOrders(ctx.db, { ...search, client_reference: null, partner_id, limit: PAGE_SIZE, cursor }),
    (order_id) => `/console/orders/${order_id}`,
  );
  return page("Orders", await partnerShell(request, ctx, "/console/orders"), body);
}

/** The eSIM an order bought or topped up: its QR code (the API's QR use case) and install links. */
export function installKit(
  purchase: Pick<
    Extract<OrderBody["purchases"][number], { status: "completed" }>,
    "iccid" | "qr_code" | "smdp_address" | "activation_code" | "ios_install_url" | "android_install_url"
  >,
): Html {
  return html`<div class="qr">
    <img src="/console/esims/${purchase.iccid}/qr.png" alt="QR code to install eSIM ${purchase.iccid}" width="224" height="224">
    <dl class="facts">
      <dt>ICCID</dt><dd><a class="mono" href="/console/esims/${purchase.iccid}">${purchase.iccid}</a></dd>
      <dt>LPA string</dt><dd class="mono">${purchase.qr_code}</dd>
      <dt>SM-DP+ address</dt><dd class="mono">${purchase.smdp_address}</dd>
      <dt>Activation code</dt><dd class="mono">${purchase.activation_code}</dd>
      <dt>Install links</dt><dd><a href="${purchase.ios_install_url}">iPhone</a> · <a href="${purchase.android_install_url}">Android</a></dd>
    </dl>
  </div>`;
}

const DONE: Record<string, string> = {
  topup: "Top-up completed.",
  resend: "Confirmation email queued: the log below shows when the mail server accepts it.",
  refund: "Order refunded: the wallet was credited.",
};

function detailBody(detail: OrderDetail, done: string | null, support: Html): Html {
  const { order, end_user, failure } = detail;
  const done_text = done === null ? undefined : DONE[done];
  return html`${done_text ? notice("ok", done_text) : ""}
    <div class="panel"><dl class="facts">
      <dt>Order</dt><dd class="mono">${order.orderID}</dd>
      <dt>Type</dt><dd>${order.type === "esim" ? "new eSIM" : "top-up"}</dd>
      <dt>Status</dt><dd>${statusPill(order.status)}</dd>
      <dt>Total</dt><dd>${formatMoney(order.total)}</dd>
      ${order.quantity > 1 ? html`<dt>eSIMs</dt><dd>${order.quantity} ordered, ${order.purchases.filter((p) => p.status === "completed").length} made</dd>` : ""}
      <dt>Client reference</dt><dd>${order.client_reference ?? "—"}</dd>
      <dt>Created</dt><dd>${formatInstant(order.created_at)}</dd>
      <dt>End user</dt><dd>${end_user.first_name} ${end_user.last_name} · ${end_user.email} · ${end_user.phone}</dd>
      ${order.status === "failed" ? html`<dt>Why it failed</dt><dd>${failure.code ?? ""} ${failure.detail ?? ""}</dd>` : ""}
      ${order.status === "pending" ? html`<dt>Pending</dt><dd>The carrier has not answered yet; the service finishes the order on its own. The price is held, not charged.</dd>` : ""}
    </dl></div>
    ${order.purchases.map((purchase, i) =>
      purchase.status === "completed"
        ? html`<h2>eSIM${order.quantity > 1 ? ` ${i + 1} of ${order.quantity}` : ""}</h2><div class="panel">${installKit(purchase)}</div>`
        : html`<h2>eSIM ${i + 1} of ${order.quantity}</h2><div class="panel"><p>The carrier refused this eSIM: it was not charged.</p></div>`,
    )}
    ${support}`;
}

export const partnerOrderPages: ConsolePages = (scope, ctx, failures) => {
  scope.get("/orders", readsQuery(...SEARCH_QUERY_NAMES), async (request, reply) =>
    reply.type("text/html; charset=utf-8").send(await listPage(request, ctx)),
  );
  scope.get("/orders/:order_id", readsQuery("done"), async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    const detail = ORDER_ID.test(order_id)
      ? await getPartnerOrder(ctx.db, partnerOf(request), order_id)
      : null;
    if (!detail) throw new ApiError("order_not_found", "No such order for this partner.");
    const shell = await partnerShell(request, ctx, "/console/orders");
    const support = await supportSections(request, ctx, order_id, shell.signed_in!.csrf);
    return reply
      .type("text/html; charset=utf-8")
      .send(page(`Order ${order_id}`, shell, detailBody(detail, queryValue(request, "done"), support)));
  });
  orderSupportPages(scope, ctx, failures);
};
