// GET /v1/esim/destinations, GET /v1/esim/destination/{destination_code}/packages,
// GET /v1/compatible-devices
import type { RequestOptions, Transport } from "../core/transport.ts";
import type {
  CompatibleDevices,
  CompatibleDevicesParams,
  DestinationPackages,
  Destinations,
} from "../types.ts";

export class Catalog {
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** Every destination on sale: its package count and the cheapest price at your prices. */
  destinations(options?: RequestOptions): Promise<Destinations> {
    return this.#transport.request(
      { method: "GET", path: "/v1/esim/destinations", idempotent: true },
      options,
    );
  }

  /** The packages and wholesale prices of a destination (ISO 3166-1 alpha-2, any case). */
  packages(destinationCode: string, options?: RequestOptions): Promise<DestinationPackages> {
    const path = `/v1/esim/destination/${encodeURIComponent(destinationCode)}/packages`;
    return this.#transport.request({ method: "GET", path, idempotent: true }, options);
  }

  /** The devices that take an eSIM; `q` keeps those whose brand or model contains it (any case). */
  compatibleDevices(
    params: CompatibleDevicesParams = {},
    options?: RequestOptions,
  ): Promise<CompatibleDevices> {
    return this.#transport.request(
      { method: "GET", path: "/v1/compatible-devices", query: params, idempotent: true },
      options,
    );
  }
}
