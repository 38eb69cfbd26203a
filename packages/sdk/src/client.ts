// The client partners construct once and share: settings are fixed here, every call builds its
// own request from them, so one client serves concurrent calls safely.
import { MAX_RETRIES_LIMIT, SDK_VERSION, Transport } from "./core/transport.ts";
import { Carts } from "./resources/carts.ts";
import { Catalog } from "./resources/catalog.ts";
import { Esims } from "./resources/esims.ts";
import { Events } from "./resources/events.ts";
import { Orders } from "./resources/orders.ts";
import { Profile } from "./resources/profile.ts";
import { TopUps } from "./resources/topups.ts";
import { Wallet } from "./resources/wallet.ts";
import { WebhookEndpoints } from "./resources/webhook-endpoints.ts";

export type ClientOptions = {
  /** `sand_…` in the sandbox, `prod_…` in production. */
  apiKey: string;
  /** The deployment's origin, e.g. `https://sandbox.api.esim.example` (a trailing `/v1` is accepted). */
  baseUrl: string;
  /** Retries after the first attempt of a call that is safe to repeat. Default 2; 0 turns them off. */
  maxRetries?: number;
  /** Milliseconds one attempt may take, its whole answer included. Default 30,000. */
  timeout?: number;
  /** A fetch to use instead of the global one (a proxy agent, a test double of your own). */
  fetch?: typeof fetch;
};

export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_TIMEOUT_MS = 30_000;

export class EsimClient {
  static readonly VERSION = SDK_VERSION;
  readonly catalog: Catalog;
  readonly carts: Carts;
  readonly orders: Orders;
  readonly topUps: TopUps;
  readonly wallet: Wallet;
  readonly esims: Esims;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly events: Events;
  /** Your brand and which emails your travellers get. */
  readonly profile: Profile;

  constructor(options: ClientOptions) {
    if (!options.apiKey) throw new TypeError("apiKey is required");
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!Number.isInteger(maxRetries) || maxRetries < 0 || maxRetries > MAX_RETRIES_LIMIT) {
      throw new RangeError(`maxRetries must be an integer from 0 to ${MAX_RETRIES_LIMIT}`);
    }
    const transport = new Transport({
      apiKey: options.apiKey,
      baseUrl: options.baseUrl.replace(/\/+$/, "").replace(/\/v1$/, ""),
      maxRetries,
      timeout: options.timeout ?? DEFAULT_TIMEOUT_MS,
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    });
    this.catalog = new Catalog(transport);
    this.carts = new Carts(transport);
    this.orders = new Orders(transport);
    this.topUps = new TopUps(transport);
    this.wallet = new Wallet(transport);
    this.esims = new Esims(transport);
    this.webhookEndpoints = new WebhookEndpoints(transport);
    this.events = new Events(transport);
    this.profile = new Profile(transport);
  }
}
