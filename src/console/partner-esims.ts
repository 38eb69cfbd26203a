// The partner's eSIMs: status and usage by pages, one eSIM with a usage bar per bundle, its QR
// code (the API's QR use case and cache), install links, the top-up form and, in the sandbox, the
// simulate buttons (the API's simulate use case: the simulator signals like a real carrier).
import type { FastifyRequest } from "fastify";
import type { SimulatedEvent } from "../carrier/carrier.ts";
import { createQrPngCache, esimQrPng, QR_DEFAULT_SIZE_PX } from "../esims/esim-qr-png.ts";
import { type EsimBody, getEsim } from "../esims/get-esim.ts";
import { listEsims } from "../esims/list-esims.ts";
import type { BundleBody } from "../esims/render-esim.ts";
import { simulateEsimEvent } from "../esims/simulate-esim.ts";
import type { AppContext } from "../shared/context.ts";
import { readsQuery } from "../shared/query-names.ts";
import { formatInstant, megabytes, statusPill } from "./format.ts";
import { type Html, html } from "./html.ts";
import { csrfField, page, scrollTable } from "./layout.ts";
import { SEARCH_QUERY_NAMES, searchPage } from "./order-search.ts";
import type { ConsolePages } from "./pages.ts";
import { installKit } from "./partner-orders.ts";
import { topUpForm, topUpPages } from "./partner-topup.ts";
import { formOf, partnerOf, seeOther } from "./request.ts";
import { partnerShell } from "./shells.ts";

const PAGE_SIZE = 25;
const STATUSES = ["released", "installed", "active", "depleted", "expired", "deleted", "cancelled"] as const;
const EVENTS = ["install", "use_data", "expire", "delete"] as const;
const MAX_SIMULATED_MB = 10_000_000;

function usageBar(used_mb: number, total_mb: number | null, label: string): Html {
  if (total_mb === null) return html`<span>${megabytes(used_mb)} used of unlimited</span>`;
  return html`<progress max="${Math.max(total_mb, 1)}" value="${Math.min(used_mb, total_mb)}" aria-label="${label}"
      aria-valuetext="${megabytes(used_mb)} of ${megabytes(total_mb)} used"></progress>
    <span class="hint">${megabytes(used_mb)} of ${megabytes(total_mb)} used</span>`;
}

function esimsTable(esims: readonly EsimBody[]): Html {
  if (esims.length === 0) return html`<div class="panel"><p>No eSIMs.</p></div>`;
  return scrollTable(
    "eSIMs",
    html`<table class="fits-phone"><thead><tr><th scope="col">ICCID</th><th scope="col">Status</th>
      <th scope="col" class="secondary">Client reference</th><th scope="col" class="secondary">Usage</th>
      <th scope="col" class="secondary">Expires</th></tr></thead>
      <tbody>${esims.map(
        (e) => html`<tr><td><a class="mono" href="/console/esims/${e.iccid}">${e.iccid}</a></td>
          <td>${statusPill(e.status)}</td><td class="secondary">${e.client_reference ?? "—"}</td>
          <td class="secondary">${usageBar(e.usage.data_used_mb, e.usage.data_total_mb, `Usage of ${e.iccid}`)}</td>
          <td class="secondary">${formatInstant(e.expires_at)}</td></tr>`,
      )}</tbody></table>`,
  );
}

async function listPage(request: FastifyRequest, ctx: AppContext): Promise<string> {
  const body = await searchPage(request, {
    action: "/console/esims",
    statuses: STATUSES,
    types: false,
    older: "Older eSIMs",
    list: (search, cursor) =>
      listEsims(ctx.db, {
        partner_id: partnerOf(request),
        client_reference: null,
        status: search.status,
        q: search.q,
        from: search.from,
        to: search.to,
        limit: PAGE_SIZE,
        cursor,
        public_base_url: ctx.config.public_base_url,
      }),
    table: esimsTable,
  });
  return page("eSIMs", await partnerShell(request, ctx, "/console/esims"), body);
}

function bundlesTable(bundles: readonly BundleBody[]): Html {
  return scrollTable(
    "Bundles",
    html`<table><thead><tr><th scope="col">Bundle</th><th scope="col">Status</th><th scope="col">Usage</th>
      <th scope="col">Activated</th><th scope="col">Expires</th><th scope="col">Order</th></tr></thead>
      <tbody>${bundles.map(
        (b, i) => html`<tr><td>${b.name}</td><td>${statusPill(b.status)}</td>
          <td>${usageBar(b.data_used_mb, b.data_mb, `Usage of bundle ${i + 1}, ${b.name}`)}</td>
          <td>${formatInstant(b.activated_at)}</td><td>${formatInstant(b.expires_at)}</td>
          <td><a class="mono" href="/console/orders/${b.order_id}">${b.order_id}</a></td></tr>`,
      )}</tbody></table>`,
  );
}

