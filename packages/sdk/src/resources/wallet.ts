// GET /v1/profile/wallet
import type { RequestOptions, Transport } from "../core/transport.ts";
import type { Wallet as WalletBody } from "../types.ts";

export class Wallet {
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  get(options?: RequestOptions): Promise<WalletBody> {
    return this.#transport.request({ method: "GET", path: "/v1/profile/wallet", idempotent: true }, options);
  }
}
