// /v1/webhook-endpoints: create, list, get, update (PATCH), delete, rotate-secret, test,
// deliveries and a delivery's retry.
//
// Which calls the SDK retries by itself, and why (each POST here does something new each time):
// - list, get, deliveries (GET), update (PATCH of the given fields: the same body twice leaves the
//   same endpoint) and delete (a retry that finds the endpoint gone resolves: the lost attempt
//   deleted it) are retried on connection errors, timeouts, 408, 429, 5xx.
// - create, rotateSecret, test and retryDelivery are retried only on 429 `rate_limited` and 503
//   `service_unavailable`, answers given before anything was done. After a lost answer or a
//   timeout they throw: a repeated create adds a second endpoint whose secret nobody saw (it
//   receives every event and counts toward the 10); a repeated rotation mints one more secret, and
//   the one whose answer was lost, which nobody saw, signs beside it for 24 hours and takes one of
//   the five signatures a delivery carries at most; a repeated test or retry sends one more
//   delivery. Check with list/get/deliveries, then decide.
import { CursorList } from "../core/pagination.ts";
import type { RequestOptions, Transport } from "../core/transport.ts";
import type {
  CreateWebhookEndpointParams,
  ListWebhookDeliveriesParams,
  RotatedWebhookSecret,
  UpdateWebhookEndpointParams,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointPage,
  WebhookEndpointWithSecret,
  WebhookTestEvent,
} from "../types.ts";

const ENDPOINTS = "/v1/webhook-endpoints";
const endpointPath = (endpointId: string) => `${ENDPOINTS}/${encodeURIComponent(endpointId)}`;

export class WebhookEndpoints {
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Adds an endpoint (at most 10). The answer's `secret` is shown this once: store it, it verifies
   * the deliveries (`verifyWebhook`). Not retried after a lost answer (see the top of this file).
   */
  create(params: CreateWebhookEndpointParams, options?: RequestOptions): Promise<WebhookEndpointWithSecret> {
    return this.#transport.request(
      { method: "POST", path: ENDPOINTS, body: params, idempotent: false },
      options,
    );
  }

  /** Your endpoints, newest first, without secrets (at most 10: one page). */
  list(options: RequestOptions = {}): CursorList<WebhookEndpoint> {
    return new CursorList(
      (_cursor, pageOptions) =>
        this.#transport.request<WebhookEndpointPage>(
          { method: "GET", path: ENDPOINTS, idempotent: true },
          pageOptions,
        ),
      options,
    );
  }

  get(endpointId: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.#transport.request(
      { method: "GET", path: endpointPath(endpointId), idempotent: true },
      options,
    );
  }

  /**
   * Changes the fields given; the others stay. `status: "enabled"` re-enables a disabled endpoint
   * (its waiting deliveries go out then). Retried: the same change twice is the same endpoint.
   */
  update(
    endpointId: string,
    params: UpdateWebhookEndpointParams,
    options?: RequestOptions,
  ): Promise<WebhookEndpoint> {
    return this.#transport.request(
      { method: "PATCH", path: endpointPath(endpointId), body: params, idempotent: true },
      options,
    );
  }

  /**
   * Deletes the endpoint and its delivery log. Retried; a retry answered 404 means the attempt
   * whose answer was lost deleted it, so the call resolves. A first answer 404 still throws.
   */
  async delete(endpointId: string, options?: RequestOptions): Promise<void> {
    await this.#transport.request(
      {
        method: "DELETE",
        path: endpointPath(endpointId),
        idempotent: true,
        doneOnRetry: "webhook_endpoint_not_found",
      },
      options,
    );
  }

  /**
   * A new secret, shown once. For 24 hours deliveries carry two signatures, the previous secret's
   * and this one's, so the receiver verifies with either while you deploy it (more after several
   * rotations within 24 hours: each replaced secret signs its own 24 hours, five signatures at
   * most). Never retried after a lost answer: the repeat would leave the lost secret, which nobody
   * saw, signing for 24 hours in one of those five places.
   */
  rotateSecret(endpointId: string, options?: RequestOptions): Promise<RotatedWebhookSecret> {
    const path = `${endpointPath(endpointId)}/rotate-secret`;
    return this.#transport.request({ method: "POST", path, idempotent: false }, options);
  }

  /** Records a `webhook.test` event for this endpoint only and delivers it like any other. */
  test(endpointId: string, options?: RequestOptions): Promise<WebhookTestEvent> {
    const path = `${endpointPath(endpointId)}/test`;
    return this.#transport.request({ method: "POST", path, idempotent: false }, options);
  }

  /**
   * The endpoint's deliveries, newest first, every page; `status` filters
   * (`pending`, `succeeded`, `failed`).
   */
  deliveries(
    endpointId: string,
    params: Omit<ListWebhookDeliveriesParams, "cursor"> = {},
    options: RequestOptions = {},
  ): CursorList<WebhookDelivery> {
    return new CursorList(
      (cursor, pageOptions) => this.deliveriesPage(endpointId, { ...params, cursor }, pageOptions),
      options,
    );
  }

  /** One page of deliveries, for callers that keep the cursor themselves. */
  deliveriesPage(
    endpointId: string,
    params: ListWebhookDeliveriesParams = {},
    options?: RequestOptions,
  ): Promise<WebhookDeliveryPage> {
    return this.#transport.request(
      { method: "GET", path: `${endpointPath(endpointId)}/deliveries`, query: params, idempotent: true },
      options,
    );
  }

  /**
   * One more attempt now, whatever the delivery's state (a succeeded one is sent again, same
   * `webhook-id`). Answers the delivery, pending. Not retried after a lost answer.
   */
  retryDelivery(endpointId: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> {
    const path = `${endpointPath(endpointId)}/deliveries/${encodeURIComponent(deliveryId)}/retry`;
    return this.#transport.request({ method: "POST", path, idempotent: false }, options);
  }
}
