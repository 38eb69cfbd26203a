// The resolver sweep: a pending order is its own outbox. A round claims due pending orders whose
// lease expired (FOR UPDATE SKIP LOCKED), leases each to itself, pushes its next look back, and
// drives it. End to end (a carrier down, then up) it is in orders.submit.test.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { resolveDueOrders } from "../src/orders/resolve-pending-orders.ts";
import { newId } from "../src/shared/ids.ts";
import { orderFinishers } from "../src/topups/order-finishers.ts";
import { createTestApp } from "./support/app.ts";

// The carrier is the real adapter pointed at a closed port: every call is "unavailable".
const app = await createTestApp({ resolve_after_ms: 60_000, carrier_timeout_ms: 1_000 });
const finishers = orderFinishers(app.ctx.config);
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

async function pendingOrder(
  partner_id: string,
  due: "due" | "not due",
  lease: "expired" | "held",
): Promise<string> {
  const order_id = newId("order");
  await sql`
    insert into orders (order_id, partner_id, type, status, package_id, external_package_id, data_mb, validity_days,
                        total_minor, currency, email, phone, first_name, last_name, iccid, topup_iccid, lease_until,
                        next_resolve_at)
    values (${order_id}, ${partner_id}, 'topup', 'pending', 'fr-1gb-7d', 'CARRIER-FR-1GB-7D', 1024, 7, 350, 'USD',
            'a@example.com', '+14155550123', 'A', 'B', '8901260000000000001', '8901260000000000001',
            ${lease === "expired" ? sql`now() - interval '1 second'` : sql`now() + interval '1 minute'`},
            ${due === "due" ? sql`now() - interval '1 second'` : sql`now() + interval '1 minute'`})`.execute(
    app.db,
  );
  // Listed as the service's insert lists it (migration 0046): the resolver reads the list.
  await sql`insert into pending_orders (order_id, created_at) values (${order_id}, now())`.execute(app.db);
  return order_id;
}

async function resolverState(order_id: string) {
  const result = await sql<{ status: string; resolve_attempts: number; next_in_s: number; leased: boolean }>`
    select status, resolve_attempts, extract(epoch from next_resolve_at - now())::float8 as next_in_s,
           coalesce(lease_until > now(), false) as leased
    from orders where order_id = ${order_id}`.execute(app.db);
  return result.rows[0]!;
}

test("a round claims only due orders nobody drives, each by one of two sweeps at once, and backs off", async () => {
  const partner = await app.createPartner();
  const abandoned = await pendingOrder(partner.partner_id, "due", "expired");
  const young = await pendingOrder(partner.partner_id, "not due", "expired");
  const driven = await pendingOrder(partner.partner_id, "due", "held");

  // Two processes' rounds at once: SKIP LOCKED and the lease give the order to one of them.
  const claimed = await Promise.all([
    resolveDueOrders(app.ctx, finishers, 10, quiet),
    resolveDueOrders(app.ctx, finishers, 10, quiet),
  ]);
  assert.equal(claimed[0] + claimed[1], 1, `claimed ${claimed.join(" + ")}`);

  const after = await resolverState(abandoned);
  assert.equal(after.status, "pending", "the carrier never answered: nothing is guessed");
  assert.equal(after.resolve_attempts, 1);
  assert.ok(after.next_in_s > 1, `the next look is backed off (${after.next_in_s} s)`);
  assert.equal(after.leased, false, "an unknown outcome hands the lease back for a client's retry");
  assert.equal((await resolverState(young)).resolve_attempts, 0);
  assert.equal((await resolverState(driven)).resolve_attempts, 0);

  assert.equal(await resolveDueOrders(app.ctx, finishers, 10, quiet), 0, "backed off: not due again yet");
});

test("the backoff doubles with each look and stops growing at five minutes", async () => {
  const partner = await app.createPartner();
  const order_id = await pendingOrder(partner.partner_id, "due", "expired");
  const waits: number[] = [];
  for (let look = 0; look < 3; look++) {
    await sql`update orders set next_resolve_at = now() - interval '1 second' where order_id = ${order_id}`.execute(
      app.db,
    );
    assert.equal(await resolveDueOrders(app.ctx, finishers, 10, quiet), 1);
    waits.push(Math.round((await resolverState(order_id)).next_in_s));
  }
  assert.deepEqual(waits, [2, 4, 8]);
  await sql`update orders set resolve_attempts = 40, next_resolve_at = now() - interval '1 second'
            where order_id = ${order_id}`.execute(app.db);
  await resolveDueOrders(app.ctx, finishers, 10, quiet);
  assert.equal(Math.round((await resolverState(order_id)).next_in_s), 300);
});
