// Leases name their holder's heartbeat row (shared/liveness.ts, migration 0021). A claim takes a
// lease that has not run out only when its holder has no heartbeat within the liveness window, two
// claimers at once never both win, and a holder that may have been taken over (its own heartbeat
// late, or a stale claim no longer its own) calls no carrier: never two drivers calling at once. A
// refund's driver checks its heartbeat the same way. The end-to-end takeover after a
// SIGKILL, with its times, is orders.takeover.processes.test.ts.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { sql } from "kysely";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { driveIfAbandoned, driveOrder } from "../src/orders/drive-order.ts";
import type { OrderRow } from "../src/orders/order.ts";
import { driveRefund } from "../src/refunds/drive-refund.ts";
import { newId } from "../src/shared/ids.ts";
import { LIVE_WITHIN_MS } from "../src/shared/liveness.ts";
import { orderFinishers } from "../src/topups/order-finishers.ts";
import { createTestApp } from "./support/app.ts";

// The carrier: the real adapter, at an HTTP server that notes each call's reference and answers
// 503 (the carrier down: an unknown outcome, after which the driver gives its lease up).
const calls: string[] = [];
const carrier_down = http.createServer((request, response) => {
  let body = "";
  request.on("data", (chunk) => {
    body += chunk;
  });
  request.on("end", () => {
    calls.push(JSON.parse(body).reference);
    response.writeHead(503, { "content-type": "application/json" }).end('{"error":"unavailable"}');
  });
});
await new Promise<void>((resolve) => carrier_down.listen(0, "127.0.0.1", resolve));
after(() => carrier_down.close());
const { port } = carrier_down.address() as AddressInfo;
const app = await createTestApp(
  {},
  { carrier: new HttpCarrier({ base_url: `http://127.0.0.1:${port}`, api_key: "k", timeout_ms: 1_000 }) },
);
const partner = await app.createPartner();
// The orders below are top-ups (an order of a new eSIM needs its cart): finished as the resolver would.
const FINISH = orderFinishers(app.ctx.config).topup;
const callsFor = (order_id: string) => calls.filter((reference) => reference === order_id).length;

async function beat(process_id: string, seen_ago_ms: number): Promise<void> {
  await sql`
    insert into api_processes (process_id, seen_at) values (${process_id}, now() - make_interval(secs => ${seen_ago_ms / 1000}))
    on conflict (process_id) do update set seen_at = excluded.seen_at`.execute(app.db);
}

/** A pending order leased for another minute to `holder` (null: a holder without a heartbeat). */
async function leasedOrder(holder: string | null): Promise<OrderRow> {
  const order_id = newId("order");
  const result = await sql<OrderRow>`
    insert into orders (order_id, partner_id, type, status, package_id, external_package_id, data_mb, validity_days,
                        total_minor, currency, email, phone, first_name, last_name, iccid, lease_until, lease_token,
                        lease_holder, next_resolve_at)
    values (${order_id}, ${partner.partner_id}, 'topup', 'pending', 'fr-1gb-7d', 'CARRIER-FR-1GB-7D', 1024, 7, 350,
            'USD', 'a@example.com', '+14155550123', 'A', 'B', '8901260000000000001', now() + interval '1 minute', ${`token-${order_id}`},
            ${holder}, now() + interval '1 hour')
    returning *`.execute(app.db);
  // Listed as the service's insert lists it (migration 0046): the resolver reads the list.
  await sql`insert into pending_orders (order_id, created_at) values (${order_id}, now())`.execute(app.db);
  return result.rows[0]!;
}

async function lease(order_id: string) {
  const result = await sql<{ lease_token: string | null; lease_holder: string | null }>`
    select lease_token, lease_holder from orders where order_id = ${order_id}`.execute(app.db);
  return result.rows[0]!;
}

const alive = (process_id: string, fresh = true) => ({
  ...app.ctx,
  liveness: { process_id, fresh: () => fresh },
});

