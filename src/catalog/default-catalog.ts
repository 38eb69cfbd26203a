// The default catalog a new database is seeded with: every ISO 3166-1 alpha-2 code known to
// i18n-iso-countries, with its English name from the package's `en` locale (no hand-typed names),
// six country packages per destination with a public mobile network (sandbox-networks.ts), and
// Europe, Asia and Global regional packages.
// Deterministic: the same package version always yields the same rows, so two processes seeding
// at once, or a re-seed in a test, agree byte for byte.
import countries from "i18n-iso-countries";
import en from "i18n-iso-countries/langs/en.json" with { type: "json" };
import type { FairUse } from "./catalog-facts.ts";
import type { CatalogPackage, CatalogSet, Coverage, Destination } from "./catalog-package.ts";
import { sandboxNetworks } from "./sandbox-networks.ts";

countries.registerLocale(en);

/**
 * Europe package coverage, a product decision rather than geography: the EU 27 and the EEA
 * (where "roam like at home" applies), the EU's outermost regions that are part of it (French
 * overseas departments, Saint-Martin), the United Kingdom and Switzerland (carriers roam them with
 * the EU), and the microstates and dependencies served by the neighbouring networks.
 */
// biome-ignore format: grouped by reason of membership, not one code per line
export const EUROPE_CODES: readonly string[] = [
  // EU 27
  "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV", "LT",
  "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE",
  // EEA
  "IS", "LI", "NO",
  // EU outermost regions
  "GF", "GP", "MQ", "RE", "YT", "MF",
  // UK and Switzerland
  "GB", "CH",
  // Microstates and dependencies
  "AD", "MC", "SM", "VA", "GI", "GG", "JE", "IM", "AX",
];

/** Asia package coverage: East, South-East, South and Central Asia. A product decision too. */
// biome-ignore format: grouped by sub-region, not one code per line
export const ASIA_CODES: readonly string[] = [
  // East Asia
  "CN", "HK", "MO", "TW", "JP", "KR", "MN",
  // South-East Asia
  "SG", "MY", "TH", "VN", "ID", "PH", "KH", "LA", "MM", "BN", "TL",
  // South Asia
  "IN", "LK", "BD", "NP", "BT", "MV", "PK",
  // Central Asia
  "KZ", "UZ", "KG", "TJ", "TM",
];

/**
 * Price tiers, as a percentage of the base price: Europe is the cheapest to roam in, Asia a little
 * dearer, the rest of the world dearest. Regional and global bundles carry a premium over a single
 * country because they spread over many networks.
 */
const TIER_PERCENT = { europe: 100, asia: 120, rest_of_world: 160 } as const;
const REGIONAL_PREMIUM_PERCENT = 115;
const GLOBAL_PERCENT = 200;
/** Recommended retail price over wholesale. */
const RETAIL_MARKUP_PERCENT = 140;

/**
 * The unlimited plans' fair use: full speed for 2 GB a day, then 512 kbps until the day ends, the
 * common terms of the wholesale market's unlimited eSIMs.
 */
const UNLIMITED_FAIR_USE: FairUse = { daily_data_mb: 2048, throttled_kbps: 512 };

/**
 * Countries whose sandbox country packages ask the traveller for an identity check before the
 * eSIM works (eKYC): where the law ties a SIM to a passport, as in China and India. An
 * illustration: a production catalog states this per package.
 */
const KYC_COUNTRIES: readonly string[] = ["CN", "IN"];

/**
 * A country package runs on every operator of its country; a regional or global one on one partner
 * network per country (the first listed, the largest), as multi-country eSIMs are sold. It also
 * keeps a Global package's list to one entry per country it covers.
 */
function coverNetworks(code: string, coverage: Coverage) {
  const networks = sandboxNetworks(code);
  return coverage === "country" ? networks : networks.slice(0, 1);
}

type Plan = { data_mb: number | null; validity_days: number; base_wholesale_minor: number };

const GB = 1024;

const COUNTRY_PLANS: readonly Plan[] = [
  { data_mb: 1 * GB, validity_days: 7, base_wholesale_minor: 350 },
  { data_mb: 3 * GB, validity_days: 15, base_wholesale_minor: 800 },
  { data_mb: 5 * GB, validity_days: 30, base_wholesale_minor: 1200 },
  { data_mb: 10 * GB, validity_days: 30, base_wholesale_minor: 2000 },
  { data_mb: 20 * GB, validity_days: 30, base_wholesale_minor: 3400 },
  { data_mb: null, validity_days: 7, base_wholesale_minor: 2500 },
];

const REGIONAL_PLANS: readonly Plan[] = [
  { data_mb: 1 * GB, validity_days: 7, base_wholesale_minor: 350 },
  { data_mb: 5 * GB, validity_days: 30, base_wholesale_minor: 1200 },
  { data_mb: 10 * GB, validity_days: 30, base_wholesale_minor: 2000 },
  { data_mb: 20 * GB, validity_days: 30, base_wholesale_minor: 3400 },
];

