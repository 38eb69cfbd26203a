// One row of a catalog import, as an operator writes it, and its validation. A bad row is a value
// (a reason), never a crash: the import reports it and goes on with the others.
import { checkFairUse, checkKycRequired, checkNetworks } from "./catalog-facts.ts";
import {
  type CatalogPackage,
  COVERAGES,
  type Coverage,
  PACKAGE_SUPPLIERS,
  type PackageSupplier,
} from "./catalog-package.ts";

/**
 * A row of a catalog file: the CSV columns, or the fields of one object of a JSON array.
 * Numbers may come as strings (CSV always does).
 */
export type CatalogImportRow = {
  package_id: string;
  external_package_id: string;
  name: string;
  /** ISO 3166-1 alpha-2 codes separated by spaces or `|` (CSV), or an array of codes (JSON). */
  destination_codes: string | string[];
  /** Megabytes; empty or null: unlimited. */
  data_mb: number | string | null;
  validity_days: number | string;
  wholesale_minor: number | string;
  retail_minor: number | string;
  /** country, regional or global; empty: country for one destination, regional for several. */
  coverage?: string | null;
  /** Free text such as "Europe"; empty: none. */
  region?: string | null;
  /** carrier, airalo or esimgo; empty: carrier. Operator-side only: partners never see it. */
  supplier?: string | null;
  /** `CC:name:4G/5G; ...` (CSV) or [{country_code, name, technologies}] (JSON); empty: not stated. */
  networks?: string | { country_code: string; name: string; technologies: string[] | string }[] | null;
  /** JSON: {daily_data_mb, throttled_kbps} on an unlimited package; CSV: the two columns below. */
  fair_use?: { daily_data_mb: number | string; throttled_kbps: number | string } | null;
  fair_use_daily_data_mb?: number | string | null;
  fair_use_throttled_kbps?: number | string | null;
  /** true/false (yes/no, 1/0); empty: false. */
  kyc_required?: boolean | string | null;
};

export const CATALOG_COLUMNS = [
  "package_id",
  "external_package_id",
  "name",
  "destination_codes",
  "data_mb",
  "validity_days",
  "wholesale_minor",
  "retail_minor",
  "coverage",
  "region",
  "supplier",
  "networks",
  "fair_use_daily_data_mb",
  "fair_use_throttled_kbps",
  "kyc_required",
] as const;
export const OPTIONAL_CATALOG_COLUMNS: readonly string[] = [
  "coverage",
  "region",
  "supplier",
  "networks",
  "fair_use_daily_data_mb",
  "fair_use_throttled_kbps",
  "kyc_required",
];

// Limits, each matching or tightening a constraint of migration 0001.
const PACKAGE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const EXTERNAL_PACKAGE_ID = /^[\x21-\x7e]{1,128}$/;
const MAX_NAME_CHARS = 200;
const MAX_REGION_CHARS = 64;
/** More than the 250 ISO codes: a package cannot cover more destinations than exist. */
const MAX_DESTINATIONS_PER_PACKAGE = 300;
const MAX_DATA_MB = 10_000_000;
const MAX_VALIDITY_DAYS = 3650;
/** 10 million in major units: far above any eSIM price, far below Number.MAX_SAFE_INTEGER. */
const MAX_PRICE_MINOR = 1_000_000_000;
const CONTROL_CHARACTERS = /\p{Cc}/u;

export type RowValidation =
  | { ok: true; pkg: CatalogPackage }
  | { ok: false; reason: string; package_id: string | null };

type Problems = string[];

function text(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value !== "string") return null;
  const trimmed = value.trim();
  return trimmed === "" ? null : trimmed;
}

function identifier(
  value: unknown,
  field: string,
  pattern: RegExp,
  rule: string,
  problems: Problems,
): string {
  const raw = text(value);
  if (raw === null) problems.push(`${field} is missing`);
  else if (!pattern.test(raw)) problems.push(`${field} ${rule}`);
  return raw ?? "";
}

function label(value: unknown, field: string, max_chars: number, problems: Problems): string | null {
  const raw = text(value);
  if (raw === null) return null;
  if (raw.length > max_chars) problems.push(`${field} is longer than ${max_chars} characters`);
  else if (CONTROL_CHARACTERS.test(raw)) problems.push(`${field} contains control characters`);
  return raw;
}

function wholeNumber(value: unknown, field: string, min: number, max: number, problems: Problems): number {
  const raw = text(value);
  const parsed = raw !== null && /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (raw === null) problems.push(`${field} is missing`);
  else if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
    problems.push(`${field} must be a whole number from ${min} to ${max}, got "${raw.slice(0, 20)}"`);
  }
  return parsed;
}

