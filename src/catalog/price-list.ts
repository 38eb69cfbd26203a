// A partner's prices (contract: "Prices per partner"): its override for a package, else the list
// price less its discount, rounded half up to the minor unit. Partners with identical pricing share
// one PriceList key, so the discovery cache holds one entry per distinct price list, not per partner.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";

export type PriceList = {
  /** "list" for list prices; otherwise a digest of the discount and the overrides. */
  key: string;
  discount_percent: number;
  overrides: ReadonlyMap<string, number>;
};

export const LIST_PRICES: PriceList = { key: "list", discount_percent: 0, overrides: new Map() };

export function priceList(discount_percent: number, overrides: ReadonlyMap<string, number>): PriceList {
  assert.ok(Number.isInteger(discount_percent) && discount_percent >= 0 && discount_percent <= 90);
  if (discount_percent === 0 && overrides.size === 0) return LIST_PRICES;
  const canonical = JSON.stringify([discount_percent, [...overrides].sort(([a], [b]) => (a < b ? -1 : 1))]);
  const key = createHash("sha256").update(canonical).digest("base64url").slice(0, 22);
  return { key, discount_percent, overrides };
}

/**
 * What the partner pays for a package listed at `list_minor`. Integer arithmetic only: half up is
 * floor((list * (100 - discount) + 50) / 100), exact for the amounts we allow (< 2^53 / 100). Never
 * below one minor unit: a sale for nothing is not a price.
 */
export function priceOf(prices: PriceList, package_id: string, list_minor: number): number {
  return partnerPrice(prices.discount_percent, prices.overrides.get(package_id) ?? null, list_minor);
}

/**
 * The same price from the two figures a price list holds for one package: its discount and its
 * override of this package (null when it has none), as a statement reads them with the package.
 */
export function partnerPrice(
  discount_percent: number,
  override_minor: number | null,
  list_minor: number,
): number {
  // As priceList checks a whole list: a figure read back from the database is checked again.
  assert.ok(Number.isInteger(discount_percent) && discount_percent >= 0 && discount_percent <= 90);
  if (override_minor !== null) return override_minor;
  if (discount_percent === 0) return list_minor;
  return Math.max(1, Math.floor((list_minor * (100 - discount_percent) + 50) / 100));
}
