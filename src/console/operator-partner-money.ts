// The operator's money forms on a partner's page: a wallet credit (the admin API's creditWallet:
// the same reference credits once, so a resent form adds nothing) and the partner's price list.
import type { Pricing } from "../catalog/partner-pricing.ts";
import { Pricing as PricingSchema } from "../catalog/partner-pricing.ts";
import { findPartner } from "../partners/list-partners.ts";
import { ApiError } from "../shared/errors.ts";
import { actorOf } from "../shared/http-types.ts";
import { CreditBody } from "../wallet/credit-wallet.route.ts";
import { creditWallet } from "../wallet/credit-wallet.ts";
import { getWalletBalance } from "../wallet/get-wallet-balance.ts";
import { minorDigits, parseAmount } from "./format.ts";
import { type Html, html } from "./html.ts";
import { csrfField } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { checked, type Form, formOf, seeOther } from "./request.ts";

const MAX_OVERRIDE_LINES = 1_000;

export function creditPage(base: string, csrf: string, currency: string): Html {
  const step = minorDigits(currency) === 0 ? "1" : `0.${"0".repeat(minorDigits(currency) - 1)}1`;
  return html`<h2>Credit the wallet</h2>
    <form method="post" action="${base}/credits" class="panel">${csrfField(csrf)}
      <div class="fields">
        <div><label for="amount">Amount (${currency})</label>
          <input id="amount" name="amount" type="number" min="${step}" step="${step}" required inputmode="decimal"></div>
        <div><label for="reference">Payment reference</label>
          <input id="reference" name="reference" required maxlength="128" pattern="[\\x21-\\x7e]+" aria-describedby="reference-hint">
          <p class="hint" id="reference-hint">The bank transfer's id. The same reference credits once.</p></div>
        <div class="submit"><button type="submit">Credit</button></div>
      </div></form>`;
}

export function pricingPanel(base: string, csrf: string, pricing: Pricing): Html {
  const lines = pricing.overrides.map((o) => `${o.package_id} ${o.amount_minor}`).join("\n");
  return html`<h2>Prices</h2>
    <form method="post" action="${base}/pricing" class="panel">${csrfField(csrf)}
      <div class="fields">
        <div><label for="discount_percent">Discount off list prices (%)</label>
          <input id="discount_percent" name="discount_percent" type="number" min="0" max="90" step="1" value="${pricing.discount_percent}"></div>
      </div>
      <label for="overrides">Overrides: one package per line, <code>package_id amount_minor</code></label>
      <textarea id="overrides" name="overrides" spellcheck="false">${lines}</textarea>
      <div class="actions"><button type="submit">Save prices</button></div></form>`;
}

/** The form's text as the API's Pricing body, then checked by the API's own schema. */
export function parsePricingForm(form: Form): Pricing {
  const lines = (form.overrides ?? "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  if (lines.length > MAX_OVERRIDE_LINES)
    throw new ApiError("invalid_request", `At most ${MAX_OVERRIDE_LINES} overrides.`);
  const overrides = lines.map((line, i) => {
    const match = /^(\S+)\s+(\d{1,15})$/.exec(line);
    if (!match)
      throw new ApiError("invalid_request", `Override line ${i + 1} is not "package_id amount_minor".`);
    return { package_id: match[1]!, amount_minor: Number(match[2]) };
  });
  const discount = form.discount_percent ?? "0";
  return checked(PricingSchema, {
    discount_percent: /^\d{1,3}$/.test(discount) ? Number(discount) : -1,
    overrides,
  });
}

export const operatorMoneyPages: ConsolePages = (scope, ctx) => {
  scope.post("/partners/:partner_id/credits", async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    const form = formOf(request);
    if (!(await findPartner(ctx.db, partner_id)))
      throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
    const currency = (await getWalletBalance(ctx.db, partner_id)).currency;
    const amount_minor = parseAmount(form.amount ?? "", currency);
    if (amount_minor === null)
      throw new ApiError("invalid_request", `The amount is not a positive ${currency} amount.`);
    const body = checked(CreditBody, { amount_minor, reference: form.reference ?? "" });
    const result = await creditWallet(ctx.db, { partner_id, ...body }, actorOf(request));
    return seeOther(
      reply,
      `/console/admin/partners/${partner_id}?done=${result.credited ? "credited" : "already"}`,
    );
  });
};