function simulateForm(iccid: string, csrf: string): Html {
  return html`<h2>Sandbox: simulate</h2><form method="post" action="/console/esims/${iccid}/simulate" class="panel">
    ${csrfField(csrf)}
    <p class="hint">The carrier simulator makes it happen and signals it like a real carrier would.</p>
    <div class="fields"><div><label for="data_mb">Data to use (MB)</label>
      <input id="data_mb" name="data_mb" type="number" min="1" max="${MAX_SIMULATED_MB}" value="100"></div></div>
    <div class="actions">
      <button type="submit" name="event" value="install">Install on a device</button>
      <button type="submit" name="event" value="use_data">Use data</button>
      <button type="submit" name="event" value="expire" class="danger">Expire now</button>
      <button type="submit" name="event" value="delete" class="danger">Delete profile</button>
    </div></form>`;
}

async function detailPage(request: FastifyRequest, ctx: AppContext, iccid: string): Promise<string> {
  const partner_id = partnerOf(request);
  const esim = await getEsim(ctx.db, partner_id, iccid, ctx.config.public_base_url);
  const shell = await partnerShell(request, ctx, "/console/esims");
  const csrf = shell.signed_in!.csrf;
  const i = esim.installation;
  const body = html`<div class="panel"><dl class="facts">
      <dt>Status</dt><dd>${statusPill(esim.status)}</dd>
      <dt>Usage</dt><dd>${usageBar(esim.usage.data_used_mb, esim.usage.data_total_mb, "Total usage")}
        <span class="hint">as of ${formatInstant(esim.usage.updated_at)}</span></dd>
      <dt>Bought by</dt><dd><a class="mono" href="/console/orders/${esim.order_id}">${esim.order_id}</a></dd>
      <dt>Client reference</dt><dd>${esim.client_reference ?? "—"}</dd>
      <dt>Installed</dt><dd>${formatInstant(esim.installed_at)}</dd>
      <dt>Expires</dt><dd>${formatInstant(esim.expires_at)}</dd></dl></div>
    <h2>Bundles</h2>${bundlesTable(esim.bundles)}
    <h2>Install</h2><div class="panel">${installKit({ iccid, ...i })}</div>
    ${await topUpForm(ctx, partner_id, esim, csrf)}
    ${ctx.config.app_env === "sandbox" ? simulateForm(iccid, csrf) : ""}`;
  return page(`eSIM ${iccid}`, shell, body);
}

function simulatedEvent(form: Record<string, string>): SimulatedEvent {
  const event = EVENTS.find((e) => e === form.event) ?? "install";
  if (event !== "use_data") return { event };
  const data_mb = Number(form.data_mb);
  return {
    event,
    data_mb: Number.isInteger(data_mb) && data_mb >= 1 && data_mb <= MAX_SIMULATED_MB ? data_mb : 100,
  };
}

export const partnerEsimPages: ConsolePages = (scope, ctx, failures) => {
  const qr_cache = createQrPngCache();
  scope.get(
    "/esims",
    readsQuery(...SEARCH_QUERY_NAMES.filter((name) => name !== "type")),
    async (request, reply) => reply.type("text/html; charset=utf-8").send(await listPage(request, ctx)),
  );
  scope.get("/esims/:iccid", async (request, reply) => {
    const { iccid } = request.params as { iccid: string };
    return reply.type("text/html; charset=utf-8").send(await detailPage(request, ctx, iccid));
  });
  scope.get("/esims/:iccid/qr.png", async (request, reply) => {
    const { iccid } = request.params as { iccid: string };
    const png = await esimQrPng(ctx.db, qr_cache, {
      partner_id: partnerOf(request),
      iccid,
      size_px: QR_DEFAULT_SIZE_PX,
    });
    // The QR code is the activation code: no-store like every console page (set for the whole
    // console), so nothing of it is left in a shared computer's browser cache after sign-out.
    return reply.type("image/png").send(png);
  });
  scope.post("/esims/:iccid/simulate", async (request, reply) => {
    const { iccid } = request.params as { iccid: string };
    await simulateEsimEvent(ctx, partnerOf(request), iccid, simulatedEvent(formOf(request)));
    return seeOther(reply, `/console/esims/${iccid}`);
  });
  topUpPages(scope, ctx, failures);
};
