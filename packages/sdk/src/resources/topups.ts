// GET /v1/orders/available-topups/{iccid}, POST /v1/orders/submit-topup
import type { RequestOptions, Transport } from "../core/transport.ts";
import type { AvailableTopUps, Order, SubmitTopUpParams } from "../types.ts";

export type TopUpOptions = RequestOptions & {
  /**
   * The top-up's Idempotency-Key (1-255 printable ASCII characters). Without one the SDK makes
   * one (a random UUID) per call and sends it on every attempt of that call. Pass your own to be
   * safe across process restarts too: the same key and body never top up twice.
   */
  idempotencyKey?: string;
};

export class TopUps {
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** The top-ups offered for an eSIM you bought. */
  available(iccid: string, options?: RequestOptions): Promise<AvailableTopUps> {
    const path = `/v1/orders/available-topups/${encodeURIComponent(iccid)}`;
    return this.#transport.request({ method: "GET", path, idempotent: true }, options);
  }

  /** Adds data to an eSIM; retried safely under one Idempotency-Key. */
  submit(params: SubmitTopUpParams, options: TopUpOptions = {}): Promise<Order> {
    const { idempotencyKey = crypto.randomUUID(), ...rest } = options;
    return this.#transport.request(
      { method: "POST", path: "/v1/orders/submit-topup", body: params, idempotent: true, idempotencyKey },
      rest,
    );
  }
}
