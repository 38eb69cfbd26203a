// Imports an operator's catalog file: the file becomes the set of active packages. Valid rows are
// upserted (every field and the destinations replaced), packages absent from the file are retired,
// bad rows are reported with a reason, all in one transaction that also bumps the catalog version
// and notifies `catalog_changed`, so every process drops its cached discovery responses.
import { recordAuditOnClient } from "../audit/record-audit.ts";
import { inTransaction, type Pool, type PoolClient } from "../db/pool.ts";
import type { Actor } from "../shared/actor.ts";
import { catalogChanged } from "./catalog-cache.ts";
import { sameFacts } from "./catalog-facts.ts";
import type { CatalogPackage } from "./catalog-package.ts";
import { type CatalogImportRow, readablePackageId, validateCatalogRow } from "./catalog-rows.ts";
import {
  bumpCatalogVersion,
  externalPackageOwners,
  knownDestinationCodes,
  lockCatalogWriters,
  packageSuppliers,
  replacePackageDestinations,
  retirePackagesNotIn,
  type StoredPackage,
  storedPackages,
  upsertDestinations,
  upsertPackages,
  writeBatches,
} from "./catalog-writes.sql.ts";
import { defaultDestinations } from "./default-catalog.ts";
import {
  CatalogFileError,
  MAX_CATALOG_ROWS,
  parseCatalogText,
  readCatalogFile,
  type SourceRow,
} from "./read-catalog-file.ts";
import { recordCatalogChanges } from "./record-catalog-changes.ts";

export type { CatalogImportRow } from "./catalog-rows.ts";
export { CatalogFileError, MAX_CATALOG_FILE_BYTES, MAX_CATALOG_ROWS } from "./read-catalog-file.ts";

/** Rejected rows listed in a report; the count of all of them is `rejected_total`. */
export const MAX_REJECTED_LISTED = 1_000;

export type ImportCatalogOptions = {
  /** ISO 4217 code every imported price is in: the deployment's currency. */
  currency: string;
  /** Who imports (the operator's console or CLI): named in the audit log's catalog.imported. */
  actor: Actor;
  /** Called as rows are checked and written; `done` reaches `total` when the import commits. */
  onProgress?: (done: number, total: number) => void;
};

/** `row`: 1-based position among the data rows; `line`: the CSV line the row ends on. */
export type RejectedRow = { row: number; line?: number; reason: string };

export type ImportReport = {
  /** Packages new to the catalog. */
  imported: number;
  /** Existing packages whose fields or destinations changed (retired ones included, now active again). */
  updated: number;
  unchanged: number;
  /** Active packages absent from the file, now retired (active = false, never deleted). */
  retired: number;
  rejected: RejectedRow[];
  rejected_total: number;
  /** The catalog version after the import; null when nothing changed and the version was kept. */
  version: number | null;
};

type CheckedRows = {
  valid: CatalogPackage[];
  rejected: RejectedRow[];
  /** Every package id the file names, valid row or not: none of them is retired. */
  mentioned: Set<string>;
};

type Seen = { packages: Map<string, number>; externals: Map<string, number> };

function reject(source: SourceRow, reason: string): RejectedRow {
  return source.line === undefined
    ? { row: source.row, reason }
    : { row: source.row, line: source.line, reason };
}

function crossRowProblem(
  pkg: CatalogPackage,
  seen: Seen,
  owners: Map<string, string>,
  suppliers: ReadonlyMap<string, string>,
): string | null {
  // A package keeps its supplier (migration 0035): orders already placed went through it.
  const supplier = suppliers.get(pkg.package_id);
  if (supplier !== undefined && supplier !== (pkg.supplier ?? "carrier"))
    return `package_id ${pkg.package_id} is a ${supplier} package; its supplier does not change`;
  const samePackage = seen.packages.get(pkg.package_id);
  if (samePackage !== undefined) return `package_id ${pkg.package_id} repeats row ${samePackage}`;
  const sameExternal = seen.externals.get(pkg.external_package_id);
  if (sameExternal !== undefined)
    return `external_package_id ${pkg.external_package_id} repeats row ${sameExternal}`;
  const owner = owners.get(pkg.external_package_id);
  // A carrier's product id stays with the package that orders already reference, retired or not.
  if (owner !== undefined && owner !== pkg.package_id) {
    return `external_package_id ${pkg.external_package_id} belongs to package ${owner}`;
  }
  return null;
}

