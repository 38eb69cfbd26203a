// The partner's orders: search by client_reference, filter by status, page through (the API's
// listOrders), and one order with its eSIM: the QR code, the LPA string and the install links.
import type { FastifyRequest } from "fastify";
import { getPartnerOrder, type OrderDetail } from "../orders/get-order.ts";
import { listOrders } from "../orders/list-orders.ts";
import type { OrderBody } from "../orders/render-order.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { readsQuery } from "../shared/query-names.ts";
import { formatInstant, formatMoney, statusPill } from "./format.ts";
import { type Html, html } from "./html.ts";
import { notice, page } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { orderSupportPages, supportSections } from "./partner-order-support.ts";
import { ordersTable } from "./partner-overview.ts";
import { partnerOf, queryValue } from "./request.ts";
import { partnerShell } from "./shells.ts";

const PAGE_SIZE = 25;
const STATUSES = ["completed", "pending", "failed"] as const;
type Status = (typeof STATUSES)[number];
const MAX_REFERENCE_LENGTH = 128;
const ORDER_ID = /^ord_[A-Za-z0-9_-]{16,64}$/;

function filters(reference: string | null, status: Status | null): Html {
  return html`<form method="get" action="/console/orders" class="panel" role="search">
    <div class="fields">
      <div><label for="client_reference">Client reference</label>
        <input id="client_reference" name="client_reference" value="${reference ?? ""}" maxlength="${MAX_REFERENCE_LENGTH}"></div>
      <div><label for="status">Status</label>
        <select id="status" name="status"><option value="">Any</option>${STATUSES.map(
          (s) => html`<option value="${s}"${s === status ? html` selected` : ""}>${s}</option>`,
        )}</select></div>
      <div class="submit"><button type="submit">Search</button></div>
    </div>
  </form>`;
}

async function listPage(request: FastifyRequest, ctx: AppContext): Promise<string> {
  const reference = queryValue(request, "client_reference")?.slice(0, MAX_REFERENCE_LENGTH) ?? null;
  const wanted = queryValue(request, "status");
  const status = STATUSES.find((s) => s === wanted) ?? null;
  const cursor = queryValue(request, "cursor");
  const orders = await listOrders(ctx.db, {
    partner_id: partnerOf(request),
    client_reference: reference,
    status,
    limit: PAGE_SIZE,
    cursor,
  });
  const next = new URLSearchParams({
    ...(reference ? { client_reference: reference } : {}),
    ...(status ? { status } : {}),
    cursor: orders.next_cursor ?? "",
  });
  const body = html`${filters(reference, status)}
    ${ordersTable(orders.data, "Orders")}
    <div class="pager">${cursor ? html`<a href="/console/orders">First page</a>` : ""}${
      orders.next_cursor ? html`<a href="/console/orders?${next.toString()}">Older orders</a>` : ""
    }</div>`;
  return page("Orders", await partnerShell(request, ctx, "/console/orders"), body);
}

/** The eSIM an order bought or topped up: its QR code (the API's QR use case) and install links. */
export function installKit(
  purchase: Pick<
    OrderBody["purchases"][number],
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
      <dt>Client reference</dt><dd>${order.client_reference ?? "—"}</dd>
      <dt>Created</dt><dd>${formatInstant(order.created_at)}</dd>
      <dt>End user</dt><dd>${end_user.first_name} ${end_user.last_name} · ${end_user.email} · ${end_user.phone}</dd>
      ${order.status === "failed" ? html`<dt>Why it failed</dt><dd>${failure.code ?? ""} ${failure.detail ?? ""}</dd>` : ""}
      ${order.status === "pending" ? html`<dt>Pending</dt><dd>The carrier has not answered yet; the service finishes the order on its own. The price is held, not charged.</dd>` : ""}
    </dl></div>
    ${order.purchases.map((purchase) => html`<h2>eSIM</h2><div class="panel">${installKit(purchase)}</div>`)}
    ${support}`;
}

export const partnerOrderPages: ConsolePages = (scope, ctx, failures) => {
  scope.get("/orders", readsQuery("client_reference", "status", "cursor"), async (request, reply) =>
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
