// The `purge_expired_carts` job: carts that expired without becoming an order are only a
// reservation that lapsed, and nothing reads them again. Deleting them a day after expiry keeps
// the table the size of recent activity; a cart with an order is kept, since the order names it.
// Which carts have an order is the orders domain's to say (carts sit below orders): it gives the
// condition, orders/cart-has-order.ts, and the server hands it to the job.
// Each purged cart leaves a tombstone in expired_carts (migration 0004), so its key still answers
// 410 cart_expired rather than 404; tombstones are deleted TOMBSTONE_DAYS after the purge.
import type { Task } from "graphile-worker";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Database } from "../db/schema.ts";

export const PURGE_EXPIRED_CARTS_TASK = "purge_expired_carts";
/** Hourly, at minute 30, apart from the idempotency key purge at minute 0. */
export const PURGE_EXPIRED_CARTS_CRONTAB = `30 * * * * ${PURGE_EXPIRED_CARTS_TASK}`;
/** Rows per statement, and statements per run: a backlog is worked off over several runs. */
const BATCH_SIZE = 5_000;
const MAX_BATCHES = 20;
/** A lapsed cart is kept this long after expiry, for support questions about a failed checkout. */
const KEEP_AFTER_EXPIRY = "1 day";
/** How long a purged cart's key still answers 410 cart_expired. */
const TOMBSTONE_DAYS = 90;

/** A SQL condition, true when the cart whose key is `cart_key` has become an order. */
export type CartHasOrder = (cart_key: RawBuilder<unknown>) => RawBuilder<boolean>;

export async function purgeExpiredCarts(
  db: Kysely<Database>,
  hasOrder: CartHasOrder,
  batch_size = BATCH_SIZE,
): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    // SKIP LOCKED: a cart being submitted right now is locked by its submit and is left alone.
    const result = await sql`
      with purged as (
        delete from carts where cart_key in (
          select c.cart_key from carts c
          where c.expires_at < now() - ${KEEP_AFTER_EXPIRY}::interval
            and not ${hasOrder(sql.ref("c.cart_key"))}
          limit ${batch_size}
          for update skip locked)
        returning cart_key, partner_id, expires_at)
      insert into expired_carts (cart_key, partner_id, expired_at)
      select cart_key, partner_id, expires_at from purged
      on conflict (cart_key) do nothing`.execute(db);
    const count = Number(result.numAffectedRows);
    deleted += count;
    if (count < batch_size) break;
  }
  await sql`
    delete from expired_carts where cart_key in (
      select cart_key from expired_carts where purged_at < now() - make_interval(days => ${TOMBSTONE_DAYS})
      limit ${batch_size * MAX_BATCHES})`.execute(db);
  return deleted;
}

export function purgeExpiredCartsTask(db: Kysely<Database>, hasOrder: CartHasOrder): Task {
  return async (_payload, helpers) => {
    helpers.logger.info(`purged ${await purgeExpiredCarts(db, hasOrder)} lapsed carts`);
  };
}
