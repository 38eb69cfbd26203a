// SQL of partner pricing (migration 0006: partner_pricing, partner_price_overrides). Private to
// src/catalog/.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

export type PricingRead = {
  /** catalog_version in the same snapshot: the discovery cache keys on it. */
  version: number;
  discount_percent: number;
  overrides: Array<{ package_id: string; amount_minor: number }>;
};

/** The partner's pricing (a 0 discount and no overrides when it has none), in one statement. */
export async function selectPricing(db: Executor, partner_id: string): Promise<PricingRead> {
  const result = await sql<PricingRead>`
    select v.version, coalesce(pp.discount_percent, 0) as discount_percent,
           coalesce((select json_agg(json_build_object('package_id', o.package_id, 'amount_minor', o.amount_minor)
                                     order by o.package_id)
                     from partner_price_overrides o where o.partner_id = ${partner_id}), '[]'::json) as overrides
    from catalog_version v
    left join partner_pricing pp on pp.partner_id = ${partner_id}`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error("catalog_version has no row; migration 0001 inserts it");
  return row;
}

/** Which of these package ids exist (active or retired). */
export async function existingPackages(db: Executor, package_ids: string[]): Promise<Set<string>> {
  if (package_ids.length === 0) return new Set();
  const result = await sql<{ package_id: string }>`
    select package_id from packages where package_id = any(${package_ids}::text[])`.execute(db);
  return new Set(result.rows.map((row) => row.package_id));
}

/** Replaces the partner's pricing and bumps the catalog version (notifying catalog_changed). */
export async function replacePricing(
  db: Executor,
  partner_id: string,
  discount_percent: number,
  overrides: Array<{ package_id: string; amount_minor: number }>,
): Promise<void> {
  await sql`
    insert into partner_pricing (partner_id, discount_percent) values (${partner_id}, ${discount_percent})
    on conflict (partner_id) do update set discount_percent = excluded.discount_percent, updated_at = now()`.execute(
    db,
  );
  await sql`delete from partner_price_overrides where partner_id = ${partner_id}`.execute(db);
  if (overrides.length > 0) {
    await sql`
      insert into partner_price_overrides (partner_id, package_id, amount_minor)
      select ${partner_id}, o.package_id, o.amount_minor
      from unnest(${overrides.map((o) => o.package_id)}::text[], ${overrides.map((o) => o.amount_minor)}::bigint[])
        as o (package_id, amount_minor)`.execute(db);
  }
  await sql`
    with bumped as (update catalog_version set version = version + 1 returning version)
    select pg_notify('catalog_changed', version::text) from bumped`.execute(db);
}
