// Every statement that changes the catalog, shared by the seed and the import. Each is set-based
// (arrays bound once and expanded with unnest) so a catalog of thousands of rows is a handful of
// round trips, and each runs on the caller's client inside the caller's transaction.
import type { PoolClient } from "../db/pool.ts";
import { type FactColumns, factsOfColumns } from "./catalog-facts.ts";
import type { CatalogPackage, Destination } from "./catalog-package.ts";

/**
 * Advisory lock key of catalog writers: "catalog" in ASCII, 0x636174616c6f67, written in decimal
 * and bound as a parameter because PostgreSQL accepts hexadecimal integer literals only from 16
 * (15 stops with "trailing junk after numeric literal"). Held for the transaction, so a seed and an
 * import, or two processes seeding a new database at once, run one after the other.
 */
const CATALOG_LOCK_KEY = "27973175172951911";

/** Packages and destination pairs per statement: keeps each statement's parameters a few MB. */
const MAX_PACKAGES_PER_BATCH = 1_000;
const MAX_PAIRS_PER_BATCH = 20_000;

export async function lockCatalogWriters(client: PoolClient): Promise<void> {
  await client.query("select pg_advisory_xact_lock($1::bigint)", [CATALOG_LOCK_KEY]);
}

export async function catalogHasPackages(client: PoolClient): Promise<boolean> {
  const result = await client.query<{ has: boolean }>("select exists (select 1 from packages) as has");
  return result.rows[0]!.has;
}

export async function knownDestinationCodes(client: PoolClient): Promise<Set<string>> {
  const result = await client.query<{ destination_code: string }>(
    "select destination_code from destinations",
  );
  return new Set(result.rows.map((row) => row.destination_code));
}

/** The supplier of each of these packages that exists: a file does not move a package to another. */
export async function packageSuppliers(
  client: PoolClient,
  package_ids: string[],
): Promise<Map<string, string>> {
  const result = await client.query<{ package_id: string; supplier: string }>(
    "select package_id, supplier from packages where package_id = any($1::text[])",
    [package_ids],
  );
  return new Map(result.rows.map((row) => [row.package_id, row.supplier]));
}

/** The package holding each of these external_package_ids (the column is unique). */
export async function externalPackageOwners(
  client: PoolClient,
  external_package_ids: string[],
): Promise<Map<string, string>> {
  const result = await client.query<{ external_package_id: string; package_id: string }>(
    `select external_package_id, package_id from packages
     where external_package_id = any($1::text[])`,
    [external_package_ids],
  );
  return new Map(result.rows.map((row) => [row.external_package_id, row.package_id]));
}

/** A package as stored, to compare with an imported row. */
export type StoredPackage = Omit<CatalogPackage, "package_id" | "supplier"> & {
  currency: string;
  active: boolean;
  supplier: NonNullable<CatalogPackage["supplier"]>;
};

/** Packages read per statement by storedPackages: each read stays well inside the statement timeout. */
const MAX_PACKAGES_PER_READ = 10_000;

/** The stored state of these packages, destinations included, keyed by package_id. */
export async function storedPackages(
  client: PoolClient,
  package_ids: string[],
): Promise<Map<string, StoredPackage>> {
  const stored = new Map<string, StoredPackage>();
  for (let start = 0; start < package_ids.length; start += MAX_PACKAGES_PER_READ) {
    type Row = Omit<StoredPackage, keyof ReturnType<typeof factsOfColumns>> &
      FactColumns & { package_id: string };
    const result = await client.query<Row>(
      `select p.package_id, p.external_package_id, p.name, p.data_mb, p.validity_days,
              p.wholesale_minor, p.retail_minor, p.currency, p.coverage, p.region, p.active, p.supplier,
              p.networks, p.fair_use_daily_data_mb, p.fair_use_throttled_kbps, p.kyc_required,
              array(select pd.destination_code from package_destinations pd
                    where pd.package_id = p.package_id
                    order by pd.destination_code) as destination_codes
       from packages p
       where p.package_id = any($1::text[])`,
      [package_ids.slice(start, start + MAX_PACKAGES_PER_READ)],
    );
    for (const {
      package_id,
      networks,
      fair_use_daily_data_mb,
      fair_use_throttled_kbps,
      kyc_required,
      ...row
    } of result.rows) {
      const facts = factsOfColumns({
        networks,
        fair_use_daily_data_mb,
        fair_use_throttled_kbps,
        kyc_required,
      });
      stored.set(package_id, { ...row, ...facts });
    }
  }
  return stored;
}

/** Inserts new destinations and renames changed ones; returns how many rows it wrote. */
export async function upsertDestinations(client: PoolClient, destinations: Destination[]): Promise<number> {
  const result = await client.query(
    `insert into destinations (destination_code, name)
     select * from unnest($1::text[], $2::text[])
     on conflict (destination_code) do update set name = excluded.name
     where destinations.name is distinct from excluded.name`,
    [destinations.map((d) => d.destination_code), destinations.map((d) => d.name)],
  );
  return result.rowCount ?? 0;
}

