// The fake's catalogue: a fixed tree of countries, regions and a global offer, each with one
// operator, its SIM packages and its top-up packages (ids ending in `-topup`). Shape of the tree:
// GET /v2/packages [SPEC browse-packages], [DOC:get-packages-11883036e0]; see README "Shapes".
// Fixed in code, not in the database: the catalogue is Airalo's, not a record of what we did.
// Prices are USD (Airalo: "Always USD", [DOC:attribute-descriptions-752392m0]); `price` is the
// recommended retail price and `net_price` what the partner pays ([DOC:faq-752238m0]).

export type Package = {
  id: string;
  type: "sim" | "topup";
  /** Retail (recommended) price, USD, and the wholesale price the partner pays, in cents. */
  price_cents: number;
  net_price_cents: number;
  /** MB; 0 for unlimited packages ([DOC:attribute-descriptions-752392m0]). */
  amount: number;
  day: number;
  is_unlimited: boolean;
  title: string;
  data: string;
  voice: number | null;
  text: number | null;
};

export type Operator = {
  id: number;
  title: string;
  type: "local" | "global";
  apn_value: string | null;
  countries: string[];
  packages: Package[];
};

export type Destination = {
  slug: string;
  /** ISO 3166 alpha-2; empty for regional and global entries ([SPEC browse-packages]). */
  country_code: string;
  title: string;
  operator: Operator;
};

type Plan = { mb: number; days: number; price: number; net: number };

/** 1 GB 7 days, 3 GB 30 days, 10 GB 30 days, scaled per destination. */
function plans(scale: number): Plan[] {
  return [
    { mb: 1024, days: 7, price: 4.5 * scale, net: 3.2 * scale },
    { mb: 3072, days: 30, price: 11 * scale, net: 8 * scale },
    { mb: 10240, days: 30, price: 26 * scale, net: 19 * scale },
  ];
}

const cents = (usd: number) => Math.round(usd * 100);
const gb = (mb: number) => `${mb / 1024} GB`;

function packagesOf(slug: string, list: Plan[], unlimited: boolean): Package[] {
  const out: Package[] = [];
  for (const plan of list) {
    for (const type of ["sim", "topup"] as const) {
      const base = `${slug}-${plan.days}days-${gb(plan.mb).replace(" ", "").toLowerCase()}`;
      out.push({
        id: type === "topup" ? `${base}-topup` : base,
        type,
        price_cents: cents(plan.price),
        net_price_cents: cents(plan.net),
        amount: plan.mb,
        day: plan.days,
        is_unlimited: false,
        title: `${gb(plan.mb)} - ${plan.days} Days`,
        data: gb(plan.mb),
        voice: null,
        text: null,
      });
    }
  }
  if (unlimited) {
    for (const type of ["sim", "topup"] as const) {
      const base = `${slug}-7days-unlimited`;
      out.push({
        id: type === "topup" ? `${base}-topup` : base,
        type,
        price_cents: 3900,
        net_price_cents: 2900,
        amount: 0,
        day: 7,
        is_unlimited: true,
        title: "Unlimited - 7 Days",
        data: "Unlimited",
        voice: null,
        text: null,
      });
    }
  }
  return out;
}

type Row = [slug: string, code: string, title: string, operator: string, scale: number, countries?: string[]];

const LOCAL: Row[] = [
  ["united-states", "US", "United States", "Change", 1],
  ["united-kingdom", "GB", "United Kingdom", "Uki Mobile", 1],
  ["france", "FR", "France", "Bonbon Mobile", 0.9],
  ["germany", "DE", "Germany", "Hallo Mobil", 1],
  ["spain", "ES", "Spain", "Toros Mobile", 0.9],
  ["italy", "IT", "Italy", "Mamma Mia", 0.9],
  ["greece", "GR", "Greece", "Meraki Mobile", 1],
  ["turkey", "TR", "Turkey", "Merhaba", 1.2],
  ["japan", "JP", "Japan", "Moshi Moshi", 1.3],
  ["thailand", "TH", "Thailand", "Dtac Happy", 0.8],
];

const GLOBAL: Row[] = [
  ["europe", "", "Europe", "Eurolink", 1.5, ["FR", "DE", "ES", "IT", "GR", "GB", "NL", "PT"]],
  ["asia", "", "Asia", "Asialink", 1.6, ["JP", "TH", "SG", "MY", "ID", "VN"]],
  ["world", "", "World", "Discover Global", 2.5, ["US", "GB", "FR", "DE", "JP", "TH", "TR", "AU", "BR"]],
];

function destination(row: Row, index: number, type: "local" | "global"): Destination {
  const [slug, code, title, operator, scale, countries] = row;
  const short = operator.toLowerCase().replaceAll(" ", "-");
  return {
    slug,
    country_code: code,
    title,
    operator: {
      id: 1 + index,
      title: operator,
      type,
      apn_value: type === "global" ? "globaldata" : null,
      countries: countries ?? [code],
      // Japan sells an unlimited package too: its `amount` is 0 and `data` "Unlimited".
      packages: packagesOf(short, plans(scale), code === "JP"),
    },
  };
}

export const DESTINATIONS: Destination[] = [
  ...LOCAL.map((row, index) => destination(row, index, "local")),
  ...GLOBAL.map((row, index) => destination(row, LOCAL.length + index, "global")),
];

const BY_ID = new Map<string, { pkg: Package; destination: Destination }>();
for (const entry of DESTINATIONS) {
  for (const pkg of entry.operator.packages) BY_ID.set(pkg.id, { pkg, destination: entry });
}

export function findPackage(id: string): { pkg: Package; destination: Destination } | null {
  return BY_ID.get(id) ?? null;
}

/** The top-ups an eSIM bought with `packageId` can take: its operator's `-topup` packages. */
export function topupsFor(packageId: string): Package[] {
  const found = findPackage(packageId);
  if (!found) return [];
  return found.destination.operator.packages.filter((pkg) => pkg.type === "topup");
}

/** "Uki Mobile-2 GB - 15 Days": the order answer's `package` ([SPEC place-order] example). */
export function packageName(found: { pkg: Package; destination: Destination }): string {
  return `${found.destination.operator.title}-${found.pkg.title}`;
}
