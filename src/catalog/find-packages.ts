// What other domains read of the catalog, package by package: carts price a package, top-ups
// offer the packages that cover an eSIM's, the confirmation email names the package bought.
// A retired package (active false) is kept, so a name is found for any package ever sold.
import type { Executor } from "../db/executor.ts";
import {
  type CartablePackage,
  type CoveringPackage,
  selectActivePackage,
  selectCoveringMeteredPackages,
  selectPackageName,
} from "./packages.sql.ts";

export type { CartablePackage, CoveringPackage };

/** The package if it is on sale now, with its terms and wholesale price; null otherwise. */
export async function findActivePackage(db: Executor, package_id: string): Promise<CartablePackage | null> {
  return selectActivePackage(db, package_id);
}

/**
 * Up to `limit` active packages with a data allowance that cover every destination of
 * `original_package_id`: country packages, then regional, then global, each by data size,
 * validity and package_id.
 */
export async function coveringMeteredPackages(
  db: Executor,
  original_package_id: string,
  limit: number,
): Promise<CoveringPackage[]> {
  return selectCoveringMeteredPackages(db, original_package_id, limit);
}

export async function packageName(db: Executor, package_id: string): Promise<string | null> {
  return selectPackageName(db, package_id);
}