function checkRows(
  rows: SourceRow[],
  known: ReadonlySet<string>,
  owners: Map<string, string>,
  suppliers: ReadonlyMap<string, string>,
): CheckedRows {
  const checked: CheckedRows = { valid: [], rejected: [], mentioned: new Set() };
  const seen: Seen = { packages: new Map(), externals: new Map() };
  for (const source of rows) {
    if (source.problem !== undefined) {
      const package_id = readablePackageId(source.data);
      if (package_id !== null) checked.mentioned.add(package_id);
      checked.rejected.push(reject(source, source.problem));
      continue;
    }
    const result = validateCatalogRow(source.data, known);
    const package_id = result.ok ? result.pkg.package_id : result.package_id;
    if (package_id !== null) checked.mentioned.add(package_id);
    const problem = result.ok ? crossRowProblem(result.pkg, seen, owners, suppliers) : result.reason;
    if (package_id !== null && !seen.packages.has(package_id)) seen.packages.set(package_id, source.row);
    if (problem !== null || !result.ok) {
      checked.rejected.push(reject(source, problem ?? "invalid row"));
      continue;
    }
    seen.externals.set(result.pkg.external_package_id, source.row);
    checked.valid.push(result.pkg);
  }
  return checked;
}

/** What the import must write: only what differs from the stored catalog is touched. */
type WritePlan = {
  /** New packages and packages whose fields or destinations changed, in file order. */
  changed: CatalogPackage[];
  fields: Set<string>;
  coverage: Set<string>;
  imported: number;
  updated: number;
  unchanged: number;
};

function sameFields(stored: StoredPackage, pkg: CatalogPackage, currency: string): boolean {
  return (
    stored.active &&
    stored.external_package_id === pkg.external_package_id &&
    stored.name === pkg.name &&
    stored.data_mb === pkg.data_mb &&
    stored.validity_days === pkg.validity_days &&
    stored.wholesale_minor === pkg.wholesale_minor &&
    stored.retail_minor === pkg.retail_minor &&
    stored.currency === currency &&
    stored.coverage === pkg.coverage &&
    stored.region === pkg.region &&
    stored.supplier === (pkg.supplier ?? "carrier") &&
    sameFacts(stored, pkg)
  );
}

function planWrites(
  valid: CatalogPackage[],
  stored: Map<string, StoredPackage>,
  currency: string,
): WritePlan {
  const plan: WritePlan = {
    changed: [],
    fields: new Set(),
    coverage: new Set(),
    imported: 0,
    updated: 0,
    unchanged: 0,
  };
  for (const pkg of valid) {
    const current = stored.get(pkg.package_id);
    const fieldsChanged = !current || !sameFields(current, pkg, currency);
    // Both sides are sorted, so equal sets join to equal strings.
    const coverageChanged =
      !current || current.destination_codes.join(" ") !== pkg.destination_codes.join(" ");
    if (fieldsChanged) plan.fields.add(pkg.package_id);
    if (coverageChanged) plan.coverage.add(pkg.package_id);
    if (fieldsChanged || coverageChanged) plan.changed.push(pkg);
    if (!current) plan.imported += 1;
    else if (fieldsChanged || coverageChanged) plan.updated += 1;
    else plan.unchanged += 1;
  }
  return plan;
}

async function writePlan(
  client: PoolClient,
  plan: WritePlan,
  currency: string,
  advance: (rows: number) => void,
): Promise<void> {
  for (const batch of writeBatches(plan.changed)) {
    const fields = batch.filter((pkg) => plan.fields.has(pkg.package_id));
    const coverage = batch.filter((pkg) => plan.coverage.has(pkg.package_id));
    // Packages first: a new package's destination pairs reference it.
    if (fields.length > 0) await upsertPackages(client, fields, currency);
    if (coverage.length > 0) await replacePackageDestinations(client, coverage);
    advance(batch.length);
  }
}

/** The external_package_ids the file names, valid rows or not: whose they are now is one query. */
function namedExternalIds(rows: SourceRow[]): string[] {
  const ids = new Set<string>();
  for (const { data } of rows) {
    const value =
      typeof data === "object" && data !== null
        ? (data as Record<string, unknown>).external_package_id
        : null;
    if (typeof value === "string" && value.trim() !== "") ids.add(value.trim());
  }
  return [...ids];
}

function progressCounter(
  total: number,
  onProgress: ImportCatalogOptions["onProgress"],
): (rows: number) => void {
  let done = 0;
  return (rows) => {
    done = Math.min(total, done + rows);
    onProgress?.(done, total);
  };
}

/** The import's changes for the change feed: a package offered again after a retirement is added. */
function changesOf(plan: WritePlan, stored: Map<string, StoredPackage>, retired: string[]) {
  const offered = (id: string) => stored.get(id)?.active === true;
  const ids = plan.changed.map((pkg) => pkg.package_id);
  return { added: ids.filter((id) => !offered(id)), updated: ids.filter(offered), removed: retired };
}

type Applied = { imported: number; updated: number; unchanged: number; written: number; retired: number };

