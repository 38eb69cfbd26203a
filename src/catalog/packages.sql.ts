// SQL of single packages, as other domains read them: a package to put in a cart, the packages
// that cover another's destinations (top-ups), a package's name (the confirmation email).
// Private to src/catalog/; find-packages.ts is how the rest of the service calls it.
import { type Selectable, sql } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database, PackageSupplier } from "../db/schema.ts";

type PackageRow = Selectable<Database["packages"]>;

export type CartablePackage = Pick<
  PackageRow,
  | "package_id"
  | "external_package_id"
  | "data_mb"
  | "validity_days"
  | "wholesale_minor"
  | "currency"
  | "supplier"
>;

/**
 * What one partner's price list says of one package (pricing.sql.ts has the whole list): its
 * discount (0 without pricing) and its override of this package, null when it has none. Read in
 * the package's own statement: one round trip and one snapshot for a package and its price.
 */
export type PartnerPriceTerms = { discount_percent: number; override_minor: number | null };

/** A package and its partner's price terms, read together. */
export type WithPriceTerms<T> = { pkg: T; terms: PartnerPriceTerms };

/** The two PartnerPriceTerms columns, over `packages p` joined with priceTermsJoin. */
const PRICE_TERMS = sql.raw(
  "coalesce(pp.discount_percent, 0) as discount_percent, ov.amount_minor as override_minor",
);

/**
 * Package `p` can top up an eSIM of its supplier whose original package is `original_package_id`:
 * a supplier that sells top-up packages of its own (Airalo's `type: topup`) accepts only those onto
 * an eSIM, and only its own operator's, which we approximate by the same coverage (p covers the
 * original's destinations, the caller checks, and no more of them): a Europe top-up is not offered
 * for a UK eSIM. The others (the carrier, eSIM Go) take any of their packages.
 */
function topsUp(original_package_id: string) {
  return sql`(case when p.top_up_only then
      (select count(*) from package_destinations x where x.package_id = p.package_id)
        = (select count(*) from package_destinations o where o.package_id = ${original_package_id})
    else not exists (
      select 1 from packages t where t.supplier = p.supplier and t.active and t.top_up_only) end)`;
}

/** The partner's pricing row and its override of package `p`, each at most one row (primary keys). */
function priceTermsJoin(partner_id: string) {
  return sql`left join partner_pricing pp on pp.partner_id = ${partner_id}
    left join partner_price_overrides ov on ov.partner_id = ${partner_id} and ov.package_id = p.package_id`;
}

function splitTerms<T>(row: (T & PartnerPriceTerms) | undefined): WithPriceTerms<T> | null {
  if (row === undefined) return null;
  const { discount_percent, override_minor, ...pkg } = row;
  return { pkg: pkg as T, terms: { discount_percent, override_minor } };
}

export async function selectActivePackage(
  db: Executor,
  partner_id: string,
  package_id: string,
): Promise<WithPriceTerms<CartablePackage> | null> {
  const result = await sql<CartablePackage & PartnerPriceTerms>`
    select p.package_id, p.external_package_id, p.data_mb, p.validity_days, p.wholesale_minor, p.currency,
           p.supplier, ${PRICE_TERMS}
    from packages p ${priceTermsJoin(partner_id)}
    where p.package_id = ${package_id} and p.active and not p.top_up_only`.execute(db);
  return splitTerms(result.rows[0]);
}

export type CoveringPackage = Pick<
  PackageRow,
  | "package_id"
  | "external_package_id"
  | "name"
  | "validity_days"
  | "wholesale_minor"
  | "currency"
  | "coverage"
  | "region"
  | "supplier"
> & { data_mb: number };

/**
 * Active metered packages of `supplier` whose destinations include every destination of
 * `original_package_id` (a supplier tops up only its own eSIMs; top-up-only packages included).
 * Relational division: join each candidate's destinations to the original's and keep the
 * candidates that matched all of them. Country packages, then regional, then global; within each
 * by data size, validity and package_id.
 */
export async function selectCoveringMeteredPackages(
  db: Executor,
  original_package_id: string,
  supplier: PackageSupplier,
  limit: number,
): Promise<CoveringPackage[]> {
  const result = await sql<CoveringPackage>`
    with original as (
      select destination_code from package_destinations where package_id = ${original_package_id}
    )
    select p.package_id, p.external_package_id, p.name, p.data_mb, p.validity_days,
           p.wholesale_minor, p.currency, p.coverage, p.region, p.supplier
    from packages p
    join package_destinations pd on pd.package_id = p.package_id
    join original o on o.destination_code = pd.destination_code
    where p.active and p.data_mb is not null and p.supplier = ${supplier} and ${topsUp(original_package_id)}
    group by p.package_id
    having count(*) = (select count(*) from original)
    order by case p.coverage when 'country' then 0 when 'regional' then 1 else 2 end,
             p.data_mb, p.validity_days, p.package_id
    limit ${limit}`.execute(db);
  return result.rows;
}

/**
 * One package, if it is active, metered, has this external id and covers every destination of
 * `original_package_id`: the same rules as selectCoveringMeteredPackages for one candidate, by its
 * primary key instead of a division over the whole catalog (a top-up submit checks one choice),
 * with the partner's price terms for it. Its supplier is returned, not compared: the caller
 * refuses another supplier's package in its own words.
 */
export async function selectCoveringMeteredPackage(
  db: Executor,
  partner_id: string,
  original_package_id: string,
  choice: { package_id: string; external_package_id: string },
): Promise<WithPriceTerms<CoveringPackage> | null> {
  const result = await sql<CoveringPackage & PartnerPriceTerms>`
    select p.package_id, p.external_package_id, p.name, p.data_mb, p.validity_days,
           p.wholesale_minor, p.currency, p.coverage, p.region, p.supplier,
           ${PRICE_TERMS}
    from packages p ${priceTermsJoin(partner_id)}
    where p.package_id = ${choice.package_id} and p.external_package_id = ${choice.external_package_id}
      and p.active and p.data_mb is not null and ${topsUp(original_package_id)}
      and exists (select 1 from package_destinations o where o.package_id = ${original_package_id})
      and not exists (
        select 1 from package_destinations o
        where o.package_id = ${original_package_id}
          and not exists (
            select 1 from package_destinations pd
            where pd.package_id = p.package_id and pd.destination_code = o.destination_code))`.execute(db);
  return splitTerms(result.rows[0]);
}

export async function selectPackageName(db: Executor, package_id: string): Promise<string | null> {
  const result = await sql<{
    name: string;
  }>`select name from packages where package_id = ${package_id}`.execute(db);
  return result.rows[0]?.name ?? null;
}

/** The names of the packages named (an unknown id is left out). */
export async function selectPackageNames(
  db: Executor,
  package_ids: string[],
): Promise<Array<{ package_id: string; name: string }>> {
  if (package_ids.length === 0) return [];
  const result = await sql<{ package_id: string; name: string }>`
    select package_id, name from packages where package_id = any(${package_ids}::text[])`.execute(db);
  return result.rows;
}
