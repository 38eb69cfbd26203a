// Airalo's catalogue for the catalog sync (src/catalog/sync-supplier-catalog.ts): GET /v2/packages
// with include=topup, once for `filter[type]=local` (country packages) and once for `global`
// (regional and global ones), every page followed, the tree of destinations -> operators ->
// packages flattened to one SupplierPackage per Airalo package (docs/suppliers/airalo.md §2,
// [SPEC browse-packages], [DOC:get-packages-11883036e0]; the flattening follows the official Node
// SDK's PackagesService.flatten, [NODE]).
//
// Field by field (§2, [DOC:attribute-descriptions-752392m0], [DOC:faq-752238m0]):
//   id            -> external_package_id, unchanged; our package_id is `airalo-<id>`
//   operators[].countries[].country_code -> destination_codes (the entry's `country_code` when absent)
//   entry country_code non-empty -> coverage country; empty: `world` slug -> global, else regional
//   amount (MB), is_unlimited -> data_mb (null when unlimited: "ignore this field")
//   day           -> validity_days
//   net_price     -> what we pay (USD: "Always USD, we have all prices in USD as of now")
//   price         -> Airalo's recommended retail price, our retail_minor floor
//   type `topup`  -> top_up_only
import type pg from "pg";
import {
  type DroppedEntry,
  decimalToMinor,
  finerThanMinor,
  type SupplierListing,
  type SupplierPackage,
} from "../supplier-package.ts";
import { AiraloClient, isObject } from "./client.ts";
import { type AiraloFetch, MAX_TIMEOUT_MS } from "./config.ts";
import { RateLimits } from "./rate-limit.ts";
import { AiraloToken } from "./token.ts";

/** "Always USD" ([DOC:attribute-descriptions-752392m0]); the per-currency `prices` are Airalo's FX, not used. */
export const AIRALO_CURRENCY = "USD";
/**
 * Destinations per page: a destination carries its packages with their installation HTML, a few
 * KB each, and the client reads at most MAX_RESPONSE_BYTES (1 MB) per answer.
 */
const DESTINATIONS_PER_PAGE = 10;
/** Pages per type: 2,000 destinations, ten times the world's countries and regions. */
const MAX_PAGES = 200;

export type AiraloCatalogOptions = {
  pool: pg.Pool;
  base_url: string;
  client_id: string;
  client_secret: string;
  timeout_ms: number;
  fetch?: AiraloFetch;
  /** Tests: destinations per page (default DESTINATIONS_PER_PAGE). */
  page_size?: number;
};

export async function listAiraloPackages(options: AiraloCatalogOptions): Promise<SupplierListing> {
  if (options.timeout_ms < 1 || options.timeout_ms > MAX_TIMEOUT_MS)
    throw new Error(`Airalo timeout_ms must be 1 to ${MAX_TIMEOUT_MS}`);
  const client = new AiraloClient(
    options.base_url,
    options.timeout_ms,
    options.fetch ?? fetch,
    new RateLimits(),
  );
  client.useToken(
    new AiraloToken(
      options.pool,
      options.client_secret,
      () => client.requestToken(options.client_id, options.client_secret),
      Date.now,
    ),
  );
  const read: Read = { packages: [], dropped: [] };
  for (const type of ["local", "global"] as const) {
    const failed = await readType(client, type, options.page_size ?? DESTINATIONS_PER_PAGE, read);
    if (failed !== null) return { ok: false, reason: failed };
  }
  return { ok: true, packages: read.packages, dropped: read.dropped };
}

type Read = { packages: SupplierPackage[]; dropped: DroppedEntry[] };

