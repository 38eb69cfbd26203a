// The success shapes, built from the fake's rows and catalogue, each after its documented example
// (docs/suppliers/airalo.md §2-§6; README "Shapes"). Airalo types its fields loosely (quantity 1
// or "1", price a number on submit and "9.50" on list/get, validity 15 or "7"): kept so, on purpose,
// so the adapter learns to tolerate both.

import type { OrderRow, SimRow } from "./airalo.sql.ts";
import { airaloTime } from "./answers.ts";
import { DESTINATIONS, type Destination, findPackage, type Package, packageName } from "./catalog.ts";

const EUR_PER_USD = 0.92;
const GBP_PER_USD = 0.79;
const usd = (cents: number) => cents / 100;
const round2 = (value: number) => Math.round(value * 100) / 100;

function prices(pkg: Package) {
  const convert = (cents: number) => ({
    USD: usd(cents),
    EUR: round2(usd(cents) * EUR_PER_USD),
    GBP: round2(usd(cents) * GBP_PER_USD),
  });
  return { net_price: convert(pkg.net_price_cents), recommended_retail_price: convert(pkg.price_cents) };
}

/** One package of the tree [SPEC browse-packages]; also the top-up list's items (with `net_price`, `prices`). */
export function packageShape(pkg: Package) {
  return {
    id: pkg.id,
    type: pkg.type,
    price: usd(pkg.price_cents),
    net_price: usd(pkg.net_price_cents),
    amount: pkg.amount,
    day: pkg.day,
    is_unlimited: pkg.is_unlimited,
    title: pkg.title,
    data: pkg.data,
    short_info: "This eSIM doesn't come with a phone number.",
    voice: pkg.voice,
    text: pkg.text,
    prices: prices(pkg),
    qr_installation: "<p>Scan the QR code from your device's settings.</p>",
    manual_installation: "<p>Enter the SM-DP+ address and activation code in your device's settings.</p>",
    is_fair_usage_policy: false,
    fair_usage_policy: null,
  };
}

function operatorShape(entry: Destination, packages: Package[]) {
  const operator = entry.operator;
  return {
    id: operator.id,
    title: operator.title,
    type: operator.type,
    plan_type: "data",
    is_roaming: true,
    rechargeability: true,
    is_prepaid: true,
    esim_type: "Prepaid",
    apn_type: operator.apn_value ? "manual" : "automatic",
    apn_value: operator.apn_value,
    info: ["LTE Data-only eSIM."],
    activation_policy: "first-usage",
    is_kyc_verify: false,
    other_info: null,
    image: { width: 1035, height: 653, url: `https://cdn.airalo.test/operators/${operator.id}.png` },
    coverages: operator.countries.map((code) => ({
      name: code,
      code,
      networks: [{ name: "LTE", types: ["4G"] }],
    })),
    // [NODE] PackagesService.flatten() reads operators[].countries[].country_code.
    countries: operator.countries.map((country_code) => ({ country_code, title: country_code })),
    install_window_days: null,
    packages: packages.map(packageShape),
  };
}

export type PackageQuery = {
  type: "local" | "global" | null;
  country: string | null;
  include_topup: boolean;
};

/** The destinations a catalogue query selects, each with the packages it shows. */
export function selectDestinations(query: PackageQuery): { entry: Destination; packages: Package[] }[] {
  return DESTINATIONS.filter((entry) => query.type === null || entry.operator.type === query.type)
    .filter((entry) => query.country === null || entry.operator.countries.includes(query.country))
    .map((entry) => ({
      entry,
      packages: entry.operator.packages.filter((pkg) => pkg.type === "sim" || query.include_topup),
    }));
}

export function destinationShape(entry: Destination, packages: Package[]) {
  const cheapest = packages
    .filter((pkg) => pkg.type === "sim")
    .sort((a, b) => a.net_price_cents - b.net_price_cents)[0];
  return {
    slug: entry.slug,
    country_code: entry.country_code,
    title: entry.title,
    image: { width: 132, height: 99, url: `https://cdn.airalo.test/countries/${entry.slug}.png` },
    min_price: cheapest ? prices(cheapest) : null,
    operators: [operatorShape(entry, packages)],
  };
}

