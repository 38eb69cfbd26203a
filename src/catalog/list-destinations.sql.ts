// The read behind GET /v1/esim/destinations: every destination with its packages' ids and list
// prices, as the destination's own packages endpoint would list them (list-destination-packages.sql.ts).
import type { Pool } from "../db/pool.ts";
import { MAX_PACKAGES_PER_DESTINATION } from "./list-destination-packages.sql.ts";

export type DestinationIndexRow = {
  destination_code: string;
  destination_name: string;
  /** In the packages endpoint's order, at most MAX_PACKAGES_PER_DESTINATION: the rows it returns. */
  package_ids: string[];
  /** Each package's list price (wholesale before a partner's pricing), as a decimal string (bigint). */
  list_minor: string[];
  currencies: string[];
};

export type DestinationIndex = {
  /** The catalog version, read in the same snapshot as the rows. */
  version: number;
  destinations: DestinationIndexRow[];
};

/**
 * Destinations with at least one active package, by code. The lateral subquery is the packages
 * endpoint's (same filter, order and limit), so `package_ids` counts what that endpoint returns.
 * One statement: the version and the rows come from one snapshot.
 */
export async function readDestinationIndex(pool: Pool): Promise<DestinationIndex> {
  const result = await pool.query<
    { version: number } & ({ [K in keyof DestinationIndexRow]: null } | DestinationIndexRow)
  >(
    `select v.version, x.destination_code, x.destination_name, x.package_ids, x.list_minor, x.currencies
     from catalog_version v
     left join lateral (
       select d.destination_code, d.name as destination_name,
              array_agg(p.package_id order by p.position) as package_ids,
              array_agg(p.wholesale_minor::text order by p.position) as list_minor,
              array_agg(p.currency order by p.position) as currencies
       from destinations d
       cross join lateral (
         select p.package_id, p.wholesale_minor, p.currency,
                row_number() over (order by case p.coverage when 'country' then 0 when 'regional' then 1 else 2 end,
                                            p.data_mb nulls last, p.validity_days, p.package_id) as position
         from package_destinations pd
         join packages p on p.package_id = pd.package_id
         -- A top-up-only package (a supplier's top-up product) is never sold as a new eSIM.
         where pd.destination_code = d.destination_code and p.active and not p.top_up_only
         order by position
         limit $1::integer
       ) p
       group by d.destination_code, d.name
     ) x on true
     order by x.destination_code`,
    [MAX_PACKAGES_PER_DESTINATION],
  );
  const first = result.rows[0];
  if (!first) throw new Error("catalog_version has no row; migration 0001 inserts it");
  const destinations = result.rows.filter(
    (row): row is { version: number } & DestinationIndexRow => row.destination_code !== null,
  );
  return { version: first.version, destinations };
}
