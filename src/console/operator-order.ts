// One order as the operator sees it (issue 32): whose it is, its state and why it failed, and the
// operator's actions on it: settle a pending order the carrier cannot answer for (the same use
// case as POST /admin/orders/{orderID}/settle), refund a completed one on its partner's behalf
// (as POST /admin/orders/{orderID}/refund). Both take a reason, kept in the audit log.
import type { FastifyRequest } from "fastify";
import { orderBody, orderOf } from "../orders/refunded-order.ts";
import { settleByOperator } from "../orders/settle-by-operator.ts";
import { refundOrder } from "../refunds/refund-order.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { actorOf } from "../shared/http-types.ts";
import { ORDER_ID } from "../shared/ids.ts";
import { readsQuery } from "../shared/query-names.ts";
import { checkOneLine, MAX_REASON_LENGTH } from "../shared/schemas.ts";
import { orderFinishers } from "../topups/order-finishers.ts";
import { formatInstant, formatMoney, statusPill } from "./format.ts";
import { type Html, html } from "./html.ts";
import { csrfField, notice, page } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { refusalOf } from "./refund-refusal.ts";
import { formOf, queryValue, seeOther } from "./request.ts";
import { operatorShell } from "./shells.ts";

const FLASH: Record<string, string> = {
  settled: "The order is settled.",
  refunded: "The order is refunded: the partner's wallet is credited.",
};

async function knownOrder(ctx: AppContext, order_id: string) {
  const order = ORDER_ID.test(order_id) ? await orderOf(ctx.db, order_id) : null;
  if (!order) throw new ApiError("order_not_found", `No order ${order_id}.`);
  return order;
}

/** The reason a form gives, trimmed: the API's own rule (shared/schemas.ts), in code points. */
function reasonOf(request: FastifyRequest): string {
  return checkOneLine("reason", formOf(request).reason ?? "");
}

function actions(base: string, csrf: string, status: string): Html | string {
  const reason = (id: string) =>
    html`<div><label for="${id}">Why (kept in the audit log)</label><input id="${id}" name="reason" required maxlength="${MAX_REASON_LENGTH}"></div>`;
  if (status === "pending") {
    return html`<h2>Settle</h2><form method="post" action="${base}/settle" class="panel">${csrfField(csrf)}
      <p class="hint">Only when you know the outcome from the carrier itself. The carrier is asked first and its own record
        wins: failed voids the hold at once (what the carrier made is then cancelled); completed posts the charge with
        the eSIM the carrier made.</p>
      <div class="fields"><div><label for="outcome">Outcome</label><select id="outcome" name="outcome">
        <option value="failed">Failed: release the hold</option><option value="completed">Completed: post the charge</option></select></div>
      ${reason("settle-reason")}<div class="submit"><button type="submit">Settle</button></div></div></form>`;
  }
  if (status === "completed") {
    return html`<h2>Refund on the partner's behalf</h2><form method="post" action="${base}/refund" class="panel">${csrfField(csrf)}
      <p class="hint">As the partner's own refund (the carrier cancels; an installed eSIM or a used bundle cannot be refunded),
        without the refund window.</p>
      <div class="fields">${reason("refund-reason")}<div class="submit"><button type="submit" class="danger">Refund</button></div></div></form>`;
  }
  return "";
}

async function orderPage(request: FastifyRequest, ctx: AppContext, order_id: string): Promise<string> {
  const row = await knownOrder(ctx, order_id);
  const order = await orderBody(ctx.db, row);
  const shell = operatorShell(request, ctx, "/console/admin/orders");
  const flash = FLASH[queryValue(request, "done") ?? ""];
  const base = `/console/admin/orders/${order_id}`;
  const body = html`${flash ? notice("ok", flash) : ""}<div class="panel"><dl>
      <dt>Partner</dt><dd><a class="mono" href="/console/admin/partners/${row.partner_id}">${row.partner_id}</a></dd>
      <dt>Type</dt><dd>${order.type}</dd>
      <dt>Status</dt><dd data-testid="order-status">${statusPill(order.status)}</dd>
      <dt>Total</dt><dd>${formatMoney(order.total)}</dd>
      <dt>Created</dt><dd>${formatInstant(order.created_at)}</dd>
      <dt>eSIM</dt><dd class="mono">${order.esim_iccid ?? "—"}</dd>
      ${row.status === "failed" ? html`<dt>Why it failed</dt><dd>${row.failure_code ?? ""}: ${row.failure_detail ?? ""}</dd>` : ""}
    </dl></div>${actions(base, shell.signed_in!.csrf, order.status)}`;
  return page(`Order ${order_id}`, shell, body);
}

export const operatorOrderDetailPages: ConsolePages = (scope, ctx) => {
  scope.get("/orders/:order_id", readsQuery("done"), async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    return reply.type("text/html; charset=utf-8").send(await orderPage(request, ctx, order_id));
  });
  scope.post("/orders/:order_id/settle", async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    await knownOrder(ctx, order_id);
    const outcome = formOf(request).outcome;
    if (outcome !== "completed" && outcome !== "failed") {
      throw new ApiError("invalid_request", "outcome: must be completed or failed.");
    }
    await settleByOperator(
      ctx,
      order_id,
      { outcome, reason: reasonOf(request), actor: actorOf(request) },
      orderFinishers(ctx.config),
    );
    return seeOther(reply, `/console/admin/orders/${order_id}?done=settled`);
  });
  scope.post("/orders/:order_id/refund", async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    const order = await knownOrder(ctx, order_id);
    const answer = await refundOrder(ctx, order.partner_id, order_id, null, String(request.id), {
      actor: actorOf(request),
      reason: reasonOf(request),
      window_applies: false,
    });
    if (answer.status >= 400) throw refusalOf(answer.status, answer.body);
    return seeOther(reply, `/console/admin/orders/${order_id}?done=refunded`);
  });
};
