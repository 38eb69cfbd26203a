// The operator's money forms on a partner's page: a wallet credit (the admin API's creditWallet:
// the same reference credits once, so a resent form adds nothing) and the partner's price list;
// and the partner's money page (issue 32): an adjustment either way with a reason (the admin API's
// adjustWallet; its reference is drawn when the form is drawn, so a form sent twice adjusts once)
// and the partner's monthly statement with its PDF.
import { randomBytes } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { Pricing } from "../catalog/partner-pricing.ts";
import { Pricing as PricingSchema } from "../catalog/partner-pricing.ts";
import { minorUnitDigits } from "../lib/major-units.ts";
import { findPartner } from "../partners/list-partners.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { actorOf } from "../shared/http-types.ts";
import { PARTNER_ID } from "../shared/ids.ts";
import { readsQuery } from "../shared/query-names.ts";
import { MAX_REASON_LENGTH } from "../shared/schemas.ts";
import { AdjustmentBody } from "../wallet/adjust-wallet.route.ts";
import { adjustWallet } from "../wallet/adjust-wallet.ts";
import { CreditBody } from "../wallet/credit-wallet.route.ts";
import { creditWallet } from "../wallet/credit-wallet.ts";
import { sendMonthlyPdf } from "../wallet/get-monthly-statement.route.ts";
import { renderWallet } from "../wallet/get-wallet.route.ts";
import { getWalletBalance } from "../wallet/get-wallet-balance.ts";
import { monthlyStatement } from "../wallet/monthly-statement.ts";
import { formatMoney, parseAmount } from "./format.ts";
import { type Html, html } from "./html.ts";
import { csrfField, notice, page } from "./layout.ts";
import { monthlyTotals, monthOf, monthPicker } from "./monthly-statement-panel.ts";
import type { ConsolePages } from "./pages.ts";
import { checked, type Form, formOf, queryValue, seeOther } from "./request.ts";
import { allows, operatorShell } from "./shells.ts";

const MAX_OVERRIDE_LINES = 1_000;

function amountStep(currency: string): string {
  return minorUnitDigits(currency) === 0 ? "1" : `0.${"0".repeat(minorUnitDigits(currency) - 1)}1`;
}

/**
 * The adjustment form: the amount in the currency's major units, always positive, its direction
 * chosen apart (a minus sign is easy to miss), the reason the partner will read, and a reference
 * drawn now: sending this form twice (a double click, a resend) is one adjustment.
 */
export function adjustmentForm(base: string, csrf: string, currency: string): Html {
  const step = amountStep(currency);
  const reference = `console-${randomBytes(12).toString("base64url")}`;
  return html`<h2>Adjust the wallet</h2>
    <form method="post" action="${base}/adjustments" class="panel">${csrfField(csrf)}
      <input type="hidden" name="reference" value="${reference}">
      <div class="fields">
        <div><label for="direction">Direction</label>
          <select id="direction" name="direction" required>
            <option value="debit">Take from the wallet (debit)</option>
            <option value="credit">Add to the wallet (credit)</option>
          </select></div>
        <div><label for="adjust-amount">Amount (${currency}, major units)</label>
          <input id="adjust-amount" name="amount" type="number" min="${step}" step="${step}" required inputmode="decimal"></div>
      </div>
      <label for="reason">Reason (the partner reads it on their statement)</label>
      <textarea id="reason" name="reason" required maxlength="${MAX_REASON_LENGTH}" spellcheck="true"></textarea>
      <p class="hint">Posted at once. A debit beyond the available balance (holds deducted) is refused.
        Reference <span class="mono">${reference}</span>: this form adjusts once, however often it is sent.</p>
      <div class="actions"><button type="submit">Adjust</button></div></form>`;
}

const MONEY_FLASH: Record<string, string> = {
  adjusted: "The adjustment is posted.",
  already: "This form was sent before: the adjustment is posted once.",
};

async function moneyPage(request: FastifyRequest, ctx: AppContext, partner_id: string): Promise<string> {
  const partner = PARTNER_ID.test(partner_id) ? await findPartner(ctx.db, partner_id) : null;
  if (!partner) throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
  const shell = operatorShell(request, ctx, "/console/admin");
  const month = monthOf(request);
  const [wallet, { statement }] = await Promise.all([
    getWalletBalance(ctx.db, partner_id).then(renderWallet),
    monthlyStatement(ctx.db, { partner_id, month }),
  ]);
  const base = `/console/admin/partners/${partner_id}`;
  const flash = MONEY_FLASH[queryValue(request, "done") ?? ""];
  const body = html`<p><a href="${base}">← ${partner.name}</a></p>${flash ? notice("ok", flash) : ""}
    <section class="cards" aria-label="Wallet">
      <div class="card"><p class="label">Balance</p><p class="value" data-testid="balance">${formatMoney(wallet.balance)}</p></div>
      <div class="card"><p class="label">Held</p><p class="value">${formatMoney(wallet.pending)}</p></div>
    </section>
    ${allows(request, "money.write") ? adjustmentForm(base, shell.signed_in!.csrf, wallet.balance.currency) : ""}
    <h2>Monthly statement</h2>
    ${monthPicker(`${base}/money`, month)}
    ${monthlyTotals(statement, { pdf: `${base}/statement.pdf?month=${month}`, csv: null })}`;
  return page(`${partner.name}: money`, shell, body);
}

/** The form as the API's adjustment body, then checked by the API's own schema. */
function adjustmentOf(form: Form, currency: string) {
  const amount_minor = parseAmount(form.amount ?? "", currency);
  if (amount_minor === null)
    throw new ApiError("invalid_request", `The amount is not a positive ${currency} amount.`);
  if (form.direction !== "credit" && form.direction !== "debit")
    throw new ApiError("invalid_request", "Choose whether the adjustment adds or takes.");
  return checked(AdjustmentBody, {
    amount_minor: form.direction === "debit" ? -amount_minor : amount_minor,
    // The textarea's line breaks (and tabs) become spaces: a reason is one line on the statement.
    reason: (form.reason ?? "").replace(/[\t\r\n]+/g, " "),
    reference: form.reference ?? "",
  });
}

export function creditPage(base: string, csrf: string, currency: string): Html {
  const step = amountStep(currency);
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
  scope.get("/partners/:partner_id/money", readsQuery("month", "done"), async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    return reply.type("text/html; charset=utf-8").send(await moneyPage(request, ctx, partner_id));
  });
  scope.get("/partners/:partner_id/statement.pdf", readsQuery("month"), async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    if (!(await findPartner(ctx.db, partner_id)))
      throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
    return sendMonthlyPdf(ctx, reply, { partner_id, month: monthOf(request), by: "operator" });
  });
  scope.post("/partners/:partner_id/adjustments", async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    if (!(await findPartner(ctx.db, partner_id)))
      throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
    const currency = (await getWalletBalance(ctx.db, partner_id)).currency;
    const body = adjustmentOf(formOf(request), currency);
    const result = await adjustWallet(ctx.db, { partner_id, ...body }, actorOf(request));
    return seeOther(
      reply,
      `/console/admin/partners/${partner_id}/money?done=${result.adjusted ? "adjusted" : "already"}`,
    );
  });
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
