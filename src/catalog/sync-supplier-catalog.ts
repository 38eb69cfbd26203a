// Syncs the catalog with a wholesale supplier's packages (contract, "Suppliers (operator side)"):
// the supplier's listing (read by its adapter) becomes that supplier's set of active packages,
// priced at the net price plus the markup, rounded up to the minor unit. In one transaction with
// the same statements as the import (catalog-writes.sql.ts), so the catalog version is bumped and
// `catalog_changed` notified exactly when something changed: partners see catalog changes.
// Packages the supplier stopped selling (or the destinations filter now leaves out) are retired:
// no longer offered, never deleted, so carts and orders keep their terms. Other suppliers'
// packages, the carrier's included, are untouched.
import { recordAuditOnClient } from "../audit/record-audit.ts";
import type {
  DroppedEntry,
  Supplier,
  SupplierListing,
  SupplierPackage,
} from "../carrier/supplier-package.ts";
import { markedUpMinor, parseDecimal, supplierPackageId } from "../carrier/supplier-package.ts";
import { inTransaction, type Pool, type PoolClient } from "../db/pool.ts";
import type { Actor } from "../shared/actor.ts";
import { catalogChanged } from "./catalog-cache.ts";
import { sameFacts } from "./catalog-facts.ts";
import type { CatalogPackage } from "./catalog-package.ts";
import { validateCatalogRow } from "./catalog-rows.ts";
import {
  bumpCatalogVersion,
  externalPackageOwners,
  knownDestinationCodes,
  lockCatalogWriters,
  replacePackageDestinations,
  type StoredPackage,
  storedPackages,
  upsertDestinations,
  upsertPackages,
  writeBatches,
} from "./catalog-writes.sql.ts";
import { defaultDestinations } from "./default-catalog.ts";
import { type CatalogChanges, recordCatalogChanges } from "./record-catalog-changes.ts";
import {
  activePackagesBySupplier,
  lastSyncRuns,
  recordSyncRun,
  retireSupplierPackagesNotIn,
  type StoredSyncRun,
  type SupplierTerms,
  setSupplierTerms,
  storedSupplierTerms,
} from "./supplier-sync.sql.ts";

/**
 * Packages one sync accepts from a supplier. Airalo lists a few thousand, eSIM Go a few thousand
 * more; a listing above this is refused whole rather than cut (a cut listing would retire the rest).
 */
export const MAX_PACKAGES_PER_SYNC = 20_000;
/** Markup ceiling: 1000 % (basis points: hundredths of a percent). */
export const MAX_MARKUP_BASIS_POINTS = 100_000;
/** Skipped packages listed in a report; the count of all of them is `skipped_total`. */
const MAX_SKIPPED_LISTED = 100;
/**
 * The share of a supplier's active packages (in percent) one sync retires for being missing from
 * its listing without the operator's `allow_removals`: a listing cut short (a page count taken for
 * the end, a supplier's bad day) must not empty the catalog. Retiring what `--destinations` leaves
 * out is the operator's own choice and does not count.
 */
export const MAX_UNCONFIRMED_REMOVAL_PERCENT = 20;

export type SyncReport = {
  /** Package ids, sorted. */
  added: string[];
  changed: string[];
  removed: string[];
  /** Supplier packages not imported, with why (a destination we do not know, an id taken). */
  skipped: { external_package_id: string; reason: string }[];
  skipped_total: number;
  /** Entries of the listing that could not be read as packages (no price, no id), with why. */
  dropped: { external_package_id: string; reason: string }[];
  dropped_total: number;
  /** The catalog version after the sync; null when nothing changed. */
  version: number | null;
};

/** The sync refused as a whole: nothing was written. */
export class SupplierSyncError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SupplierSyncError";
  }
}

export type SyncOptions = {
  supplier: Supplier;
  markup_basis_points: number;
  /** Keep only packages covering one of these countries (regional and global ones included); empty: all. */
  destination_codes: string[];
  /** The deployment's currency: every catalog price is in it. */
  currency: string;
  actor: Actor;
  /** The supplier's listing, read by its adapter. */
  list: () => Promise<SupplierListing>;
  /**
   * Retire every package missing from the listing, however many (CLI `--allow-removals`). Without
   * it, a sync that would retire more than MAX_UNCONFIRMED_REMOVAL_PERCENT % of the supplier's
   * active packages, or any while the listing had entries it could not read, is refused whole.
   */
  allow_removals?: boolean;
};

/**
 * "12.5" -> 1250: a markup in percent with at most two decimals, as hundredths of a percent, read
 * from the text (never a float). null: not a markup we accept.
 */
