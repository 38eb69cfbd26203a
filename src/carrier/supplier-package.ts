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
  /**
   * The net price exactly as the supplier wrote it ("4.2051"), when it has more decimals than the
   * currency: the markup applies to this, so the price is rounded up once (net_minor is itself
   * rounded up). Absent: net_minor is exact.
   */
  net_decimal?: string | undefined;
  /** The supplier's recommended retail price, when it gives one, in the same currency. */
  retail_minor: number | null;
  currency: string;
  /** Sold only onto an existing eSIM (Airalo's top-up packages). */
  top_up_only: boolean;
};

/** An entry of the supplier's listing that could not be read as a package, and why. */
export type DroppedEntry = { external_package_id: string; reason: string };

/**
 * A listing either read whole or failed: a partial catalogue must never retire the rest. `dropped`:
 * entries read but not understood (no price, no id): the sync reports them and, while there are
 * any, retires nothing without the operator's say-so (src/catalog/sync-supplier-catalog.ts).
 */
export type SupplierListing =
  | { ok: true; packages: SupplierPackage[]; dropped: DroppedEntry[] }
  | { ok: false; reason: string };

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

/** An exact non-negative decimal: `units` / 10^`scale`. */
export type Decimal = { units: bigint; scale: number };

/**
 * A supplier's decimal price (a JSON number such as 4.2 or a string "4.20"), exactly, digits read
 * from the text, never multiplied as floats. null: not a decimal of at most 10 + 12 digits.
 */
export function parseDecimal(value: unknown): Decimal | null {
  const text = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== "string") return null;
  const match = /^(\d{1,10})(?:\.(\d{1,12}))?$/.exec(text.trim());
  if (!match) return null;
  const fraction = match[2] ?? "";
  return { units: BigInt(match[1]! + fraction), scale: fraction.length };
}

/**
 * ceil(net x (100 + markup %) / 100) in the minor units of `currency`, the one rounding of a price
 * (we never resell below cost): net x (10000 + bp) x 10^digits / (10^scale x 10000), in BigInt.
 * null: not a positive safe integer.
 */
export function markedUpMinor(net: Decimal, markup_basis_points: number, currency: string): number | null {
  if (!Number.isInteger(markup_basis_points) || markup_basis_points < 0) return null;
  const numerator =
    net.units * BigInt(10_000 + markup_basis_points) * 10n ** BigInt(minorUnitDigits(currency));
  const denominator = 10n ** BigInt(net.scale) * 10_000n;
  const minor = (numerator + denominator - 1n) / denominator;
  return minor > 0n && minor <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(minor) : null;
}

/**
 * A supplier's decimal price in minor units of `currency`, rounded up when the supplier gives more
 * decimals than the currency has (we never resell below cost). null: not a positive price.
 */
export function decimalToMinor(value: unknown, currency: string): number | null {
  const net = parseDecimal(value);
  return net === null ? null : markedUpMinor(net, 0, currency);
}

/** The exact decimal text when it has more decimals than `currency` (see `net_decimal`), else undefined. */
export function finerThanMinor(value: unknown, currency: string): string | undefined {
  const net = parseDecimal(value);
  if (net === null || net.scale <= minorUnitDigits(currency)) return undefined;
  return `${net.units / 10n ** BigInt(net.scale)}.${String(net.units % 10n ** BigInt(net.scale)).padStart(net.scale, "0")}`;
}
