// POST /v1/orders/cart
import type { RequestOptions, Transport } from "../core/transport.ts";
import type { Cart, CreateCartParams } from "../types.ts";

export class Carts {
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Reserves a package for 30 minutes: `quantity` eSIMs of it (1-50, default 1; more than one is
   * a group order, `total` = quantity x price). Retried like a read: a repeated creation makes another
   * cart, but a cart charges nothing and an unused one only lapses, so the worst a retry leaves
   * behind is one unused reservation. Only the cart returned is ever submitted.
   */
  create(params: CreateCartParams, options?: RequestOptions): Promise<Cart> {
    return this.#transport.request(
      { method: "POST", path: "/v1/orders/cart", body: params, idempotent: true },
      options,
    );
  }
}