export function parseMarkupPercent(text: string): number | null {
  const match = /^(\d{1,4})(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!match) return null;
  const basis_points = Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"));
  return basis_points <= MAX_MARKUP_BASIS_POINTS ? basis_points : null;
}

/** ceil(net x (1 + markup)) in minor units, in integers: net x (10000 + bp) / 10000, rounded up. */
export function priceWithMarkup(net_minor: number, markup_basis_points: number): number {
  const scaled = BigInt(net_minor) * BigInt(10_000 + markup_basis_points);
  const price = (scaled + 9_999n) / 10_000n;
  return Number(price);
}

/**
 * The wholesale price of a supplier's package, rounded up once: from the supplier's exact decimal
 * when it has more decimals than the currency (net_minor is already rounded up, and rounding the
 * marked-up price again could add a minor unit), else from net_minor.
 */
export function wholesaleOf(item: SupplierPackage, markup_basis_points: number): number {
  const exact = item.net_decimal === undefined ? null : parseDecimal(item.net_decimal);
  if (exact === null) return priceWithMarkup(item.net_minor, markup_basis_points);
  const price = markedUpMinor(exact, markup_basis_points, item.currency);
  if (price === null) throw new Error(`wholesaleOf: ${item.external_package_id} has no positive price`);
  return price;
}

function covers(pkg: SupplierPackage, wanted: ReadonlySet<string>): boolean {
  return wanted.size === 0 || pkg.destination_codes.some((code) => wanted.has(code));
}

type Candidate = { pkg: CatalogPackage; terms: SupplierTerms };
type Selection = { candidates: Candidate[]; skipped: SyncReport["skipped"] };

/** Prices and validates the supplier's packages as catalog rows, as the import validates a file's. */
function select(listed: SupplierPackage[], options: SyncOptions, known: ReadonlySet<string>): Selection {
  const wanted = new Set(options.destination_codes);
  const selection: Selection = { candidates: [], skipped: [] };
  const seen = new Set<string>();
  for (const item of listed) {
    if (!covers(item, wanted)) continue;
    const package_id = supplierPackageId(options.supplier, item.external_package_id);
    const wholesale_minor = wholesaleOf(item, options.markup_basis_points);
    // A region may list a territory we have no destination for (ISO 3166 user-assigned codes such
    // as XK): the package is offered for the destinations we know, and skipped only with none.
    const destination_codes = item.destination_codes.filter((code) => known.has(code));
    const result = validateCatalogRow(
      {
        package_id,
        external_package_id: item.external_package_id,
        name: item.name,
        destination_codes: destination_codes.length > 0 ? destination_codes : item.destination_codes,
        data_mb: item.data_mb,
        validity_days: item.validity_days,
        wholesale_minor,
        // The supplier's recommended retail price when it is above ours; else ours.
        retail_minor: Math.max(wholesale_minor, item.retail_minor ?? 0),
        // Two known codes left of a region is still a regional package, one is a country's.
        coverage: item.coverage !== "country" && destination_codes.length === 1 ? "regional" : item.coverage,
        region: item.region,
        supplier: options.supplier,
      },
      known,
    );
    const problem = !result.ok ? result.reason : seen.has(package_id) ? "listed twice" : null;
    if (problem !== null || !result.ok) {
      selection.skipped.push({
        external_package_id: item.external_package_id.slice(0, 128),
        reason: problem ?? "",
      });
      continue;
    }
    seen.add(package_id);
    selection.candidates.push({
      pkg: result.pkg,
      terms: {
        package_id,
        supplier: options.supplier,
        supplier_net_minor: item.net_minor,
        supplier_currency: item.currency,
        top_up_only: item.top_up_only,
      },
    });
  }
  return selection;
}

/**
 * What a written package is to partners, who are offered only active packages that are not
 * top-up-only (a supplier's top-up product is never sold as a new eSIM): one turning top-up-only
 * is removed for them, one ceasing to be is added, and a top-up-only one stays out of the feed.
 */
function offeredChange(was_offered: boolean, now_offered: boolean): keyof CatalogChanges | null {
  if (now_offered) return was_offered ? "updated" : "added";
  return was_offered ? "removed" : null;
}

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
    stored.destination_codes.join(" ") === pkg.destination_codes.join(" ") &&
    sameFacts(stored, pkg)
  );
}

type Stored = {
  packages: Map<string, StoredPackage>;
  terms: Awaited<ReturnType<typeof storedSupplierTerms>>;
  owners: Map<string, string>;
};

