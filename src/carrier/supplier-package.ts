// A package as a wholesale supplier lists it, mapped to our catalog's terms by the supplier's
// adapter (src/carrier/airalo/list-packages.ts, src/carrier/esimgo/list-catalogue.ts) and priced by
// the sync (src/catalog/sync-supplier-catalog.ts). Net prices are integers in the currency's minor units.
import { createHash } from "node:crypto";
import { minorUnitDigits } from "../lib/major-units.ts";

/** The catalog's coverage values (src/catalog/catalog-package.ts), written here: the carrier folder imports no domain. */
type Coverage = "country" | "regional" | "global";

export const SUPPLIERS = ["airalo", "esimgo"] as const;
export type Supplier = (typeof SUPPLIERS)[number];

export type SupplierPackage = {
  /** The supplier's id, unchanged: our external_package_id. */
  external_package_id: string;
  name: string;
  /** ISO 3166-1 alpha-2, upper case, unique (not yet checked against our destinations). */
  destination_codes: string[];
  coverage: Coverage;
  region: string | null;
  /** null: unlimited. */
  data_mb: number | null;
  validity_days: number;
  net_minor: number;
  /** The supplier's recommended retail price, when it gives one, in the same currency. */
  retail_minor: number | null;
  currency: string;
  /** Sold only onto an existing eSIM (Airalo's top-up packages). */
  top_up_only: boolean;
};

/** A listing either read whole or failed: a partial catalogue must never retire the rest. */
export type SupplierListing = { ok: true; packages: SupplierPackage[] } | { ok: false; reason: string };

const PACKAGE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Our package_id for a supplier's id: `<supplier>-<id>` when that is a valid package_id (1-64
 * letters, digits, '.', '_', '-'), else a readable prefix and a hash of the id, so the same
 * supplier id always gives the same package_id and two ids never share one.
 */
export function supplierPackageId(supplier: Supplier, external_id: string): string {
  const plain = `${supplier}-${external_id}`;
  if (PACKAGE_ID.test(plain)) return plain;
  const hash = createHash("sha256").update(external_id).digest("hex").slice(0, 12);
  const readable = external_id.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 40);
  return `${supplier}-${readable}-${hash}`.replace(/-{2,}/g, "-");
}

/**
 * A supplier's decimal price (a JSON number such as 4.2 or a string "4.20") in minor units of
 * `currency`, rounded up when the supplier gives more decimals than the currency has (we never
 * resell below cost). Decimal digits are read from the text, never multiplied as floats. null:
 * not a positive price.
 */
export function decimalToMinor(value: unknown, currency: string): number | null {
  const text = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== "string") return null;
  const match = /^(\d{1,10})(?:\.(\d{1,12}))?$/.exec(text.trim());
  if (!match) return null;
  const digits = minorUnitDigits(currency);
  const fraction = match[2] ?? "";
  const kept = fraction.slice(0, digits).padEnd(digits, "0");
  const dropped = fraction.slice(digits);
  let minor = Number(match[1]) * 10 ** digits + Number(kept === "" ? "0" : kept);
  if (/[1-9]/.test(dropped)) minor += 1;
  return minor > 0 && Number.isSafeInteger(minor) ? minor : null;
}