const NOTHING_APPLIED: Applied = { imported: 0, updated: 0, unchanged: 0, written: 0, retired: 0 };

async function applyRows(
  client: PoolClient,
  checked: CheckedRows,
  currency: string,
  advance: (rows: number) => void,
): Promise<Applied> {
  const stored = await storedPackages(
    client,
    checked.valid.map((pkg) => pkg.package_id),
  );
  const plan = planWrites(checked.valid, stored, currency);
  advance(plan.unchanged);
  await writePlan(client, plan, currency, advance);
  const retired = await retirePackagesNotIn(client, [...checked.mentioned]);
  await recordCatalogChanges(client, changesOf(plan, stored, retired));
  return { ...plan, written: plan.changed.length, retired: retired.length };
}

async function importRows(
  client: PoolClient,
  rows: SourceRow[],
  options: ImportCatalogOptions,
): Promise<ImportReport> {
  await lockCatalogWriters(client);
  // Destinations are ISO 3166-1 reference data, not the operator's to import: a database that was
  // never seeded (production) gets them here, and a country renamed upstream reaches every database.
  const destinationsWritten = await upsertDestinations(client, defaultDestinations());
  const known = await knownDestinationCodes(client);
  const owners = await externalPackageOwners(client, namedExternalIds(rows));
  const named = rows.map((row) => readablePackageId(row.data)).filter((id): id is string => id !== null);
  const checked = checkRows(rows, known, owners, await packageSuppliers(client, named));
  const advance = progressCounter(rows.length, options.onProgress);
  advance(checked.rejected.length);
  // A file with no valid row is a broken file, not an order to retire the whole catalog.
  const applied =
    checked.valid.length > 0 ? await applyRows(client, checked, options.currency, advance) : NOTHING_APPLIED;
  // An identical import keeps the version, and with it every cache and ETag.
  const changed = destinationsWritten + applied.written + applied.retired > 0;
  const version = changed ? await bumpCatalogVersion(client) : null;
  advance(rows.length);
  const report = {
    imported: applied.imported,
    updated: applied.updated,
    unchanged: applied.unchanged,
    retired: applied.retired,
    rejected: checked.rejected.slice(0, MAX_REJECTED_LISTED),
    rejected_total: checked.rejected.length,
    version,
  };
  // An import that changed nothing changed nothing to audit. The catalog is the operator's, for
  // every partner: the entry is in no partner's log.
  if (changed) {
    await recordAuditOnClient(client, {
      actor: options.actor,
      action: "catalog.imported",
      partner_id: null,
      target: { type: "catalog", id: version === null ? null : String(version) },
      details: {
        imported: report.imported,
        updated: report.updated,
        retired: report.retired,
        rejected: report.rejected_total,
      },
    });
  }
  return report;
}

function givenRows(rows: readonly CatalogImportRow[]): SourceRow[] {
  if (rows.length > MAX_CATALOG_ROWS) {
    throw new CatalogFileError(`${rows.length} rows given; at most ${MAX_CATALOG_ROWS} are accepted`);
  }
  return rows.map((data, index) => ({ row: index + 1, data }));
}

/**
 * Imports a catalog from rows or from a CSV/JSON file path. Throws CatalogFileError when the file
 * as a whole is unusable (nothing is written then); a bad row is reported in `rejected`.
 */
export async function importCatalog(
  pool: Pool,
  source: readonly CatalogImportRow[] | string,
  options: ImportCatalogOptions,
): Promise<ImportReport> {
  if (!/^[A-Z]{3}$/.test(options.currency))
    throw new Error(`currency ${options.currency} is not an ISO 4217 code`);
  const rows = typeof source === "string" ? await readCatalogFile(source) : givenRows(source);
  return importSourceRows(pool, rows, options);
}

/** For the web console: a catalog pasted as CSV or JSON text, imported like a file. */
export async function importCatalogText(
  pool: Pool,
  text: string,
  options: ImportCatalogOptions,
): Promise<ImportReport> {
  return importSourceRows(pool, parseCatalogText(text), options);
}

async function importSourceRows(
  pool: Pool,
  rows: SourceRow[],
  options: ImportCatalogOptions,
): Promise<ImportReport> {
  if (!/^[A-Z]{3}$/.test(options.currency))
    throw new Error(`currency ${options.currency} is not an ISO 4217 code`);
  const report = await inTransaction(pool, (client) => importRows(client, rows, options));
  // This process's cache need not wait for the notification.
  if (report.version !== null) catalogChanged(pool, report.version);
  return report;
}

/** For the operator CLI: imports a .csv or .json file; draw a progress bar from onProgress. */
export async function importCatalogFile(
  pool: Pool,
  path: string,
  options: ImportCatalogOptions,
): Promise<ImportReport> {
  return importCatalog(pool, path, options);
}