/** Appends every package of one `filter[type]`; returns why it failed, or null. */
async function readType(
  client: AiraloClient,
  type: string,
  page_size: number,
  into: Read,
): Promise<string | null> {
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const verdict = await client.call("/packages", {
      query: {
        "filter[type]": type,
        include: "topup",
        limit: String(page_size),
        page: String(page),
      },
      limits: [["packages", "catalog"]],
    });
    if (verdict.kind !== "ok") {
      const why = "reason" in verdict ? verdict.reason : verdict.kind;
      return `Airalo GET /v2/packages (${type}, page ${page}): ${why}`;
    }
    const body = isObject(verdict.body) ? verdict.body : {};
    const data = Array.isArray(body.data) ? body.data : null;
    if (data === null) return `Airalo GET /v2/packages (${type}, page ${page}): no data array`;
    for (const entry of data) {
      if (isObject(entry)) flattenDestination(entry, into);
      else
        into.dropped.push({
          external_package_id: "",
          reason: `a destination entry of ${type} page ${page} is not an object`,
        });
    }
    // The SDK pages until meta.last_page or an empty data ([NODE]; the keys are UNCONFIRMED, §2).
    const meta = isObject(body.meta) ? body.meta : {};
    const last = Number(meta.last_page);
    if (data.length === 0 || (Number.isInteger(last) && page >= last)) return null;
  }
  return `Airalo GET /v2/packages (${type}): more than ${MAX_PAGES} pages`;
}

function codesOf(operator: Record<string, unknown>, entry: Record<string, unknown>): string[] {
  const listed = Array.isArray(operator.countries) ? operator.countries : [];
  const codes = listed
    .map((country) => (isObject(country) ? country.country_code : null))
    .filter((code): code is string => typeof code === "string" && /^[A-Za-z]{2}$/.test(code));
  if (codes.length === 0 && typeof entry.country_code === "string" && entry.country_code !== "")
    codes.push(entry.country_code);
  return [...new Set(codes.map((code) => code.toUpperCase()))].sort();
}

function flattenDestination(entry: Record<string, unknown>, into: Read): void {
  const country = typeof entry.country_code === "string" && entry.country_code !== "";
  const title = typeof entry.title === "string" ? entry.title.slice(0, 64) : null;
  for (const operator of Array.isArray(entry.operators) ? entry.operators : []) {
    if (!isObject(operator)) {
      into.dropped.push({ external_package_id: "", reason: "an operator entry is not an object" });
      continue;
    }
    const destination_codes = codesOf(operator, entry);
    const operatorTitle = typeof operator.title === "string" ? operator.title : "Airalo";
    for (const pkg of Array.isArray(operator.packages) ? operator.packages : []) {
      if (!isObject(pkg) || typeof pkg.id !== "string") {
        into.dropped.push({ external_package_id: "", reason: `a package of ${operatorTitle} has no id` });
        continue;
      }
      const net_minor = decimalToMinor(pkg.net_price, AIRALO_CURRENCY);
      const day = Number(pkg.day);
      const amount = Number(pkg.amount);
      const unlimited = pkg.is_unlimited === true;
      const unreadable =
        net_minor === null
          ? `net_price ${JSON.stringify(pkg.net_price ?? null)} is not a positive price`
          : !Number.isInteger(day)
            ? `day ${JSON.stringify(pkg.day ?? null)} is not a whole number of days`
            : !unlimited && !(amount > 0)
              ? `amount ${JSON.stringify(pkg.amount ?? null)} is not a positive number of MB`
              : null;
      if (unreadable !== null || net_minor === null) {
        into.dropped.push({ external_package_id: pkg.id.slice(0, 200), reason: unreadable ?? "no price" });
        continue;
      }
      into.packages.push({
        external_package_id: pkg.id,
        name: `${operatorTitle} ${String(pkg.title ?? pkg.id)}`.slice(0, 200),
        destination_codes,
        coverage:
          country && destination_codes.length === 1
            ? "country"
            : entry.slug === "world"
              ? "global"
              : "regional",
        region: country ? null : title,
        data_mb: unlimited ? null : Math.ceil(amount),
        validity_days: day,
        net_minor,
        net_decimal: finerThanMinor(pkg.net_price, AIRALO_CURRENCY),
        retail_minor: decimalToMinor(pkg.price, AIRALO_CURRENCY),
        currency: AIRALO_CURRENCY,
        top_up_only: pkg.type === "topup",
      });
    }
  }
}