function dataMb(value: unknown, problems: Problems): number | null {
  if (text(value) === null) return null;
  return wholeNumber(value, "data_mb", 1, MAX_DATA_MB, problems);
}

function destinationCodes(value: unknown, known: ReadonlySet<string>, problems: Problems): string[] {
  const parts = Array.isArray(value) ? value : typeof value === "string" ? value.split(/[\s|]+/) : [];
  const raw = parts.filter((part) => part !== "").slice(0, MAX_DESTINATIONS_PER_PACKAGE + 1);
  if (raw.length === 0) problems.push("destination_codes is missing");
  if (raw.length > MAX_DESTINATIONS_PER_PACKAGE) {
    problems.push(`destination_codes lists more than ${MAX_DESTINATIONS_PER_PACKAGE} codes`);
  }
  const malformed = raw.filter((code) => typeof code !== "string" || !/^[A-Za-z]{2}$/.test(code));
  if (malformed.length > 0) {
    problems.push(`destination_codes: not two-letter codes: ${malformed.slice(0, 5).map(String).join(", ")}`);
    return [];
  }
  const codes = [...new Set((raw as string[]).map((code) => code.toUpperCase()))].sort();
  const unknown = codes.filter((code) => !known.has(code));
  if (unknown.length > 0) problems.push(`unknown destination codes: ${unknown.slice(0, 10).join(", ")}`);
  return codes;
}

function coverage(value: unknown, codes: string[], problems: Problems): Coverage {
  const raw = text(value)?.toLowerCase() ?? (codes.length > 1 ? "regional" : "country");
  if (!(COVERAGES as readonly string[]).includes(raw)) {
    problems.push(`coverage must be one of ${COVERAGES.join(", ")}`);
    return "country";
  }
  if (raw === "country" && codes.length > 1)
    problems.push("a country package covers exactly one destination");
  return raw as Coverage;
}

function supplier(value: unknown, problems: Problems): PackageSupplier {
  const raw = text(value)?.toLowerCase() ?? "carrier";
  if ((PACKAGE_SUPPLIERS as readonly string[]).includes(raw)) return raw as PackageSupplier;
  problems.push(`supplier must be one of ${PACKAGE_SUPPLIERS.join(", ")}`);
  return "carrier";
}

/** The row's package_id when it is well-formed, whatever else is wrong with the row. */
export function readablePackageId(data: unknown): string | null {
  if (typeof data !== "object" || data === null) return null;
  const raw = text((data as Record<string, unknown>).package_id);
  return raw !== null && PACKAGE_ID.test(raw) ? raw : null;
}

/** Checks one row on its own; checks across rows (duplicates) are the import's. */
export function validateCatalogRow(data: unknown, known: ReadonlySet<string>): RowValidation {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return { ok: false, reason: "the row is not an object", package_id: null };
  }
  const row = data as Record<string, unknown>;
  const problems: Problems = [];
  const package_id = identifier(
    row.package_id,
    "package_id",
    PACKAGE_ID,
    "must be 1-64 letters, digits, '.', '_' or '-'",
    problems,
  );
  const external_package_id = identifier(
    row.external_package_id,
    "external_package_id",
    EXTERNAL_PACKAGE_ID,
    "must be 1-128 printable ASCII characters without spaces",
    problems,
  );
  const name = label(row.name, "name", MAX_NAME_CHARS, problems);
  if (name === null) problems.push("name is missing");
  const destination_codes = destinationCodes(row.destination_codes, known, problems);
  const data_mb = dataMb(row.data_mb, problems);
  const pkg: CatalogPackage = {
    package_id,
    external_package_id,
    name: name ?? "",
    destination_codes,
    data_mb,
    validity_days: wholeNumber(row.validity_days, "validity_days", 1, MAX_VALIDITY_DAYS, problems),
    wholesale_minor: wholeNumber(row.wholesale_minor, "wholesale_minor", 1, MAX_PRICE_MINOR, problems),
    retail_minor: wholeNumber(row.retail_minor, "retail_minor", 1, MAX_PRICE_MINOR, problems),
    coverage: coverage(row.coverage, destination_codes, problems),
    region: label(row.region, "region", MAX_REGION_CHARS, problems),
    supplier: supplier(row.supplier, problems),
    networks: checkNetworks(row.networks, destination_codes, problems),
    fair_use: checkFairUse(row, data_mb, problems),
    kyc_required: checkKycRequired(row.kyc_required, problems),
  };
  // A recommended retail price below what the partner pays is a typo, not a promotion.
  if (pkg.retail_minor < pkg.wholesale_minor) problems.push("retail_minor is below wholesale_minor");
  if (problems.length > 0) {
    return { ok: false, reason: problems.join("; "), package_id: readablePackageId(row) };
  }
  return { ok: true, pkg };
}
