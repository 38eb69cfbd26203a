// GET /v1/esim/destinations (contract, "Catalog additions"): the destinations a partner can sell,
// with how many packages each offers and the cheapest of them at this partner's prices. Served
// like discovery: computed once per catalog version and price list from one read of the catalog
// (cached), serialized once, and remembered per partner so a repeat costs two Map lookups.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { type Static, Type } from "typebox";
import type { Pool } from "../db/pool.ts";
import { Money, money } from "../shared/schemas.ts";
import { cachedCatalogResponse, cachedCatalogValue, trustedCatalogVersion } from "./catalog-cache.ts";
import { readCatalogVersion } from "./list-destination-packages.sql.ts";
import { CACHE_HEADERS, type DestinationPackagesBody } from "./list-destination-packages.ts";
import {
  type DestinationIndex,
  type DestinationIndexRow,
  readDestinationIndex,
} from "./list-destinations.sql.ts";
import { LIST_PRICES, type PriceList, priceOf } from "./price-list.ts";

export const DestinationSummary = Type.Object(
  {
    destination_code: Type.String({ pattern: "^[A-Z]{2}$", description: "ISO 3166-1 alpha-2." }),
    destination_name: Type.String(),
    package_count: Type.Integer({
      minimum: 1,
      description:
        "How many packages `GET /v1/esim/destination/{destination_code}/packages` returns: country, regional and global ones.",
    }),
    from_price: Type.Object(Money.properties, {
      additionalProperties: false,
      description: "The cheapest of those packages for you: its `wholesale_price` (your price list applied).",
    }),
  },
  { additionalProperties: false },
);

export const DestinationsResponse = Type.Object(
  {
    data: Type.Array(DestinationSummary, {
      description: "Every destination with at least one active package, by destination_code.",
    }),
  },
  { additionalProperties: false, description: "The destinations on sale.", headers: CACHE_HEADERS },
);
export type Destinations = Static<typeof DestinationsResponse>;

/** The cache key of the catalog's read, shared by every price list; two-letter codes never collide with it. */
const INDEX_KEY = "destinations:index";

function cheapest(
  row: DestinationIndexRow,
  prices: PriceList,
): Static<typeof DestinationSummary>["from_price"] {
  // Every package of a deployment is in its currency; one that is not (a currency changed between
  // imports) is not comparable, so the cheapest is taken among the first package's currency.
  const currency = row.currencies[0]!;
  let best = Number.POSITIVE_INFINITY;
  for (const [i, package_id] of row.package_ids.entries()) {
    if (row.currencies[i] !== currency) continue;
    const list_minor = Number(row.list_minor[i]);
    assert.ok(Number.isSafeInteger(list_minor) && list_minor > 0, `list price of ${package_id}`);
    best = Math.min(best, priceOf(prices, package_id, list_minor));
  }
  return money(best, currency);
}

/** The answer for one price list, from the catalog's read (no database access). */
export function destinationsFor(index: DestinationIndex, prices: PriceList): Destinations {
  return {
    data: index.destinations.map((row) => ({
      destination_code: row.destination_code,
      destination_name: row.destination_name,
      package_count: row.package_ids.length,
      from_price: cheapest(row, prices),
    })),
  };
}

/** The answer read from the database, not cached: what the cached one must equal. */
export async function listDestinations(pool: Pool, prices: PriceList = LIST_PRICES): Promise<Destinations> {
  return destinationsFor(await readDestinationIndex(pool), prices);
}

function etagOf(body: Buffer): string {
  return `"${createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`;
}

/** The serialized answer for a price list, cached per catalog version (partners sharing pricing share it). */
export async function destinationsBody(pool: Pool, prices: PriceList): Promise<DestinationPackagesBody> {
  const response = await cachedCatalogResponse(
    pool,
    `destinations:${prices.key}`,
    readCatalogVersion,
    async () => {
      const index = await cachedCatalogValue(pool, INDEX_KEY, readCatalogVersion, async () => {
        const read = await readDestinationIndex(pool);
        return { version: read.version, response: read };
      });
      const body = Buffer.from(JSON.stringify(destinationsFor(index, prices)), "utf8");
      return { version: index.version, response: { found: true, body, etag: etagOf(body) } };
    },
  );
  assert.ok(response.found, "the destinations answer always exists");
  return response;
}

/** Answers served per partner at one catalog version: the hot path's two Map lookups. */
type Remembered = { version: number; partners: Map<string, DestinationPackagesBody> };

/** Partners remembered per pool; past this, the map starts over (each partner's answer is in the cache). */
export const MAX_REMEMBERED_PARTNERS = 16_384;

const remembered = new WeakMap<Pool, Remembered>();

/** The answer already served to this partner at the trusted catalog version, if any. */
export function rememberedDestinations(pool: Pool, partner_id: string): DestinationPackagesBody | undefined {
  const answers = remembered.get(pool);
  if (answers === undefined || answers.version !== trustedCatalogVersion(pool)) return undefined;
  return answers.partners.get(partner_id);
}

/**
 * The partner's answer through the caches, remembered under the version trusted before the lookups
 * started: a body is never older than that version, so it is never remembered under a newer one.
 */
export async function partnerDestinations(
  pool: Pool,
  partner_id: string,
  priceListOf: (partner_id: string) => Promise<PriceList>,
): Promise<DestinationPackagesBody> {
  const version = trustedCatalogVersion(pool);
  const answer = await destinationsBody(pool, await priceListOf(partner_id));
  if (version !== null) {
    let answers = remembered.get(pool);
    if (
      answers === undefined ||
      answers.version !== version ||
      answers.partners.size >= MAX_REMEMBERED_PARTNERS
    ) {
      answers = { version, partners: new Map() };
      remembered.set(pool, answers);
    }
    answers.partners.set(partner_id, answer);
  }
  return answer;
}
