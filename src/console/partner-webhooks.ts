// The partner's webhook endpoints: list and add (the secret shown once), and per endpoint its facts,
// send a test event, rotate the secret (shown once), enable or disable, delete, and the delivery log
// with a retry per delivery. Each change calls the webhooks domain's use case exactly as its
// /v1/webhook-endpoints route does, scoped to the signed-in partner (another's endpoint is 404).
import type { FastifyRequest } from "fastify";
import type { AppContext } from "../shared/context.ts";
import { actorOf } from "../shared/http-types.ts";
import { readsQuery } from "../shared/query-names.ts";
import { CreateEndpointBody } from "../webhooks/create-endpoint.route.ts";
import { createEndpoint } from "../webhooks/create-endpoint.ts";
import { DEFAULT_PAGE_SIZE, listDeliveries, retryDeliveryNow } from "../webhooks/list-deliveries.ts";
import {
  changeEndpoint,
  getEndpoint,
  listEndpoints,
  removeEndpoint,
  rotateEndpointSecret,
} from "../webhooks/manage-endpoint.ts";
import { EndpointStatus } from "../webhooks/render-webhooks.ts";
import { sendTestEvent } from "../webhooks/send-test-event.ts";
import { type Html, html } from "./html.ts";
import { notice, page } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { checked, formOf, partnerOf, queryValue, seeOther } from "./request.ts";
import { partnerShell } from "./shells.ts";
import {
  checkedEventTypes,
  createEndpointForm,
  deliveriesTable,
  endpointFacts,
  endpointsTable,
  shownSecret,
} from "./webhook-tables.ts";

const HOME = "/console/webhooks";
const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;

async function listPage(request: FastifyRequest, ctx: AppContext, top: Html): Promise<string> {
  const shell = await partnerShell(request, ctx, HOME);
  const endpoints = await listEndpoints(ctx, partnerOf(request));
  const body = html`${top}
    <p>Events are POSTed to your endpoints, signed the Standard Webhooks way, retried for 5 days.</p>
    ${endpointsTable(endpoints)}${createEndpointForm(shell.signed_in!.csrf)}`;
  return page("Webhooks", shell, body);
}

function statusFilter(endpoint_id: string, status: string | null): Html {
  return html`<form method="get" action="${HOME}/${endpoint_id}" class="panel" role="search"><div class="fields">
    <div><label for="status">Delivery status</label><select id="status" name="status"><option value="">Any</option>${DELIVERY_STATUSES.map(
      (s) => html`<option value="${s}"${s === status ? html` selected` : ""}>${s}</option>`,
    )}</select></div><div class="submit"><button type="submit">Filter</button></div></div></form>`;
}

/** An endpoint and a page of its deliveries, newest first (the API's page size and cursor). */
async function endpointPage(
  request: FastifyRequest,
  ctx: AppContext,
  endpoint_id: string,
  top: Html,
): Promise<string> {
  const partner_id = partnerOf(request);
  const wanted = queryValue(request, "status");
  const status = DELIVERY_STATUSES.find((s) => s === wanted) ?? null;
  const cursor = queryValue(request, "cursor");
  // Deliveries first, then the endpoint: a 410 fails its delivery and disables the endpoint in one
  // transaction, so a failed delivery on this page is never shown beside a stale "enabled".
  const deliveries = await listDeliveries(ctx, {
    partner_id,
    endpoint_id,
    status,
    limit: DEFAULT_PAGE_SIZE,
    cursor,
  });
  const endpoint = await getEndpoint(ctx, partner_id, endpoint_id);
  const shell = await partnerShell(request, ctx, HOME);
  const csrf = shell.signed_in!.csrf;
  const here = `${HOME}/${endpoint_id}`;
  const next = new URLSearchParams({ ...(status ? { status } : {}), cursor: deliveries.next_cursor ?? "" });
  const body = html`${top}${endpointFacts(endpoint, csrf)}
    <h2>Deliveries</h2>${statusFilter(endpoint_id, status)}
    ${deliveriesTable(endpoint_id, deliveries.data, csrf)}
    <div class="pager"><a href="${here}${status ? `?status=${status}` : ""}">Refresh</a>${
      deliveries.next_cursor ? html`<a href="${here}?${next.toString()}">Older deliveries</a>` : ""
    }</div>
    <p><a href="${HOME}">All endpoints</a></p>`;
  return page(`Webhook endpoint ${endpoint_id}`, shell, body);
}

