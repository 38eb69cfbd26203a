// SQL of carts: a reservation of a package (1 to 50 eSIMs of it) at the price of the moment, for a limited time.
import { type Selectable, sql, type Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";

const CART_COLUMNS = sql.raw(`cart_key, partner_id, package_id, external_package_id, data_mb, validity_days,
  start_date, total_minor, currency, created_at, expires_at, supplier, quantity`);

/** A cart as read from the database. It keeps the package's terms when it was made (migration
 * 0002): what the carrier is asked for, whatever the catalog says later. */
export type CartRow = Selectable<Database["carts"]>;

/** A cart with what its submit must know, judged by the database clock. */
export type LockedCart = CartRow & { expired: boolean; start_date_passed: boolean | null };

export async function insertCart(
  db: Executor,
  cart: Omit<CartRow, "created_at" | "expires_at">,
  ttl_minutes: number,
): Promise<CartRow> {
  const result = await sql<CartRow>`
    insert into carts (cart_key, partner_id, package_id, external_package_id, data_mb, validity_days, start_date,
                       total_minor, currency, expires_at, supplier, quantity)
    values (${cart.cart_key}, ${cart.partner_id}, ${cart.package_id}, ${cart.external_package_id}, ${cart.data_mb},
            ${cart.validity_days}, ${cart.start_date}::date, ${cart.total_minor}, ${cart.currency},
            now() + make_interval(mins => ${ttl_minutes}), ${cart.supplier}, ${cart.quantity})
    returning ${CART_COLUMNS}`.execute(db);
  return result.rows[0]!;
}

/**
 * The partner's cart, row-locked until the transaction ends. "Today" is the UTC day, written out
 * rather than left to the session's zone (current_date follows TimeZone).
 */
export async function selectCartForUpdate(
  trx: Transaction<Database>,
  cart_key: string,
  partner_id: string,
): Promise<LockedCart | null> {
  const result = await sql<LockedCart>`
    select ${CART_COLUMNS}, expires_at <= now() as expired,
           start_date < (now() at time zone 'UTC')::date as start_date_passed
    from carts where cart_key = ${cart_key} and partner_id = ${partner_id}
    for update`.execute(trx);
  return result.rows[0] ?? null;
}

/** Whether this partner's cart was purged after it expired (a tombstone of purge_expired_carts). */
export async function wasPurgedAfterExpiry(
  db: Executor,
  cart_key: string,
  partner_id: string,
): Promise<boolean> {
  const result = await sql<{ found: boolean }>`
    select exists (
      select 1 from expired_carts where cart_key = ${cart_key} and partner_id = ${partner_id}) as found`.execute(
    db,
  );
  return result.rows[0]!.found;
}