test("a lease whose holder stopped beating is taken before it runs out; a live or unnamed holder's is not", async () => {
  await beat("proc-dead", LIVE_WITHIN_MS + 1_000);
  await beat("proc-live", 0);
  await beat("proc-taker", 0);
  const of_dead = await leasedOrder("proc-dead");
  const of_forgotten = await leasedOrder("proc-never-beat");
  const of_live = await leasedOrder("proc-live");
  const of_cli = await leasedOrder(null);
  const taker = alive("proc-taker");

  for (const order of [of_dead, of_forgotten]) {
    const driven = await driveIfAbandoned(taker, order.order_id, FINISH);
    assert.ok(driven, `${order.lease_holder}'s order is taken over`);
    assert.equal(callsFor(order.order_id), 1, "and driven: the carrier asked once");
    // The carrier answered nothing, so the new holder gave the lease up.
    assert.deepEqual(await lease(order.order_id), { lease_token: null, lease_holder: null });
  }
  for (const order of [of_live, of_cli]) {
    assert.equal(
      await driveIfAbandoned(taker, order.order_id, FINISH),
      null,
      `${order.lease_holder} keeps it`,
    );
    assert.deepEqual(await lease(order.order_id), {
      lease_token: order.lease_token,
      lease_holder: order.lease_holder,
    });
  }
});

test("two processes claiming a dead holder's order at once: exactly one takes it", async () => {
  await beat("proc-crashed", LIVE_WITHIN_MS + 1_000);
  const takers = Array.from({ length: 6 }, (_, i) => `proc-claimer-${i}`);
  for (const taker of takers) await beat(taker, 0);
  for (let round = 0; round < 5; round++) {
    const order = await leasedOrder("proc-crashed");
    // Not fresh: each winner keeps the lease it took (it calls nothing), so the count is the claims.
    const driven = await Promise.all(
      takers.map((taker) => driveIfAbandoned(alive(taker, false), order.order_id, FINISH)),
    );
    assert.equal(driven.filter((d) => d !== null).length, 1, "one claim wins");
    assert.equal(callsFor(order.order_id), 0, "the winner, not fresh, called nothing");
    const now = await lease(order.order_id);
    assert.ok(takers.includes(now.lease_holder!), `held by a claimer (${now.lease_holder})`);
  }
});

test("a holder whose own heartbeat is late calls no carrier and keeps nothing it could race", async () => {
  await beat("proc-stalled", 0);
  const order = await leasedOrder("proc-stalled");
  const driven = await driveOrder(alive("proc-stalled", false), order, FINISH, performance.now());
  assert.equal(driven.status, "pending");
  assert.equal(
    (await lease(order.order_id)).lease_token,
    order.lease_token,
    "no call: the lease is as it was",
  );
});

test("a stale claim is renewed before the call; one taken over meanwhile calls no carrier", async () => {
  await beat("proc-slow", 0);
  const long_ago = performance.now() - 10_000;
  const still_mine = await leasedOrder("proc-slow");
  await driveOrder(alive("proc-slow"), still_mine, FINISH, long_ago);
  assert.equal(callsFor(still_mine.order_id), 1, "renewed, then called");
  assert.equal((await lease(still_mine.order_id)).lease_token, null, "and given up after no answer");

  const taken = await leasedOrder("proc-slow");
  await sql`update orders set lease_token = 'the-takers', lease_holder = 'proc-taker'
            where order_id = ${taken.order_id}`.execute(app.db);
  await driveOrder(alive("proc-slow"), taken, FINISH, long_ago);
  assert.equal(callsFor(taken.order_id), 0, "taken over meanwhile: no carrier call");
  assert.deepEqual(await lease(taken.order_id), { lease_token: "the-takers", lease_holder: "proc-taker" });
});

test("a refund's driver whose own heartbeat is late cancels nothing and gives its lease up", async () => {
  await beat("proc-stalled-refund", 0);
  const order = await leasedOrder(null);
  await sql`update orders set status = 'completed', resolved_at = now(), lease_until = null
            where order_id = ${order.order_id}`.execute(app.db);
  await sql`
    insert into order_refunds (order_id, partner_id, state, lease_until, lease_token, lease_holder)
    values (${order.order_id}, ${partner.partner_id}, 'refunding', now() + interval '1 minute', 'refund-token',
            'proc-stalled-refund')`.execute(app.db);
  const held = { order_id: order.order_id, partner_id: partner.partner_id, lease_token: "refund-token" };
  const driven = await driveRefund(alive("proc-stalled-refund", false), held, "test", false);
  assert.equal(driven, null, "an unknown outcome: the client is told to retry");
  assert.equal(callsFor(order.order_id), 0, "no cancel asked of the carrier");
  const intent = await sql<{ state: string; lease_token: string | null }>`
    select state, lease_token from order_refunds where order_id = ${order.order_id}`.execute(app.db);
  assert.deepEqual(intent.rows, [{ state: "refunding", lease_token: null }]);
});