/** What a redirect after a change says on the endpoint's page. */
function doneNotice(request: FastifyRequest): Html {
  const tested = queryValue(request, "tested");
  if (tested)
    return notice("ok", `Test event ${tested} queued: its delivery is below (refresh to follow it).`);
  const retried = queryValue(request, "retried");
  if (retried) return notice("ok", `Delivery ${retried} is due again now (refresh to follow it).`);
  const status = queryValue(request, "status_changed");
  if (status === "enabled")
    return notice("ok", "The endpoint is enabled; deliveries that waited go out now.");
  if (status === "disabled")
    return notice("ok", "The endpoint is disabled; its deliveries wait until enabled.");
  return html``;
}

function endpointIdOf(request: FastifyRequest): string {
  return (request.params as { endpoint_id: string }).endpoint_id;
}

function endpointPages(scope: Parameters<ConsolePages>[0], ctx: AppContext): void {
  scope.get(
    "/webhooks/:endpoint_id",
    readsQuery("status", "cursor", "tested", "retried", "status_changed"),
    async (request, reply) =>
      reply
        .type("text/html; charset=utf-8")
        .send(await endpointPage(request, ctx, endpointIdOf(request), doneNotice(request))),
  );
  scope.post("/webhooks/:endpoint_id/test", async (request, reply) => {
    const endpoint_id = endpointIdOf(request);
    const { event_id } = await sendTestEvent(ctx, partnerOf(request), endpoint_id);
    return seeOther(reply, `${HOME}/${endpoint_id}?tested=${encodeURIComponent(event_id)}`);
  });
  // The new secret is in this response only (no redirect to a page that could show it again).
  scope.post("/webhooks/:endpoint_id/rotate-secret", async (request, reply) => {
    const endpoint_id = endpointIdOf(request);
    const { secret } = await rotateEndpointSecret(ctx, partnerOf(request), endpoint_id, actorOf(request));
    const top = shownSecret(endpoint_id, secret, true);
    return reply.type("text/html; charset=utf-8").send(await endpointPage(request, ctx, endpoint_id, top));
  });
  scope.post("/webhooks/:endpoint_id/status", async (request, reply) => {
    const endpoint_id = endpointIdOf(request);
    const status = checked(EndpointStatus, formOf(request).status);
    await changeEndpoint(ctx, partnerOf(request), endpoint_id, { status }, actorOf(request));
    return seeOther(reply, `${HOME}/${endpoint_id}?status_changed=${status}`);
  });
  scope.post("/webhooks/:endpoint_id/delete", async (request, reply) => {
    await removeEndpoint(ctx, partnerOf(request), endpointIdOf(request), actorOf(request));
    return seeOther(reply, `${HOME}?deleted=1`);
  });
  scope.post("/webhooks/:endpoint_id/deliveries/:delivery_id/retry", async (request, reply) => {
    const { endpoint_id, delivery_id } = request.params as { endpoint_id: string; delivery_id: string };
    await retryDeliveryNow(ctx, partnerOf(request), endpoint_id, delivery_id);
    return seeOther(reply, `${HOME}/${endpoint_id}?retried=${encodeURIComponent(delivery_id)}`);
  });
}

export const partnerWebhookPages: ConsolePages = (scope, ctx) => {
  scope.get("/webhooks", readsQuery("deleted"), async (request, reply) => {
    const top = queryValue(request, "deleted")
      ? notice("ok", "The endpoint is deleted; nothing more is sent to it.")
      : html``;
    return reply.type("text/html; charset=utf-8").send(await listPage(request, ctx, top));
  });
  // The new endpoint's page with its secret, in this response only.
  scope.post("/webhooks", async (request, reply) => {
    const form = formOf(request);
    const input = checked(CreateEndpointBody, {
      url: form.url ?? "",
      description: form.description ?? null,
      event_types: checkedEventTypes(form),
    });
    const created = await createEndpoint(ctx, partnerOf(request), input, actorOf(request));
    const top = shownSecret(created.endpoint_id, created.secret, false);
    return reply
      .type("text/html; charset=utf-8")
      .send(await endpointPage(request, ctx, created.endpoint_id, top));
  });
  endpointPages(scope, ctx);
};
