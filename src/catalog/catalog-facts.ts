// What a partner needs to know to sell a package beyond its size and price (contract, "Catalog
// additions"): the networks it runs on in each country it covers, the fair use of an unlimited
// package, and whether the traveller must prove their identity (eKYC). Kept apart from the row's
// other fields (catalog-rows.ts) so that the import's own changes and these stay separate.
import { Type } from "typebox";

/** The closed set of radio technologies a network may name, oldest first (the order we print). */
export const TECHNOLOGIES = ["2G", "3G", "4G", "5G"] as const;

export type Technology = (typeof TECHNOLOGIES)[number];
export type PackageNetwork = { country_code: string; name: string; technologies: Technology[] };
export type FairUse = { daily_data_mb: number; throttled_kbps: number };
export type PackageFacts = { networks: PackageNetwork[]; fair_use: FairUse | null; kyc_required: boolean };

/** A package with no stated networks, no fair use and no eKYC: what a supplier that states none gets. */
export const NO_FACTS: PackageFacts = { networks: [], fair_use: null, kyc_required: false };

// Limits of one package's facts. Operators per country: a country has a handful of networks.
export const MAX_NETWORKS_PER_COUNTRY = 16;
/** Every covered country (at most 300) with a few operators each. */
export const MAX_NETWORKS_PER_PACKAGE = 2_000;
const MAX_NETWORK_NAME_CHARS = 64;
const MAX_FAIR_USE_VALUE = 1_000_000;
const CONTROL_CHARACTERS = /\p{Cc}/u;
/** Problems named per kind in a rejected row's reason; the rest are counted, not listed. */
const MAX_NAMED = 5;

export const PackageNetworkSchema = Type.Object(
  {
    country_code: Type.String({ pattern: "^[A-Z]{2}$", description: "A country the package covers." }),
    name: Type.String({ description: "The mobile operator's public name, such as `Orange`." }),
    technologies: Type.Array(Type.Enum([...TECHNOLOGIES]), {
      description: "Radio technologies the package may use on this network, oldest first.",
    }),
  },
  { additionalProperties: false },
);

