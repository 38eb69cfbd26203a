// A partner's price list, as the paths quoting many prices read it: discovery through the catalog
// cache (one load per partner per catalog version), the top-up list straight from the database.
// A cart or a top-up prices one package: it reads that package's terms with the package, in its
// own transaction (packages.sql.ts, WithPriceTerms).
import type { Kysely } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Pool } from "../db/pool.ts";
import type { Database } from "../db/schema.ts";
import { cachedCatalogValue } from "./catalog-cache.ts";
import { readCatalogVersion } from "./list-destination-packages.sql.ts";
import { type PriceList, priceList } from "./price-list.ts";
import { type PricingRead, selectPricing } from "./pricing.sql.ts";

function toPriceList(read: PricingRead): PriceList {
  return priceList(read.discount_percent, new Map(read.overrides.map((o) => [o.package_id, o.amount_minor])));
}

/** The partner's prices now, read in the caller's transaction. */
export async function partnerPriceList(db: Executor, partner_id: string): Promise<PriceList> {
  return toPriceList(await selectPricing(db, partner_id));
}

/** The partner's prices, from the process's catalog cache (fresh as the catalog is). */
export async function cachedPartnerPriceList(
  pool: Pool,
  db: Kysely<Database>,
  partner_id: string,
): Promise<PriceList> {
  return cachedCatalogValue(pool, `pricing:${partner_id}`, readCatalogVersion, async () => {
    const read = await selectPricing(db, partner_id);
    return { version: read.version, response: toPriceList(read) };
  });
}
