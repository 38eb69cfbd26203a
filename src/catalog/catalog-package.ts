// The catalog's own shapes: a package as the catalog writes it (validated, normalized), shared by
// the default seed and the import so both go through the same SQL.
import type { PackageFacts } from "./catalog-facts.ts";

export type Coverage = "country" | "regional" | "global";

export const COVERAGES: readonly Coverage[] = ["country", "regional", "global"];

/** Who sells a package (migration 0035); the operator's to see, never a partner's. */
export type PackageSupplier = "carrier" | "airalo" | "esimgo";

export const PACKAGE_SUPPLIERS: readonly PackageSupplier[] = ["carrier", "airalo", "esimgo"];

export type Destination = { destination_code: string; name: string };

/** One package ready to be written: every field checked, destination codes upper-case and unique. */
export type CatalogPackage = {
  package_id: string;
  external_package_id: string;
  name: string;
  /** Sorted, unique ISO 3166-1 alpha-2 codes; one for a country package. */
  destination_codes: string[];
  /** null: unlimited data. */
  data_mb: number | null;
  validity_days: number;
  wholesale_minor: number;
  retail_minor: number;
  coverage: Coverage;
  region: string | null;
  /** Absent: the carrier (the seed, a file without the column). */
  supplier?: PackageSupplier;
} & PackageFacts;

/** The whole catalog as one set: what the seed writes on a new database. */
export type CatalogSet = { destinations: Destination[]; packages: CatalogPackage[] };
