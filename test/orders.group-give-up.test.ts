// The resolver's last look at a group order (issue 34 with issue 32): a group pending past
// PENDING_FAIL_AFTER_HOURS because a line's carrier never answered (unavailable@carrier.test) is
// looked up line by line, by each line's reference: what the carrier made is completed and charged
// (the partner gets the eSIMs it has), the rest fails as given up and is never charged. Never the
// whole order failed while the carrier holds profiles made for its lines.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import type { Carrier } from "../src/carrier/carrier.ts";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { resolveDueOrders } from "../src/orders/resolve-pending-orders.ts";
import { orderFinishers } from "../src/topups/order-finishers.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { END_USER } from "./support/fixtures.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const app = await createTestApp(
  {
    carrier_timeout_ms: 2_000,
    resolve_after_ms: 600_000,
    pending_give_up_hours: 1,
    pending_fail_after_hours: 1,
  },
  { database, carrier },
);
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const CREDIT_MINOR = 1_000_000;

/** A group submitted with these travellers' addresses: answered 503 (a line unknown), made 2 hours old. */
async function stuckGroup(api_key: string, emails: string[]): Promise<{ order_id: string; price: number }> {
  const cart = await app.app.inject({
    method: "POST",
    url: "/v1/orders/cart",
    headers: app.auth(api_key),
    payload: { package_id: "fr-1gb-7d", quantity: emails.length },
  });
  const travellers = emails.map((email, i) => ({ first_name: `T${i}`, last_name: "Lima", email }));
  const submitted = await app.app.inject({
    method: "POST",
    url: "/v1/orders/submit",
    headers: app.auth(api_key),
    payload: { cart_key: cart.json().cart_key, ...END_USER, travellers },
  });
  assert.equal(submitted.statusCode, 503, submitted.body);
  const order_id = submitted.json().order_id as string;
  await sql`update orders set created_at = now() - interval '2 hours', lease_until = null, next_resolve_at = now()
            where order_id = ${order_id}`.execute(app.db);
  return { order_id, price: cart.json().total.amount_minor / emails.length };
}

async function record(order_id: string) {
  const order = await sql<{ status: string; failure_code: string | null; total_minor: number }>`
    select status, failure_code, total_minor from orders where order_id = ${order_id}`.execute(app.db);
  const lines = await sql<{ status: string }>`
    select status from order_lines where order_id = ${order_id} order by position`.execute(app.db);
  const transfer = await sql<{ state: string; amount_minor: number }>`
    select state, amount_minor from ledger_transfers where reference = ${order_id}`.execute(app.db);
  const esims = await sql<{ n: number }>`
    select count(*)::int as n from esims where order_id = ${order_id}`.execute(app.db);
  return {
    ...order.rows[0]!,
    lines: lines.rows.map((line) => line.status),
    transfer: transfer.rows[0]!,
    esims: esims.rows[0]!.n,
  };
}

