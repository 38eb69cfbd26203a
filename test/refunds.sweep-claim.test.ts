// The refund sweep's claim (src/refunds/refunds.sql.ts claimDueRefunds): due intents, oldest
// first, in the order the sweep drives them, each leased for its own turn (n x the lease for the
// n-th), so a sweep that dies gives the first back after one lease, not after a whole round; and
// each turn starts only on a lease the sweep still holds (renewLease).
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { claimDueRefunds, renewLease } from "../src/refunds/refunds.sql.ts";
import { newId } from "../src/shared/ids.ts";
import { createTestDatabase } from "./support/db.ts";

const database = await createTestDatabase({ catalog: true });
const db = createKysely<Database>(database.pool);
const partner_id = newId("partner");
await sql`insert into partners (partner_id, name) values (${partner_id}, 'Refunds')`.execute(db);

/** A completed (top-up) order with a refund under way, due since `due_s_ago` seconds (null: never leased). */
async function refunding(due_s_ago: number | null): Promise<string> {
  const order_id = newId("order");
  await sql`
    insert into orders (order_id, partner_id, type, status, cart_key, package_id, external_package_id, data_mb,
                        validity_days, total_minor, currency, email, phone, first_name, last_name, iccid, resolved_at)
    values (${order_id}, ${partner_id}, 'topup', 'completed', null, 'fr-1gb-7d', 'FR_1GB_7D', 1024,
            7, 350, 'USD', 'ana@example.com', '+14155550123', 'Ana', 'Lima', '8900000000000000011', now())`.execute(
    db,
  );
  await sql`
    insert into order_refunds (order_id, partner_id, state, lease_until)
    values (${order_id}, ${partner_id}, 'refunding',
            ${due_s_ago === null ? null : sql`now() - make_interval(secs => ${due_s_ago})`})`.execute(db);
  return order_id;
}

test("the sweep claims due refunds oldest first, each leased for its own turn; a live lease is skipped", async () => {
  const second = await refunding(30);
  const first = await refunding(null);
  const third = await refunding(10);
  const leased = await refunding(null);
  await sql`update order_refunds set lease_until = now() + interval '1 minute' where order_id = ${leased}`.execute(
    db,
  );

  // A lease of a fraction of a second, as CARRIER_TIMEOUT_MS makes them.
  const claimed = await claimDueRefunds(db, 10, 20_500, null);
  assert.deepEqual(
    claimed.map((lease) => lease.order_id),
    [first, second, third],
    "never leased first, then the longest due; the one leased by someone else is left alone",
  );
  assert.equal(new Set(claimed.map((lease) => lease.lease_token)).size, 1, "one token for the round");
  const leases = await sql<{ order_id: string; seconds: number }>`
    select order_id, extract(epoch from lease_until - now())::float8 as seconds
    from order_refunds where order_id = any(${[first, second, third]}::text[])`.execute(db);
  const seconds = new Map(leases.rows.map((row) => [row.order_id, row.seconds]));
  for (const [n, order_id] of [first, second, third].entries()) {
    const expected = 20.5 * (n + 1);
    const got = seconds.get(order_id)!;
    assert.ok(
      Math.abs(got - expected) < 5,
      `position ${n + 1}: leased for ${got} s, expected about ${expected}`,
    );
  }
  assert.deepEqual(await claimDueRefunds(db, 10, 20_500, null), [], "all leased now");
});

test("the claim takes the oldest due first within its limit and skips a row another transaction holds", async () => {
  await sql`update order_refunds set state = 'refunded', refunded_at = now() where state = 'refunding'`.execute(
    db,
  );
  const oldest = await refunding(60);
  const older = await refunding(40);
  const busy = await refunding(50);
  const newest = await refunding(20);
  const holder = await database.pool.connect();
  try {
    await holder.query("begin");
    await holder.query("select 1 from order_refunds where order_id = $1 for update", [busy]);
    const claimed = await claimDueRefunds(db, 2, 10_000, null);
    assert.deepEqual(
      claimed.map((lease) => lease.order_id),
      [oldest, older],
      "the row locked elsewhere is skipped, not waited for; the limit keeps the two oldest",
    );
    assert.deepEqual(
      (await claimDueRefunds(db, 10, 10_000, null)).map((lease) => lease.order_id),
      [newest],
    );
  } finally {
    await holder.query("rollback");
    holder.release();
  }
});

test("a turn renews only a lease still held: not one that ran out, nor another holder's", async () => {
  await sql`update order_refunds set state = 'refunded', refunded_at = now() where state = 'refunding'`.execute(
    db,
  );
  const order_id = await refunding(5);
  const [lease] = await claimDueRefunds(db, 1, 10_000, null);
  assert.ok(lease && lease.order_id === order_id);
  assert.equal(await renewLease(db, lease, 30_000), true);
  const until = await sql<{ seconds: number }>`
    select extract(epoch from lease_until - now())::float8 as seconds from order_refunds where order_id = ${order_id}`.execute(
    db,
  );
  assert.ok(Math.abs(until.rows[0]!.seconds - 30) < 5, "renewed for a whole lease from now");
  assert.equal(await renewLease(db, { ...lease, lease_token: "another" }, 30_000), false, "another holder's");
  await sql`update order_refunds set lease_until = now() - interval '1 second' where order_id = ${order_id}`.execute(
    db,
  );
  assert.equal(await renewLease(db, lease, 30_000), false, "ran out: someone else may have it");
});
