// The operator's partners: list and create, and per partner its balance, keys (issue, revoke),
// wallet credits (idempotent by reference, as the admin API and the CLI) and price list.
import type { FastifyRequest } from "fastify";
import { getPartnerPricing, setPartnerPricing } from "../catalog/partner-pricing.ts";
import { CreatePartnerBody } from "../partners/create-partner.route.ts";
import { createPartner } from "../partners/create-partner.ts";
import { issueApiKey } from "../partners/issue-api-key.ts";
import { findPartner, partnerKeys, recentPartners } from "../partners/list-partners.ts";
import { revokeApiKey } from "../partners/revoke-api-key.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { actorOf } from "../shared/http-types.ts";
import { readsQuery } from "../shared/query-names.ts";
import { renderWallet } from "../wallet/get-wallet.route.ts";
import { getWalletBalance } from "../wallet/get-wallet-balance.ts";
import { formatInstant, formatMoney } from "./format.ts";
import { type Html, html } from "./html.ts";
import { issuedKey, issueKeyForm, keyAccessFromForm, keysTable } from "./keys-table.ts";
import { csrfField, notice, page, scrollTable } from "./layout.ts";
import { creditPage, parsePricingForm, pricingPanel } from "./operator-partner-money.ts";
import type { ConsolePages } from "./pages.ts";
import { checked, formOf, queryValue, seeOther } from "./request.ts";
import { operatorShell } from "./shells.ts";
import { partnerPeoplePanel } from "./team-pages.ts";

const LISTED_PARTNERS = 100;
const PARTNER_ID = /^ptr_[A-Za-z0-9_-]{16,64}$/;

async function partnersPage(request: FastifyRequest, ctx: AppContext): Promise<string> {
  const shell = operatorShell(request, ctx, "/console/admin");
  const partners = await recentPartners(ctx.db, LISTED_PARTNERS);
  const balances = await Promise.all(
    partners.map((p) => getWalletBalance(ctx.db, p.partner_id).then(renderWallet)),
  );
  const rows = partners.map(
    (p, i) => html`<tr><td><a href="/console/admin/partners/${p.partner_id}">${p.name}</a></td>
      <td class="mono">${p.partner_id}</td><td class="num">${formatMoney(balances[i]!.balance)}</td>
      <td class="num">${formatMoney(balances[i]!.pending)}</td><td>${formatInstant(p.created_at)}</td></tr>`,
  );
  const body = html`<form method="post" action="/console/admin/partners" class="panel">${csrfField(shell.signed_in!.csrf)}
      <div class="fields"><div><label for="name">New partner's name</label><input id="name" name="name" required maxlength="200"></div>
      <div class="submit"><button type="submit">Create partner</button></div></div></form>
    ${
      partners.length === 0
        ? html`<div class="panel"><p>No partners yet.</p></div>`
        : scrollTable(
            "Partners",
            html`<table><thead><tr><th scope="col">Name</th><th scope="col">Partner</th><th scope="col" class="num">Balance</th>
        <th scope="col" class="num">Held</th><th scope="col">Created</th></tr></thead><tbody>${rows}</tbody></table>`,
          )
    }
    <p class="hint">The newest ${LISTED_PARTNERS} partners.</p>`;
  return page("Partners", shell, body);
}

const FLASH: Record<string, string> = {
  credited: "The wallet is credited.",
  already: "That reference was credited before: nothing was added.",
  revoked: "The key is revoked.",
  priced: "The price list is saved.",
  invited: "The invitation is sent: its link works once, for 72 hours.",
};

export async function partnerPage(
  request: FastifyRequest,
  ctx: AppContext,
  partner_id: string,
  top: Html = html``,
): Promise<string> {
  const partner = PARTNER_ID.test(partner_id) ? await findPartner(ctx.db, partner_id) : null;
  if (!partner) throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
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
    <p><a href="${base}/orders">Orders: search by traveller, order id or ICCID</a></p>
    ${creditPage(base, csrf, wallet.balance.currency)}
    <h2>API keys</h2>
    ${keysTable(keys, (key_id) => `${base}/keys/${key_id}/revoke`, csrf, null)}
    ${issueKeyForm(`${base}/keys`, csrf)}
    ${pricingPanel(base, csrf, pricing)}
    ${await partnerPeoplePanel(request, ctx, partner_id, csrf)}`;
  return page(partner.name, shell, body);
}

export const operatorPartnerPages: ConsolePages = (scope, ctx) => {
  scope.get("/", async (request, reply) =>
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
  scope.post("/partners/:partner_id/pricing", async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    await setPartnerPricing(ctx.db, partner_id, parsePricingForm(formOf(request)), actorOf(request));
    return seeOther(reply, `/console/admin/partners/${partner_id}?done=priced`);
  });
};
