// Partner use case: reserve a package in a cart (spec 4.2), at today's wholesale price: one eSIM,
// or a group of up to MAX_QUANTITY of them (issue 34), all bought by one submit.
import type { Kysely } from "kysely";
import { findActivePackage } from "../catalog/find-packages.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/schema.ts";
import { MAX_AMOUNT_MINOR } from "../ledger/accounts.ts";
import { ApiError } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { type CartRow, insertCart } from "./carts.sql.ts";

/** The most eSIMs one cart (one order) holds: Airalo's own limit per order. */
export const MAX_QUANTITY = 50;

/** How far ahead a plan may be scheduled to start. */
export const MAX_START_DAYS_AHEAD = 180;

function todayUtc(now: Date): string {
  return now.toISOString().slice(0, 10);
}

function addDays(date: string, days: number): string {
  const next = new Date(`${date}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + days);
  return next.toISOString().slice(0, 10);
}

/** `start_date` must be a real calendar day, from today (UTC) to MAX_START_DAYS_AHEAD days ahead. */
export function checkStartDate(start_date: string, now = new Date()): void {
  const parsed = new Date(`${start_date}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== start_date) {
    throw new ApiError("invalid_start_date", `${start_date} is not a calendar date (YYYY-MM-DD).`);
  }
  const today = todayUtc(now);
  const latest = addDays(today, MAX_START_DAYS_AHEAD);
  if (start_date < today || start_date > latest) {
    throw new ApiError(
      "invalid_start_date",
      `start_date must be from ${today} to ${latest} (UTC), got ${start_date}.`,
    );
  }
}

/** quantity x price, within what one transfer may move. */
function groupTotal(price_minor: number, quantity: number): number {
  const total = price_minor * quantity;
  if (!Number.isSafeInteger(total) || total > MAX_AMOUNT_MINOR) {
    const message = `${quantity} eSIMs of this package cost more than one order may`;
    throw new ApiError("invalid_request", `${message}.`, {
      errors: [{ field: "quantity", code: "out_of_range", message }],
    });
  }
  return total;
}

export async function createCart(
  db: Kysely<Database>,
  config: Pick<Config, "cart_ttl_minutes" | "currency">,
  input: { partner_id: string; package_id: string; start_date: string | null; quantity: number },
): Promise<CartRow> {
  // The route's schema holds it to 1..MAX_QUANTITY: an integer here, asserted for other callers.
  if (!Number.isSafeInteger(input.quantity) || input.quantity < 1 || input.quantity > MAX_QUANTITY) {
    const message = `must be an integer from 1 to ${MAX_QUANTITY}`;
    throw new ApiError("invalid_request", `quantity ${message}.`, {
      errors: [{ field: "quantity", code: "out_of_range", message }],
    });
  }
  if (input.start_date !== null) checkStartDate(input.start_date);
  // The partner's price now, copied into the cart: a later pricing change does not touch it.
  const pkg = await findActivePackage(db, input.partner_id, input.package_id);
  if (!pkg) throw new ApiError("package_not_found", `No package ${input.package_id}.`);
  return insertCart(
    db,
    {
      cart_key: newId("cart"),
      partner_id: input.partner_id,
      package_id: pkg.package_id,
      external_package_id: pkg.external_package_id,
      supplier: pkg.supplier,
      data_mb: pkg.data_mb,
      validity_days: pkg.validity_days,
      start_date: input.start_date,
      total_minor: groupTotal(pkg.wholesale_minor, input.quantity),
      currency: pkg.currency,
      quantity: input.quantity,
    },
    config.cart_ttl_minutes,
  );
}
