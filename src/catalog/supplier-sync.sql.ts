// The statements only the supplier catalog sync runs (sync-supplier-catalog.ts); the package and
// destination writes it shares with the import are in catalog-writes.sql.ts. Each runs on the
// caller's client inside the caller's transaction, under lockCatalogWriters.

import type { Supplier } from "../carrier/supplier-package.ts";
import type { PoolClient } from "../db/pool.ts";

/** What the sync keeps beside a package's catalog fields (migration 0035). */
export type SupplierTerms = {
  package_id: string;
  supplier: Supplier;
  supplier_net_minor: number;
  supplier_currency: string;
  top_up_only: boolean;
};

/** Stored terms of these packages (any supplier's: a package_id of another is not the sync's to take). */
export async function storedSupplierTerms(
  client: PoolClient,
  package_ids: string[],
): Promise<Map<string, Omit<SupplierTerms, "supplier"> & { supplier: string }>> {
  const result = await client.query<Omit<SupplierTerms, "supplier"> & { supplier: string }>(
    `select package_id, supplier, supplier_net_minor, supplier_currency, top_up_only
     from packages where package_id = any($1::text[])`,
    [package_ids],
  );
  return new Map(result.rows.map((row) => [row.package_id, row]));
}

/** Writes the supplier's terms of packages the same transaction has just upserted. */
export async function setSupplierTerms(client: PoolClient, terms: SupplierTerms[]): Promise<void> {
  await client.query(
    `update packages p set supplier = t.supplier, supplier_net_minor = t.net,
            supplier_currency = t.currency, top_up_only = t.top_up_only
     from unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::boolean[])
       as t(package_id, supplier, net, currency, top_up_only)
     where p.package_id = t.package_id`,
    [
      terms.map((t) => t.package_id),
      terms.map((t) => t.supplier),
      terms.map((t) => t.supplier_net_minor),
      terms.map((t) => t.supplier_currency),
      terms.map((t) => t.top_up_only),
    ],
  );
}

/**
 * Retires the supplier's active packages not in `keep`: no longer offered, never deleted (carts,
 * orders and eSIMs reference them, and keep their terms). Other suppliers' packages are untouched.
 */
export async function retireSupplierPackagesNotIn(
  client: PoolClient,
  supplier: Supplier,
  keep: string[],
): Promise<Array<{ package_id: string; top_up_only: boolean }>> {
  const result = await client.query<{ package_id: string; top_up_only: boolean }>(
    `update packages set active = false, updated_at = now()
     where active and supplier = $1 and not (package_id = any($2::text[]))
     returning package_id, top_up_only`,
    [supplier, keep],
  );
  return result.rows.sort((a, b) => (a.package_id < b.package_id ? -1 : 1));
}

export type SyncRun = {
  supplier: Supplier;
  markup_basis_points: number;
  destination_codes: string[];
  outcome: string;
  added: number;
  changed: number;
  removed: number;
};

/** The last sync of a supplier, which the periodic repetition re-runs. */
export async function recordSyncRun(client: Pick<PoolClient, "query">, run: SyncRun): Promise<void> {
  await client.query(
    `insert into supplier_catalog_syncs as s
       (supplier, markup_basis_points, destination_codes, last_run_at, last_outcome, added, changed, removed)
     values ($1, $2, $3::text[], now(), $4, $5, $6, $7)
     on conflict (supplier) do update set
       markup_basis_points = excluded.markup_basis_points,
       destination_codes = excluded.destination_codes,
       -- Never backwards: a repetition's claim (claimSyncRun) may have set it to the job's clock.
       last_run_at = greatest(s.last_run_at, now()),
       last_outcome = excluded.last_outcome,
       added = excluded.added, changed = excluded.changed, removed = excluded.removed`,
    [
      run.supplier,
      run.markup_basis_points,
      run.destination_codes,
      run.outcome.slice(0, 1000),
      run.added,
      run.changed,
      run.removed,
    ],
  );
}

export type StoredSyncRun = SyncRun & { last_run_at: Date };

/**
 * Claims a due repetition: moves last_run_at to the job's now (`claimed_at`) only if it is still at or before `due_before`
 * (now less the period), so a job tick that overlaps a sync still running, or another process's
 * tick, does not start it twice.
 */
export async function claimSyncRun(
  client: Pick<PoolClient, "query">,
  supplier: Supplier,
  due_before: Date,
  claimed_at: Date,
): Promise<boolean> {
  const result = await client.query(
    "update supplier_catalog_syncs set last_run_at = $3 where supplier = $1 and last_run_at <= $2::timestamptz",
    [supplier, due_before, claimed_at],
  );
  return result.rowCount === 1;
}

export async function lastSyncRuns(client: Pick<PoolClient, "query">): Promise<StoredSyncRun[]> {
  const result = await client.query<StoredSyncRun & { last_outcome: string }>(
    `select supplier, markup_basis_points, destination_codes, last_run_at, last_outcome,
            added, changed, removed
     from supplier_catalog_syncs order by supplier`,
  );
  return result.rows.map((row) => ({ ...row, outcome: row.last_outcome }));
}

/** Active packages per supplier, the carrier's included: the operator's catalog page. */
export async function activePackagesBySupplier(
  client: Pick<PoolClient, "query">,
): Promise<Map<string, number>> {
  const result = await client.query<{ supplier: string; packages: number }>(
    "select supplier, count(*)::int as packages from packages where active group by supplier",
  );
  return new Map(result.rows.map((row) => [row.supplier, row.packages]));
}
