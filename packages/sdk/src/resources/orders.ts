// POST /v1/orders/submit, GET /v1/orders/{orderID}, POST /v1/orders/{orderID}/refund, GET /v1/profile/orders,
// POST /v1/orders/{orderID}/resend-email, GET /v1/orders/{orderID}/emails, GET /v1/orders/{orderID}/events
import { CursorList } from "../core/pagination.ts";
import type { RequestOptions, Transport } from "../core/transport.ts";
import type {
  ListOrdersParams,
  Order,
  OrderEmails,
  OrderEvents,
  OrderPage,
  ResendOrderEmailParams,
  ResentEmail,
  SubmitOrderParams,
} from "../types.ts";

export class Orders {
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Buys the cart's eSIMs: one, or a group of the cart's `quantity` (`params.travellers`, if
   * given, one per eSIM, each emailed their own). Each entry of `purchases` is `completed` or, in a
   * group order only, `failed` (refused by the carrier, not charged); narrow on `status`. Every
   * eSIM refused: ApiError 502 `carrier_error`, nothing charged. Safe to retry by its `cart_key`:
   * a repeat returns the same order and charges nothing again, so the SDK retries it on
   * connection errors, timeouts and 409 `request_in_progress` by itself.
   */
  submit(params: SubmitOrderParams, options?: RequestOptions): Promise<Order> {
    return this.#transport.request(
      { method: "POST", path: "/v1/orders/submit", body: params, idempotent: true },
      options,
    );
  }

  get(orderId: string, options?: RequestOptions): Promise<Order> {
    const path = `/v1/orders/${encodeURIComponent(orderId)}`;
    return this.#transport.request({ method: "GET", path, idempotent: true }, options);
  }

  /**
   * Refunds an order whose eSIM or bundle was never used; the wallet is credited once (a group
   * order is refused: 409 `refund_not_allowed`, `reason` `group_order`). A repeat
   * answers the refunded order again and credits nothing, so the SDK retries it by itself, under one
   * Idempotency-Key per call (yours, or one it makes).
   */
  refund(orderId: string, options: RequestOptions & { idempotencyKey?: string } = {}): Promise<Order> {
    const { idempotencyKey = crypto.randomUUID(), ...rest } = options;
    const path = `/v1/orders/${encodeURIComponent(orderId)}/refund`;
    return this.#transport.request({ method: "POST", path, idempotent: true, idempotencyKey }, rest);
  }

  /**
   * Queues the order's confirmation email again, to its address or `params.email`. A repeat under
   * the same Idempotency-Key answers the same `email_id` and emails nothing again, so the SDK
   * retries it by itself, under one key per call (yours, or one it makes).
   */
  resendEmail(
    orderId: string,
    params: ResendOrderEmailParams = {},
    options: RequestOptions & { idempotencyKey?: string } = {},
  ): Promise<ResentEmail> {
    const { idempotencyKey = crypto.randomUUID(), ...rest } = options;
    const path = `/v1/orders/${encodeURIComponent(orderId)}/resend-email`;
    return this.#transport.request(
      { method: "POST", path, body: params, idempotent: true, idempotencyKey },
      rest,
    );
  }

  /** The order's email log: its first confirmation and every resend, with delivery status. */
  emails(orderId: string, options?: RequestOptions): Promise<OrderEmails> {
    const path = `/v1/orders/${encodeURIComponent(orderId)}/emails`;
    return this.#transport.request({ method: "GET", path, idempotent: true }, options);
  }

  /** The order's timeline: its events and its eSIM's, oldest first. */
  events(orderId: string, options?: RequestOptions): Promise<OrderEvents> {
    const path = `/v1/orders/${encodeURIComponent(orderId)}/events`;
    return this.#transport.request({ method: "GET", path, idempotent: true }, options);
  }

  /** Newest first, every page: `for await (const order of client.orders.list())`. */
  list(params: Omit<ListOrdersParams, "cursor"> = {}, options: RequestOptions = {}): CursorList<Order> {
    return new CursorList((cursor, pageOptions) => this.page({ ...params, cursor }, pageOptions), options);
  }

  /** One page, for callers that keep the cursor themselves. */
  page(params: ListOrdersParams = {}, options?: RequestOptions): Promise<OrderPage> {
    return this.#transport.request(
      { method: "GET", path: "/v1/profile/orders", query: params, idempotent: true },
      options,
    );
  }
}
