// Discovery: the packages and B2B prices offered for one destination (spec 4.1).
import { createHash } from "node:crypto";
import { type Static, Type } from "typebox";
import type { Pool } from "../db/pool.ts";
import { ApiError } from "../shared/errors.ts";
import { Money, money } from "../shared/schemas.ts";
import {
  type CachedResponse,
  cachedCatalogResponse,
  type LoadedResponse,
  trustedCatalogVersion,
} from "./catalog-cache.ts";
import { FairUseSchema, factsOfColumns, PackageNetworkSchema } from "./catalog-facts.ts";
import {
  type DestinationPackageRow,
  readCatalogVersion,
  readDestinationPackages,
} from "./list-destination-packages.sql.ts";
import { LIST_PRICES, type PriceList, priceOf } from "./price-list.ts";

export const Package = Type.Object(
  {
    package_id: Type.String({ description: "Our package id; send it to `POST /orders/cart`." }),
    external_package_id: Type.String({ description: "The carrier's id of the product." }),
    name: Type.String(),
    destination_codes: Type.Array(Type.String({ pattern: "^[A-Z]{2}$" }), {
      description: "Every destination (ISO 3166-1 alpha-2) the package covers.",
    }),
    data_mb: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: "Data allowance in megabytes; null when unlimited.",
    }),
    validity_days: Type.Integer({ minimum: 1 }),
    wholesale_price: Type.Object(Money.properties, {
      additionalProperties: false,
      description:
        "What this partner pays: the wallet is debited this amount (its price list: an override, else the list price less its discount).",
    }),
    list_price: Type.Object(Money.properties, {
      additionalProperties: false,
      description: "The catalog's wholesale price before this partner's pricing.",
    }),
    retail_price: Type.Object(Money.properties, {
      additionalProperties: false,
      description: "The recommended price to the end user.",
    }),
    coverage: Type.Enum(["country", "regional", "global"], {
      description: "country: one destination; regional: a region's destinations; global: every destination.",
    }),
    region: Type.Union([Type.String(), Type.Null()], {
      description: "The region a regional package covers.",
    }),
    networks: Type.Array(PackageNetworkSchema, {
      description:
        "The mobile networks the package uses, for every country it covers (by country code). Empty when the supplier states none.",
    }),
    fair_use: FairUseSchema,
    kyc_required: Type.Boolean({
      description: "The traveller must verify their identity (eKYC) with the supplier before the eSIM works.",
    }),
  },
  { additionalProperties: false, description: "A catalog package and its B2B price." },
);
/** The contract's Package object, plus coverage and region. Field order is the wire order. */
export type Package = Static<typeof Package>;

export const CACHE_HEADERS = {
  ETag: { type: "string", description: "Strong validator of the body; send it back in If-None-Match." },
  "Cache-Control": { type: "string", description: "`private, max-age=60`." },
};

export const DestinationPackagesResponse = Type.Object(
  {
    destination_code: Type.String({ pattern: "^[A-Z]{2}$" }),
    destination_name: Type.String(),
    data: Type.Array(Package, {
      description: "Active packages: country packages by data size, then regional, then global.",
    }),
  },
  {
    additionalProperties: false,
    description: "The destination and its packages.",
    headers: CACHE_HEADERS,
  },
);

export type DestinationPackages = Static<typeof DestinationPackagesResponse>;

/** The UTF-8 bytes of the JSON answer, encoded once: a string would be re-encoded at every send. */
export type DestinationPackagesBody = { body: Buffer; etag: string };

const DESTINATION_CODE = /^[A-Za-z]{2}$/;

/** Upper-cases a two-letter code; anything else is a malformed request, not an unknown destination. */
export function normalizeDestinationCode(destination_code: string): string {
  if (!DESTINATION_CODE.test(destination_code)) {
    throw new ApiError(
      "invalid_request",
      "destination_code must be an ISO 3166-1 alpha-2 code: two letters, such as FR.",
      {
        errors: [
          {
            field: "destination_code",
            code: "invalid_format",
            message: "must be two letters (ISO 3166-1 alpha-2)",
          },
        ],
      },
    );
  }
  return destination_code.toUpperCase();
}

/** A package as the partner of `prices` sees it; the change feed renders packages with it too. */
export function toPackage(row: DestinationPackageRow, prices: PriceList): Package {
  return {
    package_id: row.package_id,
    external_package_id: row.external_package_id,
    name: row.name,
    destination_codes: row.destination_codes,
    data_mb: row.data_mb,
    validity_days: row.validity_days,
    wholesale_price: money(priceOf(prices, row.package_id, row.wholesale_minor), row.currency),
    list_price: money(row.wholesale_minor, row.currency),
    retail_price: money(row.retail_minor, row.currency),
    coverage: row.coverage,
    region: row.region,
    ...factsOfColumns(row),
  };
}

