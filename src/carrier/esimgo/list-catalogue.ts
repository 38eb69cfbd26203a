// eSIM Go's catalogue for the catalog sync (src/catalog/sync-supplier-catalog.ts): the
// organisation's currency from GET /organisation, then GET /catalogue, every page followed
// (docs/suppliers/esimgo.md §2: `page`, `perPage` and the {bundles, pageCount, rows} wrapper come
// from a third party's OpenAPI only, UNCONFIRMED), one SupplierPackage per bundle.
//
// Field by field (§2, [DOC:api/v2_4/operations/cataloguebundlename], meanings from the v2.1 page):
//   name          -> external_package_id, unchanged ("Bundle names are case sensitive"); ours `esimgo-<name>`
//   countries[].iso -> destination_codes; one: country; "Global" in the name or description: global;
//                    else regional, the region being the countries' shared `region`
//   dataAmount    -> data_mb ("Data Amount (MB)"); unlimited -> null
//   duration      -> validity_days (days, per the naming `esim_1GB_7D_NL_V2`; UNCONFIRMED)
//   price         -> what we pay, "in the organisation currency": the currency is not in the
//                    bundle, so GET /organisation gives it (its shape is UNCONFIRMED, §2)
// Every bundle is also a top-up: a top-up is a bundle ordered onto an existing ICCID (§4), so none
// is top_up_only. eSIM Go gives no recommended retail price.
import {
  type DroppedEntry,
  decimalToMinor,
  finerThanMinor,
  type SupplierListing,
  type SupplierPackage,
} from "../supplier-package.ts";
import { EsimGoClient, isObject, reasonOf } from "./client.ts";
import { type EsimGoFetch, MAX_TIMEOUT_MS } from "./config.ts";
import { RateLimit } from "./rate-limit.ts";

/** Bundles per page: the fake's ceiling is 500; 200 keep a page of regional bundles under the 2 MB read cap. */
const BUNDLES_PER_PAGE = 200;
/** 50 pages of 200: 10,000 bundles, several times eSIM Go's catalogue. */
const MAX_PAGES = 50;

export type EsimGoCatalogOptions = {
  base_url: string;
  api_key: string;
  timeout_ms: number;
  fetch?: EsimGoFetch;
  /** Tests: bundles per page (default BUNDLES_PER_PAGE). */
  page_size?: number;
};

export async function listEsimGoCatalogue(options: EsimGoCatalogOptions): Promise<SupplierListing> {
  if (options.timeout_ms < 1 || options.timeout_ms > MAX_TIMEOUT_MS)
    throw new Error(`eSIM Go timeout_ms must be 1 to ${MAX_TIMEOUT_MS}`);
  const client = new EsimGoClient(
    options.base_url,
    options.api_key,
    options.timeout_ms,
    options.fetch ?? fetch,
    new RateLimit(),
  );
  const currency = await organisationCurrency(client);
  if (typeof currency !== "string") return { ok: false, reason: currency.failure };
  const packages: SupplierPackage[] = [];
  const dropped: DroppedEntry[] = [];
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const verdict = await client.call("/catalogue", {
      query: { page: String(page), perPage: String(options.page_size ?? BUNDLES_PER_PAGE) },
    });
    if (verdict.kind !== "ok") return { ok: false, reason: `eSIM Go GET /catalogue: ${reasonOf(verdict)}` };
    const body = isObject(verdict.body) ? verdict.body : {};
    const bundles = Array.isArray(body.bundles) ? body.bundles : null;
    if (bundles === null)
      return { ok: false, reason: `eSIM Go GET /catalogue page ${page}: no bundles array` };
    for (const bundle of bundles) {
      const pkg = isObject(bundle) ? mapBundle(bundle, currency) : null;
      if (pkg !== null) packages.push(pkg);
      else dropped.push(droppedBundle(bundle));
    }
    // The wrapper's pageCount is UNCONFIRMED (§2, from a third party's OpenAPI): without one, the
    // pages are read until an empty one, never taken to end after the first.
    const pageCount = Number(body.pageCount);
    const last = Number.isInteger(pageCount) && pageCount > 0 ? page >= pageCount : false;
    if (bundles.length === 0 || last) return { ok: true, packages, dropped };
  }
  return { ok: false, reason: `eSIM Go GET /catalogue: more than ${MAX_PAGES} pages` };
}

async function organisationCurrency(client: EsimGoClient): Promise<string | { failure: string }> {
  const verdict = await client.call("/organisation");
  if (verdict.kind !== "ok") return { failure: `eSIM Go GET /organisation: ${reasonOf(verdict)}` };
  const body = isObject(verdict.body) ? verdict.body : {};
  const first = Array.isArray(body.organisations) ? body.organisations[0] : body;
  const currency = isObject(first) && typeof first.currency === "string" ? first.currency.toUpperCase() : "";
  return /^[A-Z]{3}$/.test(currency) ? currency : { failure: "eSIM Go GET /organisation: no currency" };
}

function mapBundle(bundle: Record<string, unknown>, currency: string): SupplierPackage | null {
  if (typeof bundle.name !== "string") return null;
  const countries = (Array.isArray(bundle.countries) ? bundle.countries : []).filter(isObject);
  const codes = [
    ...new Set(
      countries
        .map((country) => country.iso)
        .filter((iso): iso is string => typeof iso === "string" && /^[A-Za-z]{2}$/.test(iso))
        .map((iso) => iso.toUpperCase()),
    ),
  ].sort();
  const net_minor = decimalToMinor(bundle.price, currency);
  const duration = Number(bundle.duration);
  const unlimited = bundle.unlimited === true;
  const data = Number(bundle.dataAmount);
  if (codes.length === 0 || net_minor === null || !Number.isInteger(duration)) return null;
  if (!unlimited && !(data > 0)) return null;
  const description = typeof bundle.description === "string" ? bundle.description : bundle.name;
  const global = /global/i.test(`${bundle.name} ${description}`) && codes.length > 1;
  const regions = new Set(countries.map((country) => country.region));
  const shared = regions.size === 1 ? [...regions][0] : null;
  return {
    external_package_id: bundle.name,
    name: description.slice(0, 200),
    destination_codes: codes,
    coverage: codes.length === 1 ? "country" : global ? "global" : "regional",
    region:
      codes.length === 1 ? null : global ? "Global" : typeof shared === "string" ? shared.slice(0, 64) : null,
    data_mb: unlimited ? null : Math.ceil(data),
    validity_days: duration,
    net_minor,
    net_decimal: finerThanMinor(bundle.price, currency),
    retail_minor: null,
    currency,
    top_up_only: false,
  };
}

function droppedBundle(bundle: unknown): DroppedEntry {
  const name = isObject(bundle) && typeof bundle.name === "string" ? bundle.name.slice(0, 200) : "";
  const why = !isObject(bundle)
    ? "a bundle that is not an object"
    : name === ""
      ? "a bundle without a name"
      : `no positive price ${JSON.stringify(bundle.price ?? null)}, countries, duration or data amount`;
  return { external_package_id: name, reason: why };
}