/** Splits packages into batches bounded both in packages and in destination pairs. */
export function writeBatches(packages: CatalogPackage[]): CatalogPackage[][] {
  const batches: CatalogPackage[][] = [];
  let batch: CatalogPackage[] = [];
  let pairs = 0;
  for (const pkg of packages) {
    const full =
      batch.length >= MAX_PACKAGES_PER_BATCH || pairs + pkg.destination_codes.length > MAX_PAIRS_PER_BATCH;
    if (batch.length > 0 && full) {
      batches.push(batch);
      batch = [];
      pairs = 0;
    }
    batch.push(pkg);
    pairs += pkg.destination_codes.length;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/**
 * Inserts new packages and replaces every field of existing ones, reactivating retired ones.
 * Callers pass only new or changed packages: ON CONFLICT DO UPDATE locks every row it meets until
 * commit, and a cart referencing a locked package would wait on it for its foreign key check.
 */
export async function upsertPackages(
  client: PoolClient,
  packages: CatalogPackage[],
  currency: string,
): Promise<void> {
  await client.query(
    `insert into packages as p (
       package_id, external_package_id, name, data_mb, validity_days,
       wholesale_minor, retail_minor, currency, coverage, region, supplier, active, updated_at,
       networks, fair_use_daily_data_mb, fair_use_throttled_kbps, kyc_required)
     select t.package_id, t.external_package_id, t.name, t.data_mb, t.validity_days,
            t.wholesale_minor, t.retail_minor, $10::text, t.coverage, t.region, t.supplier, true, now(),
            t.networks, t.fair_use_daily_data_mb, t.fair_use_throttled_kbps, t.kyc_required
     from unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::integer[],
                 $6::bigint[], $7::bigint[], $8::text[], $9::text[], $11::text[],
                 $12::jsonb[], $13::integer[], $14::integer[], $15::boolean[])
       as t(package_id, external_package_id, name, data_mb, validity_days,
            wholesale_minor, retail_minor, coverage, region, supplier,
            networks, fair_use_daily_data_mb, fair_use_throttled_kbps, kyc_required)
     on conflict (package_id) do update set
       external_package_id = excluded.external_package_id,
       name = excluded.name,
       data_mb = excluded.data_mb,
       validity_days = excluded.validity_days,
       wholesale_minor = excluded.wholesale_minor,
       retail_minor = excluded.retail_minor,
       currency = excluded.currency,
       coverage = excluded.coverage,
       region = excluded.region,
       -- The supplier's net price is its own: kept while the supplier stays, dropped when it changes.
       supplier_net_minor = case when p.supplier = excluded.supplier then p.supplier_net_minor end,
       supplier_currency = case when p.supplier = excluded.supplier then p.supplier_currency end,
       top_up_only = p.top_up_only and p.supplier = excluded.supplier,
       supplier = excluded.supplier,
       networks = excluded.networks,
       fair_use_daily_data_mb = excluded.fair_use_daily_data_mb,
       fair_use_throttled_kbps = excluded.fair_use_throttled_kbps,
       kyc_required = excluded.kyc_required,
       active = true,
       updated_at = now()`,
    [
      packages.map((p) => p.package_id),
      packages.map((p) => p.external_package_id),
      packages.map((p) => p.name),
      packages.map((p) => p.data_mb),
      packages.map((p) => p.validity_days),
      packages.map((p) => p.wholesale_minor),
      packages.map((p) => p.retail_minor),
      packages.map((p) => p.coverage),
      packages.map((p) => p.region),
      currency,
      packages.map((p) => p.supplier ?? "carrier"),
      packages.map((p) => JSON.stringify(p.networks)),
      packages.map((p) => p.fair_use?.daily_data_mb ?? null),
      packages.map((p) => p.fair_use?.throttled_kbps ?? null),
      packages.map((p) => p.kyc_required),
    ],
  );
}

/**
 * Makes each package's destinations exactly its `destination_codes`: removes the pairs no longer
 * listed and adds the new ones; pairs that stay are left alone. A data-modifying CTE runs
 * whether or not the statement reads it, so the delete and the insert are one round trip.
 */
export async function replacePackageDestinations(
  client: PoolClient,
  packages: CatalogPackage[],
): Promise<void> {
  const pairs = packages.flatMap((p) => p.destination_codes.map((code) => [p.package_id, code] as const));
  await client.query(
    `with wanted as (
       select * from unnest($1::text[], $2::text[]) as w(package_id, destination_code)
     ), removed as (
       delete from package_destinations pd
       where pd.package_id = any($3::text[])
         and not exists (select 1 from wanted w
                         where w.package_id = pd.package_id and w.destination_code = pd.destination_code)
     )
     insert into package_destinations (package_id, destination_code)
     select package_id, destination_code from wanted
     on conflict do nothing`,
    [pairs.map((pair) => pair[0]), pairs.map((pair) => pair[1]), packages.map((p) => p.package_id)],
  );
}

/**
 * Retires every active package of the carrier not in `keep`. Never deletes: carts, orders and eSIMs
 * reference packages by foreign key, and a retired package simply stops being offered. The
 * suppliers' packages (Airalo, eSIM Go) are their syncs' to retire (supplier-sync.sql.ts).
 */
export async function retirePackagesNotIn(client: PoolClient, keep: string[]): Promise<string[]> {
  const result = await client.query<{ package_id: string }>(
    `update packages set active = false, updated_at = now()
     where active and supplier = 'carrier' and not (package_id = any($1::text[]))
     returning package_id`,
    [keep],
  );
  return result.rows.map((row) => row.package_id);
}

/**
 * Bumps the catalog version and announces it on channel `catalog_changed`. The notification is
 * transactional: listeners hear it only once the new catalog is committed and visible.
 */
export async function bumpCatalogVersion(client: PoolClient): Promise<number> {
  const result = await client.query<{ version: number }>(
    `with bumped as (update catalog_version set version = version + 1 returning version)
     select version, pg_notify('catalog_changed', version::text) from bumped`,
  );
  const version = result.rows[0]?.version;
  if (version === undefined) throw new Error("catalog_version has no row; migration 0001 inserts it");
  return version;
}
