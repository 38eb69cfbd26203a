// GET /v1/esim/destinations, GET /v1/esim/destination/{destination_code}/packages,
// GET /v1/catalog/changes, GET /v1/compatible-devices
import { CursorList } from "../core/pagination.ts";
import type { RequestOptions, Transport } from "../core/transport.ts";
import type {
  CatalogChange,
  CatalogChangePage,
  CompatibleDevices,
  CompatibleDevicesParams,
  DestinationPackages,
  Destinations,
  ListCatalogChangesParams,
} from "../types.ts";

/**
 * The changes after a position, every page until caught up. Once iterated, `cursor` is the
 * position to store and to poll from next time (`since`): it never goes back, and is the `since`
 * given until a page has been read.
 */
export class CatalogChangeFeed extends CursorList<CatalogChange> {
  #cursor: string | undefined;

  constructor(
    fetchPage: (since: string | undefined, options: RequestOptions) => Promise<CatalogChangePage>,
    since: string | undefined,
    options: RequestOptions,
  ) {
    super(async (cursor, pageOptions) => {
      const page = await fetchPage(cursor ?? since, pageOptions);
      this.#cursor = page.next_cursor;
      return page;
    }, options);
    this.#cursor = since;
  }

  get cursor(): string | undefined {
    return this.#cursor;
  }
}

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

  /**
   * Oldest first, every page after `since` (absent: from the feed's start):
   * `const feed = client.catalog.changes({ since }); for await (const change of feed) apply(change); save(feed.cursor);`
   */
  changes(params: ListCatalogChangesParams = {}, options: RequestOptions = {}): CatalogChangeFeed {
    const { since, ...rest } = params;
    return new CatalogChangeFeed(
      (cursor, pageOptions) =>
        this.changesPage(cursor === undefined ? rest : { ...rest, since: cursor }, pageOptions),
      since,
      options,
    );
  }

  /** One page, for callers that keep the cursor themselves: pass its `next_cursor` as `since`. */
  changesPage(params: ListCatalogChangesParams = {}, options?: RequestOptions): Promise<CatalogChangePage> {
    return this.#transport.request(
      { method: "GET", path: "/v1/catalog/changes", query: params, idempotent: true },
      options,
    );
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
