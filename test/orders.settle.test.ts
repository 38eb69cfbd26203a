// A pending order never stays held forever (issue 10): past PENDING_GIVE_UP_HOURS it is flagged
// for the operator (metric, `orders pending`), who settles it with `orders settle`. Settling asks
// the carrier first and never contradicts it, and races the resolver safely: exactly once.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { driveIfAbandoned } from "../src/orders/drive-order.ts";
import { FINISH_ESIM } from "../src/orders/finish.ts";
import { flagGivenUpOrders } from "../src/orders/flag-given-up-orders.ts";
import { settlePendingOrder } from "../src/orders/settle-pending-order.ts";
import { orderFinishers } from "../src/topups/order-finishers.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { createTestApp } from "./support/app.ts";
import { type CliRun, runCli } from "./support/cli.ts";
import { createTestDatabase } from "./support/db.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const app = await createTestApp(
  { carrier_timeout_ms: 2_000, resolve_after_ms: 600_000 },
  { database, carrier },
);
const PRICE_MINOR = 350;
const partner = await app.createPartner("Acme Travel", 100 * PRICE_MINOR);

function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const carrierEnv = { CARRIER_URL: simulator.url, CARRIER_API_KEY: simulator.apiKey };
  return runCli(args, { DATABASE_URL: database.url, APP_ENV: "sandbox", ...carrierEnv, ...env });
}

/** A pending order whose carrier call never got an answer (the carrier was down for it). */
async function pendingOrder(hours_old = 0): Promise<string> {
  const cart = await app.app.inject({
    method: "POST",
    url: "/v1/orders/cart",
    headers: app.auth(partner.api_key),
    payload: { package_id: "fr-1gb-7d" },
  });
  const submitted = await app.app.inject({
    method: "POST",
    url: "/v1/orders/submit",
    headers: app.auth(partner.api_key),
    payload: {
      cart_key: cart.json().cart_key,
      email: "unavailable@carrier.test",
      phone: "+14155550123",
      first_name: "Ana",
      last_name: "Lima",
    },
  });
  assert.equal(submitted.statusCode, 503, submitted.body);
  const order_id = submitted.json().order_id as string;
  await sql`update orders set created_at = now() - make_interval(hours => ${hours_old}), lease_until = null
            where order_id = ${order_id}`.execute(app.db);
  return order_id;
}

/** The carrier provisions the reference after all (a late answer we never heard). */
async function provisionAtCarrier(order_id: string): Promise<string> {
  const order = await sql<{ external_package_id: string; validity_days: number; data_mb: number | null }>`
    select external_package_id, validity_days, data_mb from orders where order_id = ${order_id}`.execute(
    app.db,
  );
  const terms = order.rows[0]!;
  const outcome = await carrier.provisionProfile({
    reference: order_id,
    ...terms,
    start_date: null,
    end_user_email: "ana@example.com",
  });
  assert.equal(outcome.kind, "ok");
  return (outcome as { value: { iccid: string } }).value.iccid;
}

async function state(order_id: string) {
  const result = await sql<{ status: string; iccid: string | null; transfer: string; esims: number }>`
    select o.status, o.iccid, t.state as transfer,
           (select count(*)::int from esims e where e.order_id = o.order_id) as esims
    from orders o join ledger_transfers t on t.reference = o.order_id and t.kind = 'purchase'
    where o.order_id = ${order_id}`.execute(app.db);
  return result.rows[0]!;
}

test("a pending order past PENDING_GIVE_UP_HOURS is flagged: orders pending lists it with its age, a metric counts it", async () => {
  const old = await pendingOrder(25);
  const fresh = await pendingOrder(0);
  const run = await cli(["orders", "pending", "--json"]);
  assert.equal(run.code, 0, run.stderr);
  const listed = JSON.parse(run.stdout).data as {
    order_id: string;
    age_seconds: number;
    given_up: boolean;
  }[];
  const byId = new Map(listed.map((row) => [row.order_id, row]));
  assert.equal(byId.get(old)?.given_up, true);
  assert.ok(byId.get(old)!.age_seconds >= 25 * 3600);
  assert.equal(byId.get(fresh)?.given_up, false);
  const text = await cli(["orders", "pending"]);
  assert.match(text.stdout, new RegExp(`${old}.*GIVEN UP`));

  const metrics = await app.app.inject({ url: "/metrics" });
  const given_up = Number(/^esim_orders_pending_given_up (\d+)$/m.exec(metrics.body)?.[1]);
  assert.ok(given_up >= 1, "esim_orders_pending_given_up counts it");
  const logged: string[] = [];
  await flagGivenUpOrders(app.ctx, (message) => logged.push(message));
  assert.equal(logged.length, 1, "the requeue job's log line names the orders to settle");
  assert.ok(logged[0]!.includes(old) && !logged[0]!.includes(fresh), logged[0]);
  for (const order_id of [old, fresh]) await settleQuietly(order_id);
});

