// Seeds the default catalog on a new database, once, however many processes start at the same time.
import { inTransaction, type Pool } from "../db/pool.ts";
import { catalogChanged } from "./catalog-cache.ts";
import {
  bumpCatalogVersion,
  catalogHasPackages,
  lockCatalogWriters,
  replacePackageDestinations,
  upsertDestinations,
  upsertPackages,
  writeBatches,
} from "./catalog-writes.sql.ts";
import { defaultCatalog } from "./default-catalog.ts";
import { recordCatalogChanges } from "./record-catalog-changes.ts";

export type SeedOutcome =
  | { seeded: false }
  | { seeded: true; destinations: number; packages: number; version: number };

/**
 * Writes the default catalog in one transaction if the database has no package yet; does nothing
 * otherwise, so an operator's imported catalog is never overwritten at a restart. Processes that
 * start together queue on the catalog writers' lock; the first seeds, the others find packages.
 */
export async function seedDefaultCatalogIfEmpty(pool: Pool, currency: string): Promise<SeedOutcome> {
  const outcome = await inTransaction(pool, async (client): Promise<SeedOutcome> => {
    await lockCatalogWriters(client);
    if (await catalogHasPackages(client)) return { seeded: false };
    const catalog = defaultCatalog();
    await upsertDestinations(client, catalog.destinations);
    for (const batch of writeBatches(catalog.packages)) {
      await upsertPackages(client, batch, currency);
      await replacePackageDestinations(client, batch);
    }
    const version = await bumpCatalogVersion(client);
    // The change feed read from its start rebuilds the catalog: the seed's packages are added.
    const added = catalog.packages.map((pkg) => pkg.package_id);
    await recordCatalogChanges(client, { added, updated: [], removed: [] });
    return {
      seeded: true,
      destinations: catalog.destinations.length,
      packages: catalog.packages.length,
      version,
    };
  });
  // This process need not wait for its own notification to stop serving the empty catalog.
  if (outcome.seeded) catalogChanged(pool, outcome.version);
  return outcome;
}
