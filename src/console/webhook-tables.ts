// How the webhooks page shows things: the partner's endpoints, the form to add one, an endpoint's
// facts and buttons, its delivery log with a retry button per delivery, and a secret shown once.
import { EVENT_TYPES } from "../events/record-event.ts";
import type { DeliveryBody, WebhookEndpointBody } from "../webhooks/render-webhooks.ts";
import { formatInstant, statusPill } from "./format.ts";
import { type Html, html } from "./html.ts";
import { csrfField, scrollTable } from "./layout.ts";

export const ENDPOINT_STATUS_CLASS = { enabled: "active", disabled: "failed" } as const;

function endpointStatus(e: WebhookEndpointBody): Html {
  return html`<span class="status ${ENDPOINT_STATUS_CLASS[e.status]}">${e.status}</span>`;
}

function eventTypes(e: WebhookEndpointBody): string {
  return e.event_types.length === 0 ? "all events" : e.event_types.join(", ");
}

export function endpointsTable(endpoints: readonly WebhookEndpointBody[]): Html {
  if (endpoints.length === 0) return html`<div class="panel"><p>No webhook endpoints yet.</p></div>`;
  return scrollTable(
    "Webhook endpoints",
    html`<table><thead><tr><th scope="col">Endpoint</th><th scope="col">URL</th><th scope="col">Events</th>
      <th scope="col">Status</th><th scope="col">Created</th></tr></thead>
      <tbody>${endpoints.map(
        (e) => html`<tr><td><a class="mono" href="/console/webhooks/${e.endpoint_id}">${e.endpoint_id}</a>${
          e.description ? html`<br><span class="hint">${e.description}</span>` : ""
        }</td><td class="mono">${e.url}</td><td>${eventTypes(e)}</td><td>${endpointStatus(e)}</td>
          <td>${formatInstant(e.created_at)}</td></tr>`,
      )}</tbody></table>`,
  );
}

/** One checkbox per event type (none checked: all types), each named `type:<event type>`. */
export function createEndpointForm(csrf: string): Html {
  return html`<h2>Add an endpoint</h2><form method="post" action="/console/webhooks" class="panel">${csrfField(csrf)}
    <div class="fields">
      <div class="wide"><label for="url">URL</label>
        <input id="url" name="url" type="url" required maxlength="2048" placeholder="https://example.com/webhooks" aria-describedby="url-hint">
        <p class="hint" id="url-hint">https on a public address; checked again at every delivery.</p></div>
      <div class="wide"><label for="description">Description (optional)</label>
        <input id="description" name="description" maxlength="500"></div>
    </div>
    <fieldset class="choices"><legend>Events to send (none checked: all of them)</legend>${EVENT_TYPES.map(
      (type) =>
        html`<label class="choice"><input type="checkbox" name="type:${type}" value="1"> ${type}</label>`,
    )}</fieldset>
    <div class="actions"><button type="submit">Add endpoint</button></div></form>`;
}

/** The event types a form checked (the create form's checkboxes). */
export function checkedEventTypes(form: Record<string, string>): string[] {
  return EVENT_TYPES.filter((type) => form[`type:${type}`] !== undefined);
}

function actionForm(action: string, csrf: string, button: Html): Html {
  return html`<form method="post" action="${action}" class="inline">${csrfField(csrf)}${button}</form>`;
}

export function endpointFacts(e: WebhookEndpointBody, csrf: string): Html {
  const base = `/console/webhooks/${e.endpoint_id}`;
  const toggle = e.status === "enabled" ? "disabled" : "enabled";
  return html`<div class="panel"><dl class="facts">
      <dt>URL</dt><dd class="mono">${e.url}</dd>
      <dt>Description</dt><dd>${e.description ?? "—"}</dd>
      <dt>Events</dt><dd>${eventTypes(e)}</dd>
      <dt>Status</dt><dd>${endpointStatus(e)}${e.disabled_reason ? html` <span class="hint">${e.disabled_reason}</span>` : ""}</dd>
      <dt>Created</dt><dd>${formatInstant(e.created_at)}</dd></dl>
    <div class="actions">
      ${actionForm(`${base}/test`, csrf, html`<button type="submit">Send test event</button>`)}
      ${actionForm(`${base}/rotate-secret`, csrf, html`<button type="submit" class="quiet">Rotate secret</button>`)}
      ${actionForm(
        `${base}/status`,
        csrf,
        html`<input type="hidden" name="status" value="${toggle}"><button type="submit" class="quiet">${
          toggle === "enabled" ? "Enable" : "Disable"
        }</button>`,
      )}
      ${actionForm(`${base}/delete`, csrf, html`<button type="submit" class="danger">Delete endpoint</button>`)}
    </div></div>`;
}

function outcome(d: DeliveryBody): Html | string {
  if (d.last_response_status !== null)
    return html`HTTP ${d.last_response_status}${d.last_error ? html`<br><span class="hint">${d.last_error}</span>` : ""}`;
  return d.last_error ?? "—";
}

export function deliveriesTable(
  endpoint_id: string,
  deliveries: readonly DeliveryBody[],
  csrf: string,
): Html {
  if (deliveries.length === 0) return html`<div class="panel"><p>No deliveries.</p></div>`;
  const base = `/console/webhooks/${endpoint_id}/deliveries`;
  return scrollTable(
    "Deliveries",
    html`<table><thead><tr><th scope="col">Delivery</th><th scope="col">Event</th><th scope="col">Status</th>
      <th scope="col" class="num">Attempts</th><th scope="col">Last attempt</th><th scope="col">Answer</th>
      <th scope="col">Next attempt</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
      <tbody>${deliveries.map(
        (d) => html`<tr><td class="mono">${d.delivery_id}</td>
          <td>${d.event_type}<br><span class="mono hint">${d.event_id}</span></td><td>${statusPill(d.status)}</td>
          <td class="num">${d.attempts}</td><td>${formatInstant(d.last_attempt_at)}</td><td>${outcome(d)}</td>
          <td>${formatInstant(d.next_attempt_at)}</td>
          <td>${actionForm(
            `${base}/${d.delivery_id}/retry`,
            csrf,
            html`<button type="submit" class="quiet" aria-label="Retry delivery ${d.delivery_id}">Retry</button>`,
          )}</td></tr>`,
      )}</tbody></table>`,
  );
}

/** A signing secret just made: in this response only, never again. */
export function shownSecret(endpoint_id: string, secret: string, rotated: boolean): Html {
  return html`<div class="notice ok" role="status">
    <p><strong>${rotated ? "New signing secret" : "Endpoint added"} for ${endpoint_id}.</strong> Copy the secret now:
    it is shown once.${rotated ? " The previous one keeps signing beside it for 24 hours." : ""}</p>
    <p class="secret mono">${secret}</p></div>`;
}
