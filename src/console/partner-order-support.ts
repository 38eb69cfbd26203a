// Support work on the partner console's order page (issue 32): the refund rules and the refund
// button, the email log with a resend form, and the order's timeline. The forms call the API's use
// cases (refundOrder, resendConfirmationEmail), each under an Idempotency-Key made when the page is
// drawn, so a double click or a resent form is one refund, one email.
import { randomUUID } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { orderTimeline } from "../events/order-timeline.ts";
import { emailLog } from "../notifications/email-log.ts";
import { MAX_RESENDS_PER_DAY, normaliseRecipient } from "../notifications/queue-resend.ts";
import { checkEmail, EndUserFields } from "../orders/end-user.ts";
import { type SupportOrder, supportOrder, travellersOf } from "../orders/order-for-support.ts";
import { refundOrder } from "../refunds/refund-order.ts";
import { refundPreview } from "../refunds/refund-preview.ts";
import type { AppContext } from "../shared/context.ts";
import { actorOf } from "../shared/http-types.ts";
import { resendConfirmationEmail } from "../support/resend-confirmation-email.ts";
import { requestFingerprints } from "../topups/idempotency-key.ts";
import { formatInstant, statusPill } from "./format.ts";
import { type Html, html } from "./html.ts";
import { csrfField, scrollTable } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { refusalOf } from "./refund-refusal.ts";
import { formOf, partnerOf, seeOther } from "./request.ts";
import { allows } from "./shells.ts";

const KEY = Type.String({ pattern: "^[0-9a-f-]{36}$" });
const CSRF = Type.String({ maxLength: 200 });

/**
 * The address is optional: left empty, it sends to the order's own. The console's form parser
 * drops an empty field (routes.ts formFields), so "empty" arrives as an absent `email`.
 */
const ResendForm = Type.Object({
  email: Type.Optional(EndUserFields.email),
  idempotency_key: KEY,
  _csrf: CSRF,
});
const RefundForm = Type.Object({ idempotency_key: KEY, _csrf: CSRF });

function refundRules(order: SupportOrder, preview: Awaited<ReturnType<typeof refundPreview>>): Html {
  const what =
    order.type === "esim"
      ? "cancels the eSIM with the carrier (and its unused top-ups with it)"
      : "cancels this top-up's bundle with the carrier";
  return html`<ul class="rules">
      <li>A refund ${what} and credits the wallet what the order cost, once.</li>
      <li>Only a completed order whose ${order.type === "esim" ? "eSIM was never installed" : "bundle was never used"} can be refunded,
        within ${preview.window_days} days of the purchase (until ${formatInstant(preview.window_ends_at)}).</li>
      <li>The carrier has the last word: it refuses an eSIM installed meanwhile.</li>
    </ul>`;
}

async function refundSection(
  request: FastifyRequest,
  ctx: AppContext,
  order: SupportOrder,
  csrf: string,
): Promise<Html> {
  const preview = await refundPreview(ctx, order);
  const state =
    order.status === "refunded"
      ? html`<p><strong>This order is refunded.</strong></p>`
      : preview.reason === null
        ? html`<p id="refund-verdict"><strong>This order can be refunded now.</strong></p>`
        : html`<p id="refund-verdict"><strong>This order cannot be refunded:</strong> ${preview.detail}</p>`;
  const button =
    preview.reason === null && allows(request, "orders.write")
      ? html`<form method="post" action="/console/orders/${order.order_id}/refund">
          ${csrfField(csrf)}<input type="hidden" name="idempotency_key" value="${randomUUID()}">
          <div class="actions"><button type="submit" class="danger">Refund this order</button></div></form>`
      : "";
  return html`<h2>Refund</h2><div class="panel" id="refund">${refundRules(order, preview)}${state}${button}</div>`;
}

