// Top-up from the eSIM's page, through the API's submitTopUp with an Idempotency-Key. The key is
// made when the form is drawn and travels in it, so a double click, a resent form or a retry after
// a timeout is the same top-up (one purchase, one debit); drawing the page again makes a new key.
import { randomUUID } from "node:crypto";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import type { EsimBody } from "../esims/get-esim.ts";
import { EndUserFields } from "../orders/end-user.ts";
import { getPartnerOrder } from "../orders/get-order.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError, type ErrorCode } from "../shared/errors.ts";
import { requestFingerprints } from "../topups/idempotency-key.ts";
import { listAvailableTopUps } from "../topups/list-available-topups.ts";
import { normaliseTopUp, submitTopUp, type TopUpInput } from "../topups/submit-topup.ts";
import { formatMoney, megabytes } from "./format.ts";
import { type Html, html } from "./html.ts";
import { csrfField } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { type Form, formOf, partnerOf, seeOther } from "./request.ts";

/** The route the key's fingerprint names: keys are per partner, and a console key is not an API key. */
const FINGERPRINT_PATH = "/console/esims/:iccid/top-up";

/** The API's own end-user schema checks the form (Fastify validates it like the API's body). */
const TopUpForm = Type.Object({
  ...EndUserFields,
  package_id: Type.String({ minLength: 1, maxLength: 64 }),
  idempotency_key: Type.String({ pattern: "^[0-9a-f-]{36}$" }),
  _csrf: Type.String({ maxLength: 200 }),
});

function input(label: string, name: string, value: string, type = "text", extra: Html = html``): Html {
  return html`<div><label for="topup-${name}">${label}</label>
    <input id="topup-${name}" name="${name}" type="${type}" value="${value}" ${extra}></div>`;
}

/** The form: the offered packages, the end user (the original order's, to edit), one fresh key. */
export async function topUpForm(
  ctx: AppContext,
  partner_id: string,
  esim: EsimBody,
  csrf: string,
): Promise<Html> {
  const [offers, original] = await Promise.all([
    listAvailableTopUps(ctx.db, partner_id, esim.iccid),
    getPartnerOrder(ctx.db, partner_id, esim.order_id),
  ]);
  if (offers.data.length === 0)
    return html`<h2>Top up</h2><div class="panel"><p>No top-up is offered for this eSIM.</p></div>`;
  const user = original?.end_user ?? { email: "", phone: "", first_name: "", last_name: "" };
  return html`<h2>Top up</h2>
    <form method="post" action="/console/esims/${esim.iccid}/top-up" class="panel">
      ${csrfField(csrf)}
      <input type="hidden" name="idempotency_key" value="${randomUUID()}">
      <div class="fields">
        <div class="wide"><label for="topup-package">Package</label><select id="topup-package" name="package_id" required>${offers.data.map(
          (o) =>
            html`<option value="${o.package_id}">${o.name} · ${megabytes(o.data_mb)}, ${o.validity_days} days · ${formatMoney(o.wholesale_price)}</option>`,
        )}</select></div>
        ${input("First name", "first_name", user.first_name, "text", html`required maxlength="100" autocomplete="off"`)}
        ${input("Last name", "last_name", user.last_name, "text", html`required maxlength="100" autocomplete="off"`)}
        ${input("Email", "email", user.email, "email", html`required maxlength="254" autocomplete="off"`)}
        ${input("Phone (with its country code, e.g. +1 415 555 0123)", "phone", user.phone, "tel", html`required maxlength="32" pattern="(\\+|00)[\\d \\(\\)\\-.]+" autocomplete="off"`)}
        ${input("Client reference (optional)", "client_reference", esim.client_reference ?? "", "text", html`maxlength="128"`)}
      </div>
      <p class="hint">The wallet is debited the package's price once, however many times the button is pressed.</p>
      <div class="actions"><button type="submit">Buy top-up</button></div>
    </form>`;
}

async function topUpInput(
  ctx: AppContext,
  partner_id: string,
  iccid: string,
  form: Form,
): Promise<TopUpInput> {
  const offers = await listAvailableTopUps(ctx.db, partner_id, iccid);
  const offer = offers.data.find((o) => o.package_id === form.package_id);
  if (!offer)
    throw new ApiError("topup_not_available", "That package is not offered for this eSIM (any more).");
  return normaliseTopUp({
    iccid,
    package_id: offer.package_id,
    external_package_id: offer.external_package_id,
    email: form.email ?? "",
    phone: form.phone ?? "",
    first_name: form.first_name ?? "",
    last_name: form.last_name ?? "",
    client_reference: form.client_reference ?? null,
  });
}

/** A stored outcome (a replay, or a 402 stored now) as the browser's next page. */
function sendStored(reply: FastifyReply, status: number, body: string): FastifyReply {
  const parsed = JSON.parse(body) as { orderID?: string; code?: ErrorCode; detail?: string };
  if (status < 300 && parsed.orderID) return seeOther(reply, `/console/orders/${parsed.orderID}?done=topup`);
  throw new ApiError(parsed.code ?? "internal_error", parsed.detail);
}

export const topUpPages: ConsolePages = (scope, ctx) => {
  scope.post("/esims/:iccid/top-up", { schema: { body: TopUpForm } }, async (request, reply) => {
    const { iccid } = request.params as { iccid: string };
    const partner_id = partnerOf(request);
    const form = formOf(request);
    const topup = await topUpInput(ctx, partner_id, iccid, form);
    const claim = {
      idempotency_key: form.idempotency_key!,
      ...requestFingerprints("POST", FINGERPRINT_PATH, topup, topup),
      request_id: String(request.id),
    };
    const outcome = await submitTopUp(ctx, partner_id, topup, claim).catch((error: unknown) => {
      // The same key's first request is still running (a double click): show that order, whose page
      // says pending until the first request finishes it. Never a second top-up.
      if (error instanceof ApiError && error.code === "request_in_progress" && error.order_id)
        return error.order_id;
      throw error;
    });
    if (typeof outcome === "string") return seeOther(reply, `/console/orders/${outcome}`);
    if (outcome.kind === "stored") return sendStored(reply, outcome.stored.status, outcome.stored.body);
    return seeOther(
      reply,
      `/console/orders/${outcome.order.order_id}${outcome.order.status === "completed" ? "?done=topup" : ""}`,
    );
  });
};