const INSTALLATION_GUIDES = { en: "https://www.airalo.com/help/getting-started-with-airalo" };

/** The order as POST /v2/orders answers it [SPEC place-order] ("Success" example): numbers are numbers. */
export function orderShape(order: OrderRow, sims: SimRow[] | null) {
  const found = findPackage(order.package_id);
  const shape: Record<string, unknown> = {
    id: Number(order.id),
    code: orderCode(order),
    currency: "USD",
    package_id: order.package_id,
    quantity: order.quantity,
    type: order.type,
    description: order.description,
    esim_type: "Prepaid",
    validity: found?.pkg.day ?? null,
    package: found ? packageName(found) : order.package_id,
    data: found?.pkg.data ?? null,
    price: usd(Number(order.price_cents)),
    net_price: usd(Number(order.net_price_cents)),
    pricing_model: "net_pricing",
    created_at: airaloTime(order.created_at),
    manual_installation: "<p>Enter the SM-DP+ address and activation code in your device's settings.</p>",
    qrcode_installation: "<p>Scan the QR code from your device's settings.</p>",
    installation_guides: INSTALLATION_GUIDES,
    text: found?.pkg.text ?? null,
    voice: found?.pkg.voice ?? null,
    brand_settings_name: order.brand_settings_name,
  };
  // Top-up answers have no `sims` array ([DOC:submit-top-up-order-11883026e0]).
  if (sims !== null) shape.sims = sims.map(simShape);
  return shape;
}

/** "20250415-583747": the order's day and number ([SPEC place-order] example). */
export function orderCode(order: OrderRow): string {
  const day = order.created_at.toISOString().slice(0, 10).replaceAll("-", "");
  return `${day}-${String(order.id).padStart(6, "0")}`;
}

export function simShape(sim: SimRow) {
  const qrcode = `LPA:1$${sim.lpa}$${sim.matching_id}`;
  return {
    id: Number(sim.id),
    created_at: airaloTime(sim.created_at),
    iccid: sim.iccid,
    lpa: sim.lpa,
    imsis: null,
    matching_id: sim.matching_id,
    qrcode,
    qrcode_url: `https://sandbox.airalo.test/qr?id=${sim.id}&signature=${sim.matching_id}`,
    airalo_code: null,
    apn_type: "automatic",
    apn_value: null,
    is_roaming: true,
    confirmation_code: null,
    direct_apple_installation_url: `https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=${qrcode}`,
  };
}

/** The order as GET /v2/orders and GET /v2/orders/{id} show it [SPEC manage-orders]: quantity a number, price and validity strings. */
export function listedOrderShape(order: OrderRow, sims: SimRow[], include: Set<string>) {
  const found = findPackage(order.package_id);
  const shape: Record<string, unknown> = {
    id: Number(order.id),
    created_at: airaloTime(order.created_at),
    code: orderCode(order),
    description: order.description,
    type: order.type,
    package_id: order.package_id,
    quantity: order.quantity,
    package: found ? packageName(found) : order.package_id,
    esim_type: "Prepaid",
    validity: String(found?.pkg.day ?? ""),
    price: usd(Number(order.price_cents)).toFixed(2),
    data: found?.pkg.data ?? null,
    currency: "USD",
    manual_installation: "<p>Enter the SM-DP+ address and activation code in your device's settings.</p>",
    qrcode_installation: "<p>Scan the QR code from your device's settings.</p>",
    installation_guides: INSTALLATION_GUIDES,
  };
  if (include.has("sims")) shape.sims = sims.map(simShape);
  if (include.has("user")) shape.user = USER;
  if (include.has("status")) shape.status = statusShape(order.status);
  return shape;
}

export const USER = {
  id: 120,
  name: "Sandbox Partner",
  email: "partner@airalo.test",
  company: "Sandbox Partner Ltd",
};

const STATUS_NAMES: Record<OrderRow["status"], string> = {
  completed: "Completed",
  failed: "Failed",
  refunded: "Refunded",
  partially_refunded: "Partially Refunded",
};

export function statusShape(status: OrderRow["status"]) {
  return { name: STATUS_NAMES[status], slug: status };
}