async function emailSection(
  request: FastifyRequest,
  ctx: AppContext,
  order: SupportOrder,
  csrf: string,
): Promise<Html> {
  const log = await emailLog(ctx.db, order, await travellersOf(ctx.db, order));
  const table =
    log.length === 0
      ? html`<div class="panel"><p>No email for this order${order.type === "topup" ? " (a top-up sends none)" : ""}.</p></div>`
      : scrollTable(
          "Email log",
          html`<table id="email-log"><thead><tr><th scope="col">Kind</th><th scope="col">To</th><th scope="col">Status</th>
            <th scope="col">Sent</th><th scope="col">Last error</th></tr></thead><tbody>${log.map(
              (e) => html`<tr><td>${e.kind}</td><td>${e.to}</td><td>${statusPill(e.status)}</td>
                <td>${formatInstant(e.sent_at)}</td><td class="mono">${e.last_error ?? ""}</td></tr>`,
            )}</tbody></table>`,
        );
  const can_resend = order.type === "esim" && order.status === "completed" && allows(request, "orders.write");
  const form = can_resend
    ? html`<form method="post" action="/console/orders/${order.order_id}/resend-email" class="panel" id="resend">
        ${csrfField(csrf)}<input type="hidden" name="idempotency_key" value="${randomUUID()}">
        <div class="fields"><div class="wide"><label for="resend-email">Send to (empty: the order's address, ${order.email})</label>
          <input id="resend-email" name="email" type="email" maxlength="254" autocomplete="off"></div></div>
        <p class="hint">At most ${MAX_RESENDS_PER_DAY} resends per order in 24 hours. The log shows when the mail server accepted it.</p>
        <div class="actions"><button type="submit">Resend confirmation email</button></div></form>`
    : "";
  return html`<h2>Emails</h2>${table}${form}`;
}

async function timelineSection(ctx: AppContext, order: SupportOrder): Promise<Html> {
  const events = await orderTimeline(ctx.db, order);
  if (events.length === 0) return html`<h2>Timeline</h2><div class="panel"><p>No event yet.</p></div>`;
  return html`<h2>Timeline</h2>${scrollTable(
    "Timeline",
    html`<table id="timeline"><thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Id</th></tr></thead>
      <tbody>${events.map(
        (e) =>
          html`<tr><td>${formatInstant(e.created_at)}</td><td>${e.type}</td><td class="mono">${e.id}</td></tr>`,
      )}</tbody></table>`,
  )}`;
}

/** The order page's support sections, for a person who may read orders (the forms need orders.write). */
export async function supportSections(
  request: FastifyRequest,
  ctx: AppContext,
  order_id: string,
  csrf: string,
): Promise<Html> {
  const order = await supportOrder(ctx.db, partnerOf(request), order_id);
  if (order === null) return html``;
  return html`${await refundSection(request, ctx, order, csrf)}${await emailSection(request, ctx, order, csrf)}${await timelineSection(ctx, order)}`;
}

/** A refund's stored answer: the order page again, or the refusal as the console's error page. */
function afterRefund(status: number, body: string, order_id: string): string {
  if (status < 300) return `/console/orders/${order_id}?done=refund`;
  throw refusalOf(status, body);
}

export const orderSupportPages: ConsolePages = (scope, ctx) => {
  scope.post("/orders/:order_id/resend-email", { schema: { body: ResendForm } }, async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    const form = formOf(request);
    await resendConfirmationEmail(ctx, {
      partner_id: partnerOf(request),
      order_id,
      email: form.email ? normaliseRecipient(checkEmail("email", form.email)) : null,
      idempotency_key: `console.${form.idempotency_key!}`,
      actor: actorOf(request),
    });
    return seeOther(reply, `/console/orders/${order_id}?done=resend`);
  });
  scope.post("/orders/:order_id/refund", { schema: { body: RefundForm } }, async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    const form = formOf(request);
    const target = { orderID: order_id };
    const claim = {
      idempotency_key: form.idempotency_key!,
      ...requestFingerprints("POST", "/console/orders/:order_id/refund", target, target),
      request_id: String(request.id),
    };
    const answer = await refundOrder(ctx, partnerOf(request), order_id, claim, String(request.id), {
      actor: actorOf(request),
      reason: null,
      window_applies: true,
    });
    return seeOther(reply, afterRefund(answer.status, answer.body, order_id));
  });
};
