// The sandbox catalogue: a few dozen bundles across single countries, regions and the world, with
// net prices in the organisation's currency. Shapes from [DOC:api/v2_4/operations/cataloguebundlename]
// (field meanings from the v2.1 page: dataAmount in MB, price in the organisation currency);
// names follow the documented pattern `esim_1GB_7D_NL_V2` [DOC:quick_start/]. `groups` and
// `billingType` come from a third party's OpenAPI only (UNCONFIRMED). The region codes in the
// regional and global names (REUP, RASIA, RGLOBAL) are the fake's own.
import { CATALOGUE_PAGE } from "./unconfirmed.ts";

export type Country = { name: string; region: string; iso: string };

export type Bundle = {
  name: string;
  description: string;
  groups: string[];
  countries: Country[];
  dataAmount: number;
  duration: number;
  speed: string[];
  autostart: boolean;
  unlimited: boolean;
  roamingEnabled: Country[];
  price: number;
  billingType: string;
};

const COUNTRIES: Record<string, Country> = {
  GB: { name: "United Kingdom", region: "Europe", iso: "GB" },
  FR: { name: "France", region: "Europe", iso: "FR" },
  DE: { name: "Germany", region: "Europe", iso: "DE" },
  ES: { name: "Spain", region: "Europe", iso: "ES" },
  IT: { name: "Italy", region: "Europe", iso: "IT" },
  NL: { name: "Netherlands", region: "Europe", iso: "NL" },
  US: { name: "United States", region: "North America", iso: "US" },
  JP: { name: "Japan", region: "Asia", iso: "JP" },
  TH: { name: "Thailand", region: "Asia", iso: "TH" },
  AE: { name: "United Arab Emirates", region: "Middle East", iso: "AE" },
  AU: { name: "Australia", region: "Oceania", iso: "AU" },
  BR: { name: "Brazil", region: "South America", iso: "BR" },
};

/** [data GB, days, price in cents] for each single-country bundle; prices vary by country below. */
const COUNTRY_SIZES: [number, number, number][] = [
  [1, 7, 199],
  [3, 30, 449],
  [5, 30, 699],
  [10, 30, 1199],
];
const COUNTRY_PRICE_FACTOR: Record<string, number> = {
  GB: 1,
  FR: 1,
  DE: 1,
  ES: 1,
  IT: 1,
  NL: 1,
  US: 1.4,
  JP: 1.6,
  TH: 1.1,
  AE: 2.2,
  AU: 1.8,
  BR: 2,
};

const EUROPE = ["GB", "FR", "DE", "ES", "IT", "NL"];
const ASIA = ["JP", "TH"];
const REGIONS: { code: string; label: string; isos: string[]; sizes: [number, number, number][] }[] = [
  {
    code: "REUP",
    label: "Europe+",
    isos: EUROPE,
    sizes: [
      [5, 30, 999],
      [20, 30, 2999],
    ],
  },
  { code: "RASIA", label: "Asia", isos: ASIA, sizes: [[5, 30, 1499]] },
  {
    code: "RGLOBAL",
    label: "Global",
    isos: Object.keys(COUNTRIES),
    sizes: [
      [3, 30, 2499],
      [10, 30, 5999],
    ],
  },
];

function bundle(
  code: string,
  label: string,
  isos: string[],
  [gb, days, price_cents]: [number, number, number],
) {
  const countries = isos.map((iso) => COUNTRIES[iso]!);
  return {
    name: `esim_${gb}GB_${days}D_${code}_V2`,
    description: `eSIM, ${gb}GB, ${days} Days, ${label}, V2`,
    groups: ["Standard Fixed"],
    countries,
    dataAmount: gb * 1000,
    duration: days,
    speed: ["4G", "5G"],
    autostart: true,
    unlimited: false,
    roamingEnabled: isos.length > 1 ? countries : [],
    price: price_cents / 100,
    billingType: "FixedCost",
  } satisfies Bundle;
}

export const CATALOGUE: readonly Bundle[] = [
  ...Object.keys(COUNTRIES).flatMap((iso) =>
    COUNTRY_SIZES.map(([gb, days, cents]) =>
      bundle(iso, COUNTRIES[iso]!.name, [iso], [gb, days, Math.round(cents * COUNTRY_PRICE_FACTOR[iso]!)]),
    ),
  ),
  ...REGIONS.flatMap((region) =>
    region.sizes.map((size) => bundle(region.code, region.label, region.isos, size)),
  ),
];

const BY_NAME = new Map(CATALOGUE.map((entry) => [entry.name, entry]));

/** Bundle names are case-sensitive [DOC:quick_start/]: no folding. */
export function findBundle(name: string): Bundle | undefined {
  return BY_NAME.get(name);
}

export function priceCents(entry: Bundle): number {
  return Math.round(entry.price * 100);
}

export type CatalogueQuery = {
  page?: number;
  perPage?: number;
  countries?: string;
  region?: string;
  description?: string;
  group?: string;
};

/** GET /catalogue: filters and the {bundles, pageCount, rows} wrapper from [3P-OAS] (UNCONFIRMED). */
export function listCatalogue(query: CatalogueQuery) {
  const isos = query.countries
    ? query.countries
        .toUpperCase()
        .split(",")
        .map((iso) => iso.trim())
    : null;
  const region = query.region?.toLowerCase();
  const description = query.description?.toLowerCase().replaceAll("*", "");
  const matching = CATALOGUE.filter(
    (entry) =>
      (!isos || entry.countries.some((country) => isos.includes(country.iso))) &&
      (!region || entry.countries.some((country) => country.region.toLowerCase() === region)) &&
      (!description || entry.description.toLowerCase().includes(description)) &&
      (!query.group || entry.groups.includes(query.group)),
  );
  const perPage = Math.min(query.perPage ?? CATALOGUE_PAGE.default, CATALOGUE_PAGE.max);
  const page = query.page ?? 1;
  return {
    bundles: matching.slice((page - 1) * perPage, page * perPage),
    pageCount: Math.max(1, Math.ceil(matching.length / perPage)),
    rows: matching.length,
  };
}