/** Drops candidates whose package_id is another supplier's or whose supplier id another package holds. */
function claimable(selection: Selection, stored: Stored, supplier: Supplier): Candidate[] {
  return selection.candidates.filter(({ pkg }) => {
    const holder = stored.terms.get(pkg.package_id)?.supplier;
    const owner = stored.owners.get(pkg.external_package_id);
    const reason =
      holder !== undefined && holder !== supplier
        ? `package_id ${pkg.package_id} belongs to a ${holder} package`
        : owner !== undefined && owner !== pkg.package_id
          ? `external_package_id belongs to package ${owner}`
          : null;
    if (reason !== null) selection.skipped.push({ external_package_id: pkg.external_package_id, reason });
    return reason === null;
  });
}

function sameTerms(
  stored: Stored["terms"] extends Map<string, infer T> ? T | undefined : never,
  terms: SupplierTerms,
) {
  return (
    stored !== undefined &&
    stored.supplier === terms.supplier &&
    Number(stored.supplier_net_minor) === terms.supplier_net_minor &&
    stored.supplier_currency === terms.supplier_currency &&
    stored.top_up_only === terms.top_up_only
  );
}

async function write(client: PoolClient, changed: Candidate[], currency: string): Promise<void> {
  for (const batch of writeBatches(changed.map((c) => c.pkg))) {
    await upsertPackages(client, batch, currency);
    await replacePackageDestinations(client, batch);
  }
  await setSupplierTerms(
    client,
    changed.map((c) => c.terms),
  );
}

type Listed = { packages: SupplierPackage[]; dropped: DroppedEntry[] };

async function applySync(client: PoolClient, listing: Listed, options: SyncOptions): Promise<SyncReport> {
  const listed = listing.packages;
  await lockCatalogWriters(client);
  const active_before = (await activePackagesBySupplier(client)).get(options.supplier) ?? 0;
  const destinationsWritten = await upsertDestinations(client, defaultDestinations());
  const selection = select(listed, options, await knownDestinationCodes(client));
  const ids = selection.candidates.map((c) => c.pkg.package_id);
  const stored: Stored = {
    packages: await storedPackages(client, ids),
    terms: await storedSupplierTerms(client, ids),
    owners: await externalPackageOwners(
      client,
      selection.candidates.map((c) => c.pkg.external_package_id),
    ),
  };
  const candidates = claimable(selection, stored, options.supplier);
  const added: string[] = [];
  const changed: string[] = [];
  const toWrite: Candidate[] = [];
  const offered: CatalogChanges = { added: [], updated: [], removed: [] };
  for (const candidate of candidates) {
    const current = stored.packages.get(candidate.pkg.package_id);
    const terms = stored.terms.get(candidate.pkg.package_id);
    const same =
      current !== undefined &&
      sameFields(current, candidate.pkg, options.currency) &&
      sameTerms(terms, candidate.terms);
    if (same) continue;
    // A package the supplier sells again after a retirement is offered again: added, for partners.
    const was_active = current?.active === true;
    (was_active ? changed : added).push(candidate.pkg.package_id);
    const partner_kind = offeredChange(
      was_active && terms?.top_up_only === false,
      !candidate.terms.top_up_only,
    );
    if (partner_kind !== null) offered[partner_kind].push(candidate.pkg.package_id);
    toWrite.push(candidate);
  }
  await write(client, toWrite, options.currency);
  const retired = await retireSupplierPackagesNotIn(
    client,
    options.supplier,
    candidates.map((c) => c.pkg.package_id),
  );
  const removed = retired.map((r) => r.package_id);
  offered.removed.push(...retired.filter((r) => !r.top_up_only).map((r) => r.package_id));
  checkRemovals(removed, active_before, listing, options);
  await recordCatalogChanges(client, offered);
  const report = {
    added: added.sort(),
    changed: changed.sort(),
    removed,
    skipped: selection.skipped.slice(0, MAX_SKIPPED_LISTED),
    skipped_total: selection.skipped.length,
    dropped: listing.dropped.slice(0, MAX_SKIPPED_LISTED),
    dropped_total: listing.dropped.length,
    version: null as number | null,
  };
  if (destinationsWritten + toWrite.length + removed.length > 0) {
    report.version = await bumpCatalogVersion(client);
    await recordAuditOnClient(client, {
      actor: options.actor,
      action: "catalog.synced",
      partner_id: null,
      target: { type: "catalog", id: String(report.version) },
      details: {
        supplier: options.supplier,
        markup_basis_points: options.markup_basis_points,
        added: added.length,
        changed: changed.length,
        removed: removed.length,
      },
    });
  }
  await recordSyncRun(client, {
    ...runOf(options, "ok"),
    added: added.length,
    changed: changed.length,
    removed: removed.length,
  });
  return report;
}