test("a group given up with one line made: completed with that eSIM, charged for it alone, the other line failed", async () => {
  const partner = await app.createPartner("Half stuck", CREDIT_MINOR);
  const { order_id, price } = await stuckGroup(partner.api_key, [
    "a@example.com",
    "unavailable@carrier.test",
  ]);
  await resolveDueOrders(app.ctx, orderFinishers(app.ctx.config), 10, quiet);
  const after = await record(order_id);
  assert.equal(after.status, "completed", JSON.stringify(after));
  assert.deepEqual(after.lines, ["completed", "failed"]);
  assert.equal(after.total_minor, price);
  assert.deepEqual(after.transfer, { state: "posted", amount_minor: price });
  assert.equal(after.esims, 1);
  const made = (await simulator.audit()).provisionings.filter((p) => p.reference.startsWith(order_id));
  assert.deepEqual(
    made.map((p) => p.reference),
    [`${order_id}-0`],
  );
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("a group given up whose unknown line the carrier made after all: every eSIM completed and charged", async () => {
  const partner = await app.createPartner("Late answer", CREDIT_MINOR);
  const { order_id, price } = await stuckGroup(partner.api_key, [
    "unavailable@carrier.test",
    "b@example.com",
    "c@example.com",
  ]);
  // The carrier made line 0 after all (its answer lost): the last look finds it by the line's reference.
  const terms = await sql<{ external_package_id: string; validity_days: number; data_mb: number | null }>`
    select external_package_id, validity_days, data_mb from orders where order_id = ${order_id}`.execute(
    app.db,
  );
  const late = await carrier.provisionProfile({
    reference: `${order_id}-0`,
    ...terms.rows[0]!,
    start_date: null,
    end_user_email: "a@example.com",
  });
  assert.equal(late.kind, "ok");
  await resolveDueOrders(app.ctx, orderFinishers(app.ctx.config), 10, quiet);
  const after = await record(order_id);
  assert.equal(after.status, "completed", JSON.stringify(after));
  assert.deepEqual(after.lines, ["completed", "completed", "completed"]);
  assert.deepEqual(after.transfer, { state: "posted", amount_minor: 3 * price });
  assert.equal(after.esims, 3);
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("a group given up with no line made: failed as given_up, its hold voided, nothing charged", async () => {
  const partner = await app.createPartner("All stuck", CREDIT_MINOR);
  const { order_id } = await stuckGroup(partner.api_key, [
    "unavailable@carrier.test",
    "unavailable@carrier.test",
  ]);
  await resolveDueOrders(app.ctx, orderFinishers(app.ctx.config), 10, quiet);
  const after = await record(order_id);
  assert.equal(after.status, "failed");
  assert.equal(after.failure_code, "given_up");
  assert.deepEqual(after.lines, ["failed", "failed"]);
  assert.equal(after.transfer.state, "voided");
  assert.equal(after.esims, 0);
  const wallet = await app.app.inject({
    method: "GET",
    url: "/v1/profile/wallet",
    headers: app.auth(partner.api_key),
  });
  assert.equal(wallet.json().balance.amount_minor, CREDIT_MINOR);
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("a line the carrier cannot be asked about at the last look stays pending, the hold kept, until it answers", async () => {
  // The same service whose carrier's look-up of the stuck line cannot be answered (down), then can.
  let down = true;
  const flaky: Carrier = Object.create(carrier);
  flaky.lookUpOutcome = async (reference: string) =>
    down ? { kind: "unavailable", reason: "connection refused" } : carrier.lookUpOutcome(reference);
  const looked = await createTestApp(
    {
      carrier_timeout_ms: 2_000,
      resolve_after_ms: 600_000,
      pending_give_up_hours: 1,
      pending_fail_after_hours: 1,
    },
    { database, carrier: flaky },
  );
  const partner = await app.createPartner("Carrier down at the last look", CREDIT_MINOR);
  const { order_id, price } = await stuckGroup(partner.api_key, [
    "a@example.com",
    "unavailable@carrier.test",
  ]);
  await resolveDueOrders(looked.ctx, orderFinishers(looked.ctx.config), 10, quiet);
  const waiting = await record(order_id);
  assert.equal(waiting.status, "pending", "not given up without the carrier's word");
  assert.deepEqual(waiting.lines, ["completed", "pending"]);
  assert.equal(waiting.transfer.state, "pending");
  assert.equal(waiting.transfer.amount_minor, 2 * price, "the hold kept whole");

  down = false;
  await sql`update orders set lease_until = null, next_resolve_at = now() where order_id = ${order_id}`.execute(
    app.db,
  );
  await resolveDueOrders(looked.ctx, orderFinishers(looked.ctx.config), 10, quiet);
  const ended = await record(order_id);
  assert.equal(ended.status, "completed");
  assert.deepEqual(ended.lines, ["completed", "failed"]);
  assert.deepEqual(ended.transfer, { state: "posted", amount_minor: price });
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});
