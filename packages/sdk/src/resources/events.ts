// GET /v1/events, GET /v1/events/{event_id}: the events of the last 30 days, whether or not a
// webhook endpoint received them (a receiver that was down catches up here).
import { CursorList } from "../core/pagination.ts";
import type { RequestOptions, Transport } from "../core/transport.ts";
import type { ApiEvent, ApiEventPage, ListEventsParams } from "../types.ts";

export class Events {
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** Newest first, every page: `for await (const event of client.events.list({ type: "order.completed" }))`. */
  list(params: Omit<ListEventsParams, "cursor"> = {}, options: RequestOptions = {}): CursorList<ApiEvent> {
    return new CursorList((cursor, pageOptions) => this.page({ ...params, cursor }, pageOptions), options);
  }

  /** One page, for callers that keep the cursor themselves. */
  page(params: ListEventsParams = {}, options?: RequestOptions): Promise<ApiEventPage> {
    return this.#transport.request(
      { method: "GET", path: "/v1/events", query: params, idempotent: true },
      options,
    );
  }

  /** One event; unknown, older than 30 days or another partner's: 404 `event_not_found`. */
  get(eventId: string, options?: RequestOptions): Promise<ApiEvent> {
    const path = `/v1/events/${encodeURIComponent(eventId)}`;
    return this.#transport.request({ method: "GET", path, idempotent: true }, options);
  }
}