/**
 * Throws (the transaction rolls back: nothing written) when the packages just retired for being
 * missing from the listing are more than the allowed share, or any while entries were dropped.
 */
function checkRemovals(
  removed: string[],
  active_before: number,
  listing: Listed,
  options: SyncOptions,
): void {
  if (options.allow_removals === true || removed.length === 0) return;
  const listed_ids = new Set(
    listing.packages.map((pkg) => supplierPackageId(options.supplier, pkg.external_package_id)),
  );
  const missing = removed.filter((id) => !listed_ids.has(id));
  if (missing.length === 0) return;
  const total = active_before;
  const retry =
    "run it again with --allow-removals (console: Allow removals) if the supplier really stopped selling them";
  if (listing.dropped.length > 0) {
    throw new SupplierSyncError(
      `${options.supplier}'s listing had ${listing.dropped.length} entries it could not read (first: ` +
        `${describeDropped(listing.dropped[0]!)}), so the ${missing.length} package(s) missing from it are not retired; ${retry}`,
    );
  }
  if (missing.length * 100 > total * MAX_UNCONFIRMED_REMOVAL_PERCENT) {
    throw new SupplierSyncError(
      `${options.supplier}'s listing lacks ${missing.length} of its ${total} active packages (more than ` +
        `${MAX_UNCONFIRMED_REMOVAL_PERCENT}%): a listing cut short is not taken for the end of sales; ${retry}`,
    );
  }
}

function describeDropped(entry: DroppedEntry): string {
  return `${entry.external_package_id === "" ? "an entry" : entry.external_package_id}: ${entry.reason}`.slice(
    0,
    300,
  );
}

function runOf(options: SyncOptions, outcome: string) {
  return {
    supplier: options.supplier,
    markup_basis_points: options.markup_basis_points,
    destination_codes: options.destination_codes,
    outcome,
    added: 0,
    changed: 0,
    removed: 0,
  };
}

function checkOptions(options: SyncOptions): void {
  if (!/^[A-Z]{3}$/.test(options.currency))
    throw new Error(`currency ${options.currency} is not an ISO 4217 code`);
  if (
    !Number.isInteger(options.markup_basis_points) ||
    options.markup_basis_points < 0 ||
    options.markup_basis_points > MAX_MARKUP_BASIS_POINTS
  ) {
    throw new SupplierSyncError(`the markup must be 0 to ${MAX_MARKUP_BASIS_POINTS / 100} percent`);
  }
  if (
    options.destination_codes.some((code) => !/^[A-Z]{2}$/.test(code)) ||
    options.destination_codes.length > 300
  )
    throw new SupplierSyncError("destinations must be at most 300 two-letter country codes");
}

/** Why the listing cannot be imported as a whole, or null. */
function listingProblem(listing: SupplierListing, options: SyncOptions): string | null {
  if (!listing.ok) return `${options.supplier}: ${listing.reason}`;
  if (listing.packages.length > MAX_PACKAGES_PER_SYNC) {
    return `${options.supplier} lists ${listing.packages.length} packages; a sync takes at most ${MAX_PACKAGES_PER_SYNC}`;
  }
  // No conversion: a price in another currency would be a guess at today's rate.
  const foreign = listing.packages.find((pkg) => pkg.currency !== options.currency);
  if (foreign !== undefined) {
    return `${options.supplier} prices in ${foreign.currency} and the catalog is in ${options.currency}; currencies are not converted`;
  }
  return null;
}

/**
 * Runs one sync. Throws SupplierSyncError when the supplier cannot be read or its listing cannot be
 * imported (nothing written then, the refusal recorded as the supplier's last outcome).
 */
export async function syncSupplierCatalog(pool: Pool, options: SyncOptions): Promise<SyncReport> {
  checkOptions(options);
  const listing = await options.list();
  const problem = listingProblem(listing, options);
  if (problem !== null || !listing.ok) {
    await recordSyncRun(pool, runOf(options, problem ?? "refused"));
    throw new SupplierSyncError(problem ?? "refused");
  }
  let report: SyncReport;
  try {
    report = await inTransaction(pool, (client) => applySync(client, listing, options));
  } catch (error) {
    if (error instanceof SupplierSyncError) await recordSyncRun(pool, runOf(options, error.message));
    throw error;
  }
  if (report.version !== null) catalogChanged(pool, report.version);
  return report;
}

/** For the operator's catalog page: active packages per supplier (the carrier's too) and each supplier's last sync. */
export async function supplierOverview(
  pool: Pool,
): Promise<{ active_packages: Map<string, number>; last_syncs: StoredSyncRun[] }> {
  return { active_packages: await activePackagesBySupplier(pool), last_syncs: await lastSyncRuns(pool) };
}
