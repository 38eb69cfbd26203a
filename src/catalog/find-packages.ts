// What other domains read of the catalog, package by package: carts price a package, top-ups
// offer the packages that cover an eSIM's, the confirmation email names the package bought.
// A retired package (active false) is kept, so a name is found for any package ever sold.
import type { Executor } from "../db/executor.ts";
import type { PackageSupplier } from "../db/schema.ts";
import {
  type CartablePackage,
  type CoveringPackage,
  selectActivePackage,
  selectCoveringMeteredPackage,
  selectCoveringMeteredPackages,
  selectPackageName,
  selectPackageNames,
  type WithPriceTerms,
} from "./packages.sql.ts";
import { partnerPriceList } from "./partner-prices.ts";
import { partnerPrice, priceOf } from "./price-list.ts";

export type { CartablePackage, CoveringPackage };

/** A package's price as one partner pays it: `wholesale_minor` is its price list's, `list_minor` the catalog's. */
export type Priced<T extends { package_id: string; wholesale_minor: number }> = T & { list_minor: number };

/**
 * The package if it is on sale now, with its terms and the partner's wholesale price (its price
 * terms read with it, in one statement of the caller's transaction); null otherwise.
 */
export async function findActivePackage(
  db: Executor,
  partner_id: string,
  package_id: string,
): Promise<Priced<CartablePackage> | null> {
  const row = await selectActivePackage(db, partner_id, package_id);
  return row === null ? null : pricedAlone(row);
}

/** A package read with its partner's price terms, priced as the partner's whole price list would. */
function pricedAlone<T extends { package_id: string; wholesale_minor: number }>({
  pkg,
  terms,
}: WithPriceTerms<T>): Priced<T> {
  const wholesale_minor = partnerPrice(terms.discount_percent, terms.override_minor, pkg.wholesale_minor);
  return { ...pkg, wholesale_minor, list_minor: pkg.wholesale_minor };
}

/**
 * Up to `limit` active packages of `supplier`, priced for the partner, with a data allowance that
 * cover every destination of `original_package_id`: country packages, then regional, then global,
 * each by data size, validity and package_id.
 */
export async function coveringMeteredPackages(
  db: Executor,
  partner_id: string,
  original_package_id: string,
  supplier: PackageSupplier,
  limit: number,
): Promise<Array<Priced<CoveringPackage>>> {
  const rows = await selectCoveringMeteredPackages(db, original_package_id, supplier, limit);
  if (rows.length === 0) return [];
  const prices = await partnerPriceList(db, partner_id);
  return rows.map((row) => ({
    ...row,
    wholesale_minor: priceOf(prices, row.package_id, row.wholesale_minor),
    list_minor: row.wholesale_minor,
  }));
}

/**
 * The chosen package priced for the partner, if it is one coveringMeteredPackages would list for
 * `original_package_id` (same rules, checked for this one package); null otherwise.
 */
export async function coveringMeteredPackage(
  db: Executor,
  partner_id: string,
  original_package_id: string,
  choice: { package_id: string; external_package_id: string },
): Promise<Priced<CoveringPackage> | null> {
  const row = await selectCoveringMeteredPackage(db, partner_id, original_package_id, choice);
  return row === null ? null : pricedAlone(row);
}

export async function packageName(db: Executor, package_id: string): Promise<string | null> {
  return selectPackageName(db, package_id);
}

/** Package id -> name, for the ids given (at most a batch of emails' worth). */
export async function packageNames(db: Executor, package_ids: string[]): Promise<Map<string, string>> {
  const rows = await selectPackageNames(db, [...new Set(package_ids)]);
  return new Map(rows.map((row) => [row.package_id, row.name]));
}
