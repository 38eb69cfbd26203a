// A new eSIM's refund that waits for a top-up of it still pending at the carrier (issue #30,
// finding 7): the carrier has cancelled the profile, the order still reads `completed`. The partner
// is told so (the 409's detail, the Order's `refund_requested_at`), and the refund sweep backs off
// between its attempts (each asks the carrier the same cancel again) instead of retrying every
// REFUND_SWEEP_INTERVAL_MS for as long as the top-up stays pending.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import type { OrderRow } from "../src/orders/order.ts";
import { complete } from "../src/orders/record-outcome.ts";
import { sweepRefunds } from "../src/refunds/sweep-refunds.ts";
import { finishTopUp } from "../src/topups/finish-topup.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { topUpBody } from "./support/fixtures.ts";
import {
  type Answer,
  buyEsim,
  call,
  createWorld,
  waitFor,
  workerContext,
  worldCarrier,
} from "./support/world.ts";

// The service's own sweep and resolver stay out of the way (first round in 10 minutes), and no
// pull sync moves an eSIM's next_sync_at: the test runs the sweep and completes top-ups itself.
const world = await createWorld({
  env: { REFUND_SWEEP_INTERVAL_MS: "600000", RESOLVE_AFTER_MS: "600000", USAGE_SYNC_MAX_PER_SECOND: "0" },
});
const api = world.services[0]!.url;
const db = createKysely<Database>(world.database.pool);
const carrier = worldCarrier(world);
/** The test process as a second worker running the refund sweep, as the service's would. */
const sweeper = workerContext(world, carrier);
const TOPUP = { package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D" };

async function intent(order_id: string) {
  const rows = await sql<{ attempts: number; backed_off: boolean; last_error: string | null }>`
    select attempts, last_error, lease_until > clock_timestamp() + interval '500 milliseconds' as backed_off
    from order_refunds where order_id = ${order_id} and state = 'refunding'`.execute(db);
  return rows.rows[0];
}

test("a refund waiting for a pending top-up: the Order shows it, the 409 says why, and the sweep backs off", async () => {
  const { partner, bought, order_id, iccid } = await buyEsim(api, 100_00);
  assert.equal(bought.body.refund_requested_at, null);

  // A top-up whose first call finds the carrier down: pending, its hold kept.
  const key = { "idempotency-key": "topup-pending-during-refund" };
  const body = topUpBody(iccid, TOPUP);
  await world.simulator.control({ down: true });
  try {
    const first = await call(api, "POST", "/v1/orders/submit-topup", {
      key: partner.api_key,
      body,
      headers: key,
    });
    assert.equal(first.status, 503, JSON.stringify(first.body));
  } finally {
    await world.simulator.control({ down: false });
  }

  // The refund: the carrier cancels the profile, then the refund waits for the top-up.
  const waiting = await call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
  assert.equal(waiting.status, 409, JSON.stringify(waiting.body));
  assert.equal(waiting.body.code, "request_in_progress");
  assert.match(waiting.body.detail, /carrier has cancelled the eSIM .* top-up .* still pending/);
  const shown = await call(api, "GET", `/v1/orders/${order_id}`, { key: partner.api_key });
  assert.equal(shown.body.status, "completed", "not refunded yet: nothing credited");
  assert.equal(typeof shown.body.refund_requested_at, "string", "but a refund is under way");
  const listed = await call(api, "GET", "/v1/profile/orders?limit=5", { key: partner.api_key });
  const row = listed.body.data.find((o: { orderID: string }) => o.orderID === order_id);
  assert.equal(row.refund_requested_at, shown.body.refund_requested_at);

  // The request gave its lease up at once (the client's retry may drive it); the sweep takes it,
  // finds the top-up still pending, and backs off: its next round does not ask the carrier again.
  const first_round = await sweepRefunds(sweeper);
  assert.equal(first_round.claimed, 1, JSON.stringify(first_round));
  const after = await intent(order_id);
  assert.equal(after?.last_error, "a top-up of the eSIM is still pending");
  assert.equal(after?.backed_off, true, "the lease is given up into the future, not at once");
  const next_round = await sweepRefunds(sweeper);
  assert.equal(next_round.claimed, 0, "backed off: not claimed again at once");

  // The top-up's retry: the carrier refuses it now (the profile is cancelled), nothing charged.
  await waitFor("the top-up's lease to run out", async () => {
    const retried = await call(api, "POST", "/v1/orders/submit-topup", {
      key: partner.api_key,
      body,
      headers: key,
    });
    return retried.status === 409 ? null : retried;
  });
  const topups = await sql<{ status: string }>`
    select status from orders where iccid = ${iccid} and type = 'topup'`.execute(db);
  assert.deepEqual(topups.rows, [{ status: "failed" }]);

  // Once the backoff has passed, the refund ends: refunded, credited once, its request time kept.
  const refunded = await waitFor("the refund", async () => {
    const retry = await call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
    return retry.status === 409 && retry.body.code === "request_in_progress" ? null : retry;
  });
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  assert.equal(refunded.body.status, "refunded");
  assert.equal(refunded.body.refund_requested_at, shown.body.refund_requested_at);
  const wallet = await call(api, "GET", "/v1/profile/wallet", { key: partner.api_key });
  assert.equal(wallet.body.balance.amount_minor, 100_00);
  assert.equal(wallet.body.pending.amount_minor, 0);
  assert.deepEqual((await auditLedger(db)).breaches, []);
});

test("a refund the carrier refuses leaves no refund under way on the Order", async () => {
  const { partner, order_id, iccid } = await buyEsim(api, 100_00);
  // Installed at the carrier, not yet here: our rules allow the refund, the carrier refuses it.
  await world.simulator.pointCallbacksAt(null);
  await world.simulator.simulate(iccid, { event: "install" });
  const refused = await call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.equal(refused.body.code, "refund_not_allowed");
  const order = await call(api, "GET", `/v1/orders/${order_id}`, { key: partner.api_key });
  assert.equal(order.body.status, "completed");
  assert.equal(order.body.refund_requested_at, null);
});

/** A backend of this database waiting for a row lock while it reads the eSIM's completed top-ups. */
async function refundWaitsForATopUpOrder(): Promise<boolean> {
  const waiting = await sql<{ n: number }>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock'
      and query ilike '%from esim_bundles where iccid%'`.execute(db);
  return (waiting.rows[0]?.n ?? 0) > 0;
}

test("a top-up completing while the eSIM's refund reads its top-ups is refunded with it, never left charged on a cancelled eSIM", async () => {
  const { partner, order_id, iccid } = await buyEsim(api, 100_00);
  const body = topUpBody(iccid, TOPUP);
  const earlier = await call(api, "POST", "/v1/orders/submit-topup", { key: partner.api_key, body });
  assert.equal(earlier.status, 200, JSON.stringify(earlier.body));
  // A second top-up: pending here (the carrier was down), then taken by the carrier before the cancel.
  await world.simulator.control({ down: true });
  try {
    const first = await call(api, "POST", "/v1/orders/submit-topup", { key: partner.api_key, body });
    assert.equal(first.status, 503, JSON.stringify(first.body));
  } finally {
    await world.simulator.control({ down: false });
  }
  const pending = await sql<OrderRow>`
    select * from orders where iccid = ${iccid} and type = 'topup' and status = 'pending'`.execute(db);
  const topup = pending.rows[0]!;
  const taken = await carrier.topUp({
    reference: topup.order_id,
    iccid,
    external_package_id: topup.external_package_id,
    data_mb: topup.data_mb,
    validity_days: topup.validity_days,
    end_user_email: topup.email,
  });
  assert.equal(taken.kind, "ok", JSON.stringify(taken));
  // Due for a pull already: the completion's dueNow writes nothing and takes no eSIM lock.
  await sql`update esims set next_sync_at = now() - interval '1 minute' where iccid = ${iccid}`.execute(db);

  let refunding: Promise<Answer> | null = null;
  await db.transaction().execute(async (trx) => {
    // The earlier top-up's row held (its own refund, say, takes it first), then the pending top-up's
    // completion, as drive-order.ts records it: both commit together once the refund has read.
    await sql`select 1 from orders where order_id = ${earlier.body.orderID} for no key update`.execute(trx);
    const done = await complete(trx, topup, { iccid }, finishTopUp(24), 60);
    assert.ok(done, "the pending top-up completes");
    refunding = call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
    // The refund either reads the top-ups (and waits for the held one) or finds one pending (409).
    await Promise.race([refunding, waitFor("the refund to read the top-ups", refundWaitsForATopUpOrder)]);
  });
  const first_answer = await refunding!;
  assert.ok([200, 409].includes(first_answer.status), JSON.stringify(first_answer.body));
  const refunded = await waitFor("the refund", async () => {
    const retry = await call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
    return retry.status === 409 && retry.body.code === "request_in_progress" ? null : retry;
  });
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  const statuses = await sql<{ order_id: string; status: string }>`
    select order_id, status from orders where partner_id = ${partner.partner_id} order by seq`.execute(db);
  assert.deepEqual(
    statuses.rows.map((row) => row.status),
    ["refunded", "refunded", "refunded"],
    "the eSIM and both top-ups: nothing left charged on the cancelled profile",
  );
  const wallet = await call(api, "GET", "/v1/profile/wallet", { key: partner.api_key });
  assert.equal(wallet.body.balance.amount_minor, 100_00);
  assert.deepEqual((await auditLedger(db)).breaches, []);
});
