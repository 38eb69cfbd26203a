// GET /v1/esim/destination/{destination_code}/packages
import type { RequestOptions, Transport } from "../core/transport.ts";
import type { DestinationPackages } from "../types.ts";

export class Catalog {
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** The packages and wholesale prices of a destination (ISO 3166-1 alpha-2, any case). */
  packages(destinationCode: string, options?: RequestOptions): Promise<DestinationPackages> {
    const path = `/v1/esim/destination/${encodeURIComponent(destinationCode)}/packages`;
    return this.#transport.request({ method: "GET", path, idempotent: true }, options);
  }
}