/** Leaves no pending order behind for the next test's counts. */
async function settleQuietly(order_id: string): Promise<void> {
  await sql`update orders set created_at = now() - interval '48 hours' where order_id = ${order_id}`.execute(
    app.db,
  );
  await settlePendingOrder(app.ctx, order_id, "failed", orderFinishers(app.ctx.config));
}

test("the carrier says provisioned: --failed is refused, --completed stores the eSIM and posts the hold", async () => {
  const order_id = await pendingOrder(30);
  const iccid = await provisionAtCarrier(order_id);

  const refused = await cli(["orders", "settle", order_id, "--failed"]);
  assert.equal(refused.code, 1, refused.stdout);
  assert.match(refused.stderr, /provisioned/);
  assert.equal((await state(order_id)).status, "pending", "a refused settle changes nothing");

  const settled = await cli(["orders", "settle", order_id, "--completed", "--json"]);
  assert.equal(settled.code, 0, settled.stderr);
  assert.equal(JSON.parse(settled.stdout).status, "completed");
  assert.deepEqual(await state(order_id), { status: "completed", iccid, transfer: "posted", esims: 1 });
  const again = await cli(["orders", "settle", order_id, "--completed"]);
  assert.equal(again.code, 1, "a final order is not settled twice");
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("the carrier never provisioned it: --completed is refused, --failed voids the hold (only once given up)", async () => {
  const young = await pendingOrder(1);
  const early = await cli(["orders", "settle", young, "--failed"]);
  assert.equal(early.code, 1, "before PENDING_GIVE_UP_HOURS the carrier may still be working on it");
  assert.equal((await state(young)).status, "pending");
  await settleQuietly(young);

  const order_id = await pendingOrder(30);
  const refused = await cli(["orders", "settle", order_id, "--completed"]);
  assert.equal(refused.code, 1, refused.stdout);
  assert.match(refused.stderr, /no record|never provisioned/);
  assert.equal((await state(order_id)).status, "pending");

  // Without CARRIER_URL (a sandbox), the CLI asks a simulator of its own over the same database.
  const settled = await cli(["orders", "settle", order_id, "--failed"], {
    CARRIER_URL: "",
    CARRIER_API_KEY: "",
  });
  assert.equal(settled.code, 0, settled.stderr);
  assert.match(settled.stdout, /settled as failed/);
  assert.deepEqual(await state(order_id), { status: "failed", iccid: null, transfer: "voided", esims: 0 });
});

test("the carrier unreachable: settle refuses and changes nothing", async () => {
  const order_id = await pendingOrder(30);
  const run = await cli(["orders", "settle", order_id, "--failed"], {
    CARRIER_URL: "http://127.0.0.1:9",
  });
  assert.equal(run.code, 1, run.stdout);
  assert.match(run.stderr, /carrier/);
  const after = await state(order_id);
  assert.equal(after.status, "pending");
  assert.equal(after.transfer, "pending");
  await settleQuietly(order_id);
});

test("settling races the resolver safely: the order completes exactly once, charged once", async () => {
  for (let round = 0; round < 5; round++) {
    const order_id = await pendingOrder(30);
    await provisionAtCarrier(order_id);
    const outcomes = await Promise.allSettled([
      settlePendingOrder(app.ctx, order_id, "completed", orderFinishers(app.ctx.config)),
      driveIfAbandoned(app.ctx, order_id, FINISH_ESIM),
      settlePendingOrder(app.ctx, order_id, "completed", orderFinishers(app.ctx.config)),
      driveIfAbandoned(app.ctx, order_id, FINISH_ESIM),
    ]);
    assert.ok(outcomes.some((outcome) => outcome.status === "fulfilled"));
    const after = await state(order_id);
    assert.equal(after.status, "completed");
    assert.equal(after.transfer, "posted");
    assert.equal(after.esims, 1);
  }
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});