function notFound(code: string): ApiError {
  return new ApiError("destination_not_found", `No destination ${code}.`);
}

/** The packages of one destination, read from the database (no cache). */
export async function listDestinationPackages(
  pool: Pool,
  destination_code: string,
  prices: PriceList = LIST_PRICES,
): Promise<DestinationPackages> {
  const code = normalizeDestinationCode(destination_code);
  const read = await readDestinationPackages(pool, code);
  if (read.destination_name === null) throw notFound(code);
  return {
    destination_code: code,
    destination_name: read.destination_name,
    data: read.packages.map((row) => toPackage(row, prices)),
  };
}

/** A strong validator that changes exactly when the bytes do, whatever the catalog version. */
function etagOf(body: Buffer): string {
  return `"${createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`;
}

async function loadBody(pool: Pool, code: string, prices: PriceList): Promise<LoadedResponse> {
  const read = await readDestinationPackages(pool, code);
  if (read.destination_name === null) return { version: read.version, response: { found: false } };
  const payload: DestinationPackages = {
    destination_code: code,
    destination_name: read.destination_name,
    data: read.packages.map((row) => toPackage(row, prices)),
  };
  const body = Buffer.from(JSON.stringify(payload), "utf8");
  return { version: read.version, response: { found: true, body, etag: etagOf(body) } };
}

/**
 * Each partner's answers by destination code as requested, at one catalog version: a hit costs
 * three Map lookups and no promise, whatever the partner's price list is (ten price lists in use
 * are served exactly like one: no key built per request, no price-list lookup). The bodies are the
 * catalog cache's own Buffers, shared by the partners of one price list; a new catalog version (a
 * pricing change is one too) drops every answer at once.
 */
type RememberedAnswers = {
  version: number;
  size: number;
  partners: Map<string, Map<string, DestinationPackagesBody>>;
};

/** Answers remembered per pool; past this many, they are all dropped and re-remembered from the cache. */
export const MAX_REMEMBERED_ANSWERS = 16_384;

const remembered = new WeakMap<Pool, RememberedAnswers>();

/** The answer already served to this partner for this code at the trusted catalog version, if any. */
export function rememberedAnswer(
  pool: Pool,
  partner_id: string,
  destination_code: string,
): DestinationPackagesBody | undefined {
  const answers = remembered.get(pool);
  if (answers === undefined || answers.version !== trustedCatalogVersion(pool)) return undefined;
  return answers.partners.get(partner_id)?.get(destination_code);
}

/**
 * The partner's answer for a code, from the catalog cache (loading it on a miss), remembered for
 * rememberedAnswer. Only under a version trusted before the lookups started: a body is never older
 * than that version, so it is never remembered under a newer one.
 */
export async function partnerDestinationAnswer(
  pool: Pool,
  partner_id: string,
  destination_code: string,
  priceListOf: (partner_id: string) => Promise<PriceList>,
): Promise<DestinationPackagesBody> {
  const version = trustedCatalogVersion(pool);
  const answer = await destinationPackagesBody(pool, destination_code, await priceListOf(partner_id));
  if (version !== null) remember(pool, version, partner_id, destination_code, answer);
  return answer;
}

function remember(
  pool: Pool,
  version: number,
  partner_id: string,
  destination_code: string,
  answer: DestinationPackagesBody,
): void {
  let answers = remembered.get(pool);
  if (answers === undefined || answers.version !== version || answers.size >= MAX_REMEMBERED_ANSWERS) {
    answers = { version, size: 0, partners: new Map() };
    remembered.set(pool, answers);
  }
  let codes = answers.partners.get(partner_id);
  if (codes === undefined) {
    codes = new Map();
    answers.partners.set(partner_id, codes);
  }
  if (!codes.has(destination_code)) answers.size++;
  codes.set(destination_code, answer);
}

/**
 * The same answer as listDestinationPackages, serialized once per catalog version and price list
 * (not per partner: partners with the same pricing share the entry) and kept in process memory
 * with its ETag: what the HTTP route sends.
 */
export async function destinationPackagesBody(
  pool: Pool,
  destination_code: string,
  prices: PriceList = LIST_PRICES,
): Promise<DestinationPackagesBody> {
  const code = normalizeDestinationCode(destination_code);
  const key = prices.key === LIST_PRICES.key ? code : `${code}:${prices.key}`;
  const response: CachedResponse = await cachedCatalogResponse(pool, key, readCatalogVersion, () =>
    loadBody(pool, code, prices),
  );
  if (!response.found) throw notFound(code);
  return response;
}
