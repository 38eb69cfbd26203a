// Partner use case: reserve one package in a cart (spec 4.2), at today's wholesale price.
import type { Kysely } from "kysely";
import { findActivePackage } from "../catalog/find-packages.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/schema.ts";
import { ApiError } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { type CartRow, insertCart } from "./carts.sql.ts";

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

export async function createCart(
  db: Kysely<Database>,
  config: Pick<Config, "cart_ttl_minutes" | "currency">,
  input: { partner_id: string; package_id: string; start_date: string | null },
): Promise<CartRow> {
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
      total_minor: pkg.wholesale_minor,
      currency: pkg.currency,
    },
    config.cart_ttl_minutes,
  );
}