const GLOBAL_PLANS: readonly Plan[] = [
  { data_mb: 1 * GB, validity_days: 7, base_wholesale_minor: 350 },
  { data_mb: 3 * GB, validity_days: 15, base_wholesale_minor: 800 },
  { data_mb: 5 * GB, validity_days: 30, base_wholesale_minor: 1200 },
  { data_mb: 10 * GB, validity_days: 30, base_wholesale_minor: 2000 },
];

/** Every alpha-2 code with its English (official short) name, sorted by code. */
export function defaultDestinations(): Destination[] {
  const names = countries.getNames("en", { select: "official" });
  return Object.keys(countries.getAlpha2Codes())
    .sort()
    .map((code) => {
      const name = names[code];
      if (!name) throw new Error(`i18n-iso-countries has no English name for ${code}`);
      return { destination_code: code, name };
    });
}

function tierPercent(code: string): number {
  if (EUROPE_CODES.includes(code)) return TIER_PERCENT.europe;
  if (ASIA_CODES.includes(code)) return TIER_PERCENT.asia;
  return TIER_PERCENT.rest_of_world;
}

function percentOf(amount_minor: number, percent: number): number {
  return Math.round((amount_minor * percent) / 100);
}

function sizeSlug(data_mb: number | null): string {
  return data_mb === null ? "unlimited" : `${data_mb / GB}gb`;
}

function sizeLabel(data_mb: number | null): string {
  return data_mb === null ? "Unlimited" : `${data_mb / GB} GB`;
}

function planPackage(
  slug: string,
  label: string,
  plan: Plan,
  percent: number,
  cover: { destination_codes: string[]; coverage: Coverage; region: string | null },
): CatalogPackage {
  const package_id = `${slug}-${sizeSlug(plan.data_mb)}-${plan.validity_days}d`;
  const wholesale_minor = percentOf(plan.base_wholesale_minor, percent);
  return {
    package_id,
    external_package_id: `CARRIER-${package_id.toUpperCase()}`,
    name: `${label} ${sizeLabel(plan.data_mb)} ${plan.validity_days} days`,
    destination_codes: cover.destination_codes,
    data_mb: plan.data_mb,
    validity_days: plan.validity_days,
    wholesale_minor,
    retail_minor: percentOf(wholesale_minor, RETAIL_MARKUP_PERCENT),
    coverage: cover.coverage,
    region: cover.region,
    networks: cover.destination_codes.flatMap((code) => coverNetworks(code, cover.coverage)),
    fair_use: plan.data_mb === null ? UNLIMITED_FAIR_USE : null,
    kyc_required:
      cover.coverage === "country" && cover.destination_codes.some((c) => KYC_COUNTRIES.includes(c)),
  };
}

function countryPackages(destination: Destination): CatalogPackage[] {
  const code = destination.destination_code;
  return COUNTRY_PLANS.map((plan) =>
    planPackage(code.toLowerCase(), destination.name, plan, tierPercent(code), {
      destination_codes: [code],
      coverage: "country",
      region: null,
    }),
  );
}

function regionalPackages(
  slug: string,
  label: string,
  codes: readonly string[],
  plans: readonly Plan[],
  percent: number,
  coverage: Coverage,
): CatalogPackage[] {
  const destination_codes = [...codes].sort();
  return plans.map((plan) =>
    planPackage(slug, label, plan, percent, { destination_codes, coverage, region: label }),
  );
}

/** The whole default catalog; amounts are minor units of whatever currency the deployment uses. */
export function defaultCatalog(): CatalogSet {
  const destinations = defaultDestinations();
  const known = new Set(destinations.map((d) => d.destination_code));
  for (const code of [...EUROPE_CODES, ...ASIA_CODES]) {
    // A region constant naming a code the country list lacks would seed a dangling reference.
    if (!known.has(code)) throw new Error(`region member ${code} is not an ISO 3166-1 alpha-2 code`);
    if (sandboxNetworks(code).length === 0) throw new Error(`region member ${code} has no sandbox networks`);
  }
  const europePercent = percentOf(TIER_PERCENT.europe, REGIONAL_PREMIUM_PERCENT);
  const asiaPercent = percentOf(TIER_PERCENT.asia, REGIONAL_PREMIUM_PERCENT);
  // A destination with no public mobile network (Antarctica, uninhabited islands) has no package:
  // a package names the networks of every country it covers.
  const served = destinations.filter((d) => sandboxNetworks(d.destination_code).length > 0);
  const packages = [
    ...served.flatMap(countryPackages),
    ...regionalPackages("europe", "Europe", EUROPE_CODES, REGIONAL_PLANS, europePercent, "regional"),
    ...regionalPackages("asia", "Asia", ASIA_CODES, REGIONAL_PLANS, asiaPercent, "regional"),
    ...regionalPackages(
      "global",
      "Global",
      served.map((d) => d.destination_code),
      GLOBAL_PLANS,
      GLOBAL_PERCENT,
      "global",
    ),
  ];
  return { destinations, packages };
}
