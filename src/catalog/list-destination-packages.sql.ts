// The reads of the discovery endpoint.
import type { Selectable } from "kysely";
import type { Pool } from "../db/pool.ts";
import type { Database } from "../db/schema.ts";
import type { FactColumns } from "./catalog-facts.ts";

/** More packages than any real destination offers; a runaway import must not make a 50 MB response. */
export const MAX_PACKAGES_PER_DESTINATION = 500;

export type DestinationPackageRow = Pick<
  Selectable<Database["packages"]>,
  | "package_id"
  | "external_package_id"
  | "name"
  | "data_mb"
  | "validity_days"
  | "wholesale_minor"
  | "retail_minor"
  | "currency"
  | "coverage"
  | "region"
> &
  FactColumns & { destination_codes: string[] };

export type DestinationPackagesRead = {
  /** The catalog version, read in the same snapshot as the rows. */
  version: number;
  /** null: no such destination. */
  destination_name: string | null;
  packages: DestinationPackageRow[];
};

export async function readCatalogVersion(pool: Pool): Promise<number> {
  const result = await pool.query<{ version: number }>("select version from catalog_version");
  const version = result.rows[0]?.version;
  if (version === undefined) throw new Error("catalog_version has no row; migration 0001 inserts it");
  return version;
}

type JoinedRow = { version: number; destination_name: string | null } & (
  | DestinationPackageRow
  | { [K in keyof DestinationPackageRow]: null }
);

/**
 * The active packages covering one destination, in display order: country packages first, then
 * regional, then global; within each by data size (unlimited last), validity and id. One statement,
 * so the version, the destination and the packages come from one snapshot.
 */
export async function readDestinationPackages(
  pool: Pool,
  destination_code: string,
): Promise<DestinationPackagesRead> {
  const result = await pool.query<JoinedRow>(
    `select v.version, d.name as destination_name,
            p.package_id, p.external_package_id, p.name, p.data_mb, p.validity_days,
            p.wholesale_minor, p.retail_minor, p.currency, p.coverage, p.region,
            p.networks, p.fair_use_daily_data_mb, p.fair_use_throttled_kbps, p.kyc_required,
            array(select all_pd.destination_code from package_destinations all_pd
                  where all_pd.package_id = p.package_id
                  order by all_pd.destination_code) as destination_codes
     from catalog_version v
     left join destinations d on d.destination_code = $1::text
     left join lateral (
       select p.*, case p.coverage when 'country' then 0 when 'regional' then 1 else 2 end as coverage_rank
       from package_destinations pd
       join packages p on p.package_id = pd.package_id
       -- A top-up-only package (a supplier's top-up product) is never sold as a new eSIM.
       where pd.destination_code = d.destination_code and p.active and not p.top_up_only
       order by coverage_rank, p.data_mb nulls last, p.validity_days, p.package_id
       limit $2::integer
     ) p on true
     order by p.coverage_rank, p.data_mb nulls last, p.validity_days, p.package_id`,
    [destination_code, MAX_PACKAGES_PER_DESTINATION],
  );
  const first = result.rows[0];
  if (!first) throw new Error("catalog_version has no row; migration 0001 inserts it");
  const packages = result.rows.filter(
    (row): row is JoinedRow & DestinationPackageRow => row.package_id !== null,
  );
  return { version: first.version, destination_name: first.destination_name, packages };
}