export const FairUseSchema = Type.Union(
  [
    Type.Object(
      {
        daily_data_mb: Type.Integer({ minimum: 1, description: "Full-speed data per day, in megabytes." }),
        throttled_kbps: Type.Integer({ minimum: 1, description: "Speed after that until the day ends." }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  {
    description:
      "The fair use policy of an unlimited package; null on a package with a data allowance (or when its supplier states none).",
  },
);

/** `4G/5G` (any case, `/`, `,` or spaces between) as the set's members in order; null if any is unknown. */
export function parseTechnologies(value: unknown): Technology[] | null {
  const parts = Array.isArray(value) ? value : typeof value === "string" ? value.split(/[\s/,]+/) : null;
  if (parts === null) return null;
  const given = parts.filter((part) => part !== "");
  const upper = given.map((part) => (typeof part === "string" ? part.toUpperCase() : ""));
  if (given.length === 0 || upper.some((part) => !(TECHNOLOGIES as readonly string[]).includes(part)))
    return null;
  return TECHNOLOGIES.filter((technology) => upper.includes(technology));
}

type RawNetwork = { country_code: unknown; name: unknown; technologies: unknown };

/** The CSV cell `FR:Orange:4G/5G; FR:SFR:4G/5G`, or a JSON array of objects. */
function rawNetworks(value: unknown, problems: string[]): RawNetwork[] {
  if (value === undefined || value === null || value === "") return [];
  if (Array.isArray(value)) {
    return value.map((entry) =>
      typeof entry === "object" && entry !== null
        ? (entry as RawNetwork)
        : { country_code: null, name: null, technologies: null },
    );
  }
  if (typeof value !== "string") {
    problems.push("networks must be an array of {country_code, name, technologies} or `CC:name:4G/5G; ...`");
    return [];
  }
  return value
    .split(";")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map((entry) => {
      const [country_code, name, technologies, ...rest] = entry.split(":").map((part) => part.trim());
      return rest.length > 0
        ? { country_code: null, name: null, technologies: null }
        : { country_code, name, technologies };
    });
}

function named(list: string[]): string {
  const more = list.length > MAX_NAMED ? ` and ${list.length - MAX_NAMED} more` : "";
  return `${list.slice(0, MAX_NAMED).join(", ")}${more}`;
}

function checkNetwork(raw: RawNetwork, covered: ReadonlySet<string>, bad: string[]): PackageNetwork | null {
  const code = typeof raw.country_code === "string" ? raw.country_code.trim().toUpperCase() : "";
  const name = typeof raw.name === "string" ? raw.name.trim() : "";
  const technologies = parseTechnologies(raw.technologies);
  const label = `${code || "?"}:${name.slice(0, 20) || "?"}`;
  if (!/^[A-Z]{2}$/.test(code)) bad.push(`${label} (country_code is not two letters)`);
  else if (!covered.has(code)) bad.push(`${label} (the package does not cover ${code})`);
  else if (name === "" || name.length > MAX_NETWORK_NAME_CHARS || CONTROL_CHARACTERS.test(name))
    bad.push(`${label} (name must be 1-${MAX_NETWORK_NAME_CHARS} printable characters)`);
  else if (technologies === null)
    bad.push(`${label} (technologies must be some of ${TECHNOLOGIES.join("/")})`);
  else return { country_code: code, name, technologies };
  return null;
}

/** The networks of a row: each well-formed, in a covered country, named once; every covered country named. */
export function checkNetworks(
  value: unknown,
  destination_codes: string[],
  problems: string[],
): PackageNetwork[] {
  const raw = rawNetworks(value, problems);
  if (raw.length === 0) return [];
  if (raw.length > MAX_NETWORKS_PER_PACKAGE) {
    problems.push(`networks lists more than ${MAX_NETWORKS_PER_PACKAGE} entries`);
    return [];
  }
  const covered = new Set(destination_codes);
  const bad: string[] = [];
  const seen = new Set<string>();
  const perCountry = new Map<string, number>();
  const networks: PackageNetwork[] = [];
  for (const entry of raw) {
    const network = checkNetwork(entry, covered, bad);
    if (network === null) continue;
    const key = `${network.country_code}:${network.name.toLowerCase()}`;
    if (seen.has(key)) bad.push(`${network.country_code}:${network.name} (named twice)`);
    seen.add(key);
    perCountry.set(network.country_code, (perCountry.get(network.country_code) ?? 0) + 1);
    networks.push(network);
  }
  if (bad.length > 0) problems.push(`networks: ${named(bad)}`);
  const crowded = [...perCountry]
    .filter(([, count]) => count > MAX_NETWORKS_PER_COUNTRY)
    .map(([code]) => code);
  if (crowded.length > 0)
    problems.push(`networks: more than ${MAX_NETWORKS_PER_COUNTRY} in ${named(crowded)}`);
  const missing = destination_codes.filter((code) => !perCountry.has(code));
  if (missing.length > 0)
    problems.push(`networks: every covered country needs at least one; none for ${named(missing)}`);
  // Stable: within a country, the operator's order (the main network first) is kept.
  return networks.sort((a, b) =>
    a.country_code < b.country_code ? -1 : a.country_code > b.country_code ? 1 : 0,
  );
}

function positive(value: unknown, field: string, problems: string[]): number | null {
  const raw = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim() : "";
  if (raw === "") return null;
  const parsed = /^\d{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(parsed >= 1 && parsed <= MAX_FAIR_USE_VALUE)) {
    problems.push(
      `${field} must be a whole number from 1 to ${MAX_FAIR_USE_VALUE}, got "${raw.slice(0, 20)}"`,
    );
    return null;
  }
  return parsed;
}

/** `fair_use: {daily_data_mb, throttled_kbps}` (JSON) or the columns fair_use_daily_data_mb, fair_use_throttled_kbps. */
export function checkFairUse(
  row: Record<string, unknown>,
  data_mb: number | null,
  problems: string[],
): FairUse | null {
  const nested =
    typeof row.fair_use === "object" && row.fair_use !== null
      ? (row.fair_use as Record<string, unknown>)
      : {};
  if (row.fair_use !== undefined && row.fair_use !== null && typeof row.fair_use !== "object")
    problems.push("fair_use must be an object {daily_data_mb, throttled_kbps} or null");
  const daily = positive(
    nested.daily_data_mb ?? row.fair_use_daily_data_mb,
    "fair_use daily_data_mb",
    problems,
  );
  const throttled = positive(
    nested.throttled_kbps ?? row.fair_use_throttled_kbps,
    "fair_use throttled_kbps",
    problems,
  );
  if (daily === null && throttled === null) return null;
  if (daily === null || throttled === null) {
    problems.push("fair_use needs both daily_data_mb and throttled_kbps");
    return null;
  }
  if (data_mb !== null) {
    problems.push("fair_use is only for unlimited packages (data_mb empty)");
    return null;
  }
  return { daily_data_mb: daily, throttled_kbps: throttled };
}

export function checkKycRequired(value: unknown, problems: string[]): boolean {
  if (value === undefined || value === null || value === "") return false;
  if (typeof value === "boolean") return value;
  const raw = String(value).trim().toLowerCase();
  if (["true", "yes", "1"].includes(raw)) return true;
  if (["false", "no", "0", ""].includes(raw)) return false;
  problems.push("kyc_required must be true or false");
  return false;
}

function networksKey(networks: readonly PackageNetwork[]): string {
  return networks.map((n) => `${n.country_code}:${n.name}:${n.technologies.join("/")}`).join(";");
}

/** Equal facts: compared field by field, since jsonb gives keys back in its own order. */
export function sameFacts(a: PackageFacts, b: PackageFacts): boolean {
  return (
    networksKey(a.networks) === networksKey(b.networks) &&
    a.fair_use?.daily_data_mb === b.fair_use?.daily_data_mb &&
    a.fair_use?.throttled_kbps === b.fair_use?.throttled_kbps &&
    a.kyc_required === b.kyc_required
  );
}

/** The columns as migration 0040 stores them. */
export type FactColumns = {
  networks: PackageNetwork[];
  fair_use_daily_data_mb: number | null;
  fair_use_throttled_kbps: number | null;
  kyc_required: boolean;
};

/** A package's facts from its columns, in the contract's field order (the wire order). */
export function factsOfColumns(row: FactColumns): PackageFacts {
  return {
    networks: row.networks.map((n) => ({
      country_code: n.country_code,
      name: n.name,
      technologies: n.technologies,
    })),
    fair_use:
      row.fair_use_daily_data_mb === null || row.fair_use_throttled_kbps === null
        ? null
        : { daily_data_mb: row.fair_use_daily_data_mb, throttled_kbps: row.fair_use_throttled_kbps },
    kyc_required: row.kyc_required,
  };
}
