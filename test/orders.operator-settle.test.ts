// The operator's word on a stuck order (issue 32): POST /admin/orders/{orderID}/settle, and the
// resolver's last look past PENDING_FAIL_AFTER_HOURS, with the sandbox's unavailable@carrier.test
// (the carrier answers 503 for it, every time) against the real simulator process. `failed` voids
// the hold at once, `completed` posts it; the carrier's own record wins; exactly once when racing
// the resolver; audited with the reason; the ledger audit passes throughout.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import type { CancelOutcome, CancelRequest, Carrier, LookedUpOutcome } from "../src/carrier/carrier.ts";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { checkFailedAtCarrier } from "../src/orders/check-failed-at-carrier.ts";
import { resolveDueOrders } from "../src/orders/resolve-pending-orders.ts";
import { orderFinishers } from "../src/topups/order-finishers.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const app = await createTestApp(
  { carrier_timeout_ms: 2_000, resolve_after_ms: 600_000 },
  { database, carrier },
);
// The same service with a short give-up: the resolver ends an order pending for an hour.
const short = await createTestApp(
  {
    carrier_timeout_ms: 2_000,
    resolve_after_ms: 600_000,
    pending_give_up_hours: 1,
    pending_fail_after_hours: 1,
  },
  { database, carrier },
);
/**
 * The same carrier with faults the test turns on: a look-up's or a cancel's answer forced, and a
 * step run while the cancel is on its way (the settle's lease running out meanwhile, the resolver
 * taking the order over), with no timing involved.
 */
const faults: {
  lookUp: LookedUpOutcome | null;
  cancel: CancelOutcome | null;
  duringCancel: (() => Promise<void>) | null;
} = { lookUp: null, cancel: null, duringCancel: null };
const flakyCarrier = new Proxy(carrier, {
  get(target, property) {
    if (property === "lookUpOutcome" && faults.lookUp) return async () => faults.lookUp;
    if (property === "cancelProfile" || property === "cancelBundle") {
      return async (request: CancelRequest) => {
        await faults.duringCancel?.();
        return faults.cancel ?? target[property](request);
      };
    }
    const value = Reflect.get(target, property, target);
    return typeof value === "function" ? value.bind(target) : value;
  },
}) as Carrier;
const flaky = await createTestApp(
  {
    carrier_timeout_ms: 2_000,
    resolve_after_ms: 600_000,
    pending_give_up_hours: 1,
    pending_fail_after_hours: 1,
  },
  { database, carrier: flakyCarrier },
);
function clearFaults() {
  faults.lookUp = null;
  faults.cancel = null;
  faults.duringCancel = null;
}
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const PRICE_MINOR = 350;
const CREDIT_MINOR = 100 * PRICE_MINOR;
const partner = await app.createPartner("Stuck Travel", CREDIT_MINOR);
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A pending order whose carrier call got no answer (unavailable@carrier.test), `hours_old` old, due now. */
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
  await sql`update orders set created_at = now() - make_interval(hours => ${hours_old}), lease_until = null,
              next_resolve_at = now() where order_id = ${order_id}`.execute(app.db);
  return order_id;
}

/** The carrier provisions the reference after all (a late answer we never heard). */
async function provisionAtCarrier(order_id: string): Promise<string> {
  const order = await sql<{ external_package_id: string; validity_days: number; data_mb: number | null }>`
    select external_package_id, validity_days, data_mb from orders where order_id = ${order_id}`.execute(
    app.db,
  );
  const outcome = await carrier.provisionProfile({
    reference: order_id,
    ...order.rows[0]!,
    start_date: null,
    end_user_email: "ana@example.com",
  });
  assert.equal(outcome.kind, "ok");
  return (outcome as { value: { iccid: string } }).value.iccid;
}

async function state(order_id: string) {
  const result = await sql<{ status: string; failure_code: string | null; transfer: string; esims: number }>`
    select o.status, o.failure_code, t.state as transfer,
           (select count(*)::int from esims e where e.order_id = o.order_id) as esims
    from orders o join ledger_transfers t on t.reference = o.order_id and t.kind = 'purchase'
    where o.order_id = ${order_id}`.execute(app.db);
  return result.rows[0]!;
}

function settle(order_id: string, payload: Record<string, unknown>) {
  return app.app.inject({ method: "POST", url: `/admin/orders/${order_id}/settle`, headers: admin, payload });
}

async function settledAudits(order_id: string) {
  const { rows } = await sql<{ actor_type: string; details: Record<string, unknown> }>`
    select actor_type, details from audit_log where action = 'order.settled' and target_id = ${order_id}`.execute(
    app.db,
  );
  return rows;
}

async function held(): Promise<number> {
  const wallet = await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(partner.api_key) });
  return wallet.json().pending.amount_minor;
}

test("failed, known out of band: the hold is released at once, young as the order is, audited with the reason", async () => {
  const order_id = await pendingOrder(0);
  assert.equal(await held(), PRICE_MINOR);
  const answer = await settle(order_id, {
    outcome: "failed",
    reason: "carrier ticket #4411: never provisioned",
  });
  assert.equal(answer.statusCode, 200, answer.body);
  assert.equal(answer.json().status, "failed");
  assert.equal(answer.json().orderID, order_id);
  assert.deepEqual(await state(order_id), {
    status: "failed",
    failure_code: "settled_by_operator",
    transfer: "voided",
    esims: 0,
  });
  assert.equal(await held(), 0);
  const audits = await settledAudits(order_id);
  assert.equal(audits.length, 1);
  assert.equal(audits[0]!.actor_type, "operator");
  assert.equal(audits[0]!.details.reason, "carrier ticket #4411: never provisioned");
  assert.equal(audits[0]!.details.outcome, "failed");

  const again = await settle(order_id, { outcome: "failed", reason: "twice" });
  assert.equal(again.statusCode, 409);
  assert.equal(again.json().code, "order_not_pending");
  assert.equal((await settledAudits(order_id)).length, 1, "audited once");
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("completed: posts the charge with what the carrier made; refused when the carrier made nothing", async () => {
  const none = await pendingOrder(0);
  const refused = await settle(none, { outcome: "completed", reason: "the partner says it works" });
  assert.equal(refused.statusCode, 409, refused.body);
  assert.equal(refused.json().code, "carrier_disagrees");
  assert.equal((await state(none)).status, "pending", "nothing changed");
  assert.equal((await settledAudits(none)).length, 0);
  assert.equal((await settle(none, { outcome: "failed", reason: "cleanup" })).statusCode, 200);

  const order_id = await pendingOrder(0);
  await provisionAtCarrier(order_id);
  const answer = await settle(order_id, { outcome: "completed", reason: "carrier confirms delivery" });
  assert.equal(answer.statusCode, 200, answer.body);
  assert.equal(answer.json().status, "completed");
  assert.match(answer.json().esim_iccid, /^89/);
  assert.deepEqual(await state(order_id), {
    status: "completed",
    failure_code: null,
    transfer: "posted",
    esims: 1,
  });
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("failed when the carrier did make it: the carrier is asked to cancel first, then the hold is voided", async () => {
  const order_id = await pendingOrder(0);
  const iccid = await provisionAtCarrier(order_id);
  const answer = await settle(order_id, { outcome: "failed", reason: "duplicate booking" });
  assert.equal(answer.statusCode, 200, answer.body);
  assert.deepEqual(await state(order_id), {
    status: "failed",
    failure_code: "settled_by_operator",
    transfer: "voided",
    esims: 0,
  });
  const profile = await sql<{ cancelled: boolean }>`
    select cancelled_at is not null as cancelled from carrier_sim.profiles where iccid = ${iccid}`.execute(
    app.db,
  );
  assert.equal(profile.rows[0]?.cancelled, true, "the carrier cancelled what it made");
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("unknown orders, bad bodies and final orders change nothing", async () => {
  const unknown = await settle("ord_AAAAAAAAAAAAAAAAAAAAAA", { outcome: "failed", reason: "x" });
  assert.equal(unknown.statusCode, 404);
  assert.equal(unknown.json().code, "order_not_found");
  const order_id = await pendingOrder(0);
  for (const body of [
    {},
    { outcome: "failed" },
    { outcome: "refunded", reason: "x" },
    { outcome: "failed", reason: "" },
    { outcome: "failed", reason: "   " },
    { outcome: "failed", reason: "r".repeat(501) },
    { outcome: "failed", reason: "x", extra: 1 },
  ]) {
    const answer = await settle(order_id, body);
    assert.equal(answer.statusCode, 400, JSON.stringify(body));
    assert.equal(answer.json().code, "invalid_request");
  }
  assert.equal((await state(order_id)).status, "pending");
  assert.equal((await settle(order_id, { outcome: "failed", reason: "cleanup" })).statusCode, 200);
});

test("settling races the resolver: one outcome, the hold resolved once, no 500, the ledger balances", async () => {
  for (let round = 0; round < 6; round++) {
    const order_id = await pendingOrder(0);
    await provisionAtCarrier(order_id);
    // The resolver would complete it (the carrier made it); the operator says failed (cancel, void).
    const [answer] = await Promise.all([
      settle(order_id, { outcome: round % 2 === 0 ? "failed" : "completed", reason: `race ${round}` }),
      resolveDueOrders(app.ctx, orderFinishers(app.ctx.config), 10, quiet),
    ]);
    assert.ok([200, 409].includes(answer.statusCode), `round ${round}: ${answer.statusCode} ${answer.body}`);
    if (answer.statusCode === 409)
      assert.ok(["order_not_pending", "request_in_progress"].includes(answer.json().code));
    // Whoever lost, the order is final now or the resolver finishes it on its next look.
    if ((await state(order_id)).status === "pending")
      await resolveDueOrders(app.ctx, orderFinishers(app.ctx.config), 10, quiet);
    const after = await state(order_id);
    assert.ok(
      (after.status === "completed" && after.transfer === "posted" && after.esims === 1) ||
        (after.status === "failed" && after.transfer === "voided" && after.esims === 0),
      `round ${round}: ${JSON.stringify(after)}`,
    );
    assert.equal((await settledAudits(order_id)).length, answer.statusCode === 200 ? 1 : 0);
  }
  assert.equal(await held(), 0);
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("past PENDING_FAIL_AFTER_HOURS the resolver's last look ends the order: failed and the hold voided, or completed if the carrier made it", async () => {
  const stuck = await pendingOrder(2);
  const young = await pendingOrder(0);
  const made = await pendingOrder(2);
  await provisionAtCarrier(made);
  await sql`update orders set next_resolve_at = now() - interval '1 second' where order_id in (${stuck}, ${made})`.execute(
    app.db,
  );
  // The young one is not due for this round (the short service would only ask the carrier again).
  await sql`update orders set next_resolve_at = now() + interval '1 hour' where order_id = ${young}`.execute(
    app.db,
  );
  await resolveDueOrders(short.ctx, orderFinishers(short.ctx.config), 10, quiet);
  assert.deepEqual(await state(stuck), {
    status: "failed",
    failure_code: "given_up",
    transfer: "voided",
    esims: 0,
  });
  assert.deepEqual(await state(made), {
    status: "completed",
    failure_code: null,
    transfer: "posted",
    esims: 1,
  });
  assert.equal(
    (await state(young)).status,
    "pending",
    "younger than the setting: asked again, never given up",
  );
  const failed = await app.app.inject({ url: `/v1/orders/${stuck}`, headers: app.auth(partner.api_key) });
  assert.equal(failed.json().status, "failed");
  assert.equal((await settle(young, { outcome: "failed", reason: "cleanup" })).statusCode, 200);
  assert.equal(await held(), 0);
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

async function carrierCheck(order_id: string) {
  const { rows } = await sql<{ carrier_check: string | null; owed: boolean }>`
    select carrier_check, carrier_check_after is not null as owed from orders where order_id = ${order_id}`.execute(
    app.db,
  );
  return rows[0]!;
}

async function cancelledAtCarrier(iccid: string): Promise<boolean> {
  const profile = await sql<{ cancelled: boolean }>`
    select cancelled_at is not null as cancelled from carrier_sim.profiles where iccid = ${iccid}`.execute(
    app.db,
  );
  return profile.rows[0]?.cancelled === true;
}

/** The owed look comes due now rather than after CARRIER_CHECK_AFTER_S. */
async function checkDueNow(order_id: string) {
  await sql`update orders set carrier_check_after = now() - interval '1 second' where order_id = ${order_id}`.execute(
    app.db,
  );
}

function settleFlaky(order_id: string, payload: Record<string, unknown>) {
  return flaky.app.inject({
    method: "POST",
    url: `/admin/orders/${order_id}/settle`,
    headers: admin,
    payload,
  });
}

test("failed while the lease runs out during the cancel: the resolver taking over cannot complete the order, never charged for a cancelled eSIM", async () => {
  const order_id = await pendingOrder(0);
  const iccid = await provisionAtCarrier(order_id);
  // While the cancel is on its way the settle's lease (one carrier call long) runs out and the
  // resolver takes the order; it finds the carrier's profile and would complete it.
  faults.duringCancel = async () => {
    await sql`update orders set lease_until = now() - interval '1 second', next_resolve_at = now() - interval '1 second'
              where order_id = ${order_id} and status = 'pending'`.execute(app.db);
    await resolveDueOrders(app.ctx, orderFinishers(app.ctx.config), 10, quiet);
  };
  try {
    const answer = await settleFlaky(order_id, { outcome: "failed", reason: "duplicate booking" });
    assert.equal(answer.statusCode, 200, answer.body);
  } finally {
    clearFaults();
  }
  assert.deepEqual(await state(order_id), {
    status: "failed",
    failure_code: "settled_by_operator",
    transfer: "voided",
    esims: 0,
  });
  assert.equal(await cancelledAtCarrier(iccid), true);
  assert.deepEqual(await carrierCheck(order_id), { carrier_check: "cancelled", owed: false });
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("failed when the carrier made it and refuses the cancel: the hold is voided anyway (200), the order marked for reconciliation", async () => {
  const order_id = await pendingOrder(0);
  const iccid = await provisionAtCarrier(order_id);
  faults.cancel = { kind: "refused", reason: "esim_installed" };
  try {
    const answer = await settleFlaky(order_id, { outcome: "failed", reason: "partner cancelled" });
    assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(answer.json().status, "failed");
  } finally {
    clearFaults();
  }
  assert.deepEqual(await state(order_id), {
    status: "failed",
    failure_code: "settled_by_operator",
    transfer: "voided",
    esims: 0,
  });
  assert.equal(await cancelledAtCarrier(iccid), false);
  assert.deepEqual(await carrierCheck(order_id), { carrier_check: "refused", owed: false });
  const metrics = await app.app.inject({ url: "/metrics" });
  const unreconciled = Number(/^esim_orders_carrier_unreconciled (\d+)$/m.exec(metrics.body)?.[1]);
  assert.ok(unreconciled >= 1, "esim_orders_carrier_unreconciled counts it");
  const audits = await settledAudits(order_id);
  assert.equal(audits.length, 1);
  assert.equal(audits[0]!.details.carrier_cancel, "requested");
});

test("failed when the carrier made it and cannot be asked to cancel: 200, and the owed follow-up cancels it later", async () => {
  const order_id = await pendingOrder(0);
  const iccid = await provisionAtCarrier(order_id);
  faults.cancel = { kind: "unavailable", reason: "503" };
  try {
    const answer = await settleFlaky(order_id, { outcome: "failed", reason: "partner cancelled" });
    assert.equal(answer.statusCode, 200, answer.body);
  } finally {
    clearFaults();
  }
  assert.equal((await state(order_id)).transfer, "voided");
  assert.deepEqual(await carrierCheck(order_id), { carrier_check: "due", owed: true });
  assert.equal(await cancelledAtCarrier(iccid), false);
  await checkDueNow(order_id);
  await checkFailedAtCarrier(app.ctx, () => undefined);
  assert.equal(await cancelledAtCarrier(iccid), true, "the follow-up cancelled what the carrier made");
  assert.deepEqual(await carrierCheck(order_id), { carrier_check: "cancelled", owed: false });
});

test("given up while the carrier was unreachable, its profile made after all: the follow-up cancels it", async () => {
  const order_id = await pendingOrder(2);
  faults.lookUp = { kind: "unavailable", reason: "503" };
  try {
    await resolveDueOrders(flaky.ctx, orderFinishers(flaky.ctx.config), 10, quiet);
  } finally {
    clearFaults();
  }
  assert.deepEqual(await state(order_id), {
    status: "failed",
    failure_code: "given_up",
    transfer: "voided",
    esims: 0,
  });
  assert.deepEqual(await carrierCheck(order_id), { carrier_check: "due", owed: true });
  // The carrier's answer had been lost: it made the profile.
  const iccid = await provisionAtCarrier(order_id);
  await checkFailedAtCarrier(app.ctx, () => undefined);
  assert.equal(await cancelledAtCarrier(iccid), false, "not due yet: CARRIER_CHECK_AFTER_S");
  await checkDueNow(order_id);
  await checkFailedAtCarrier(app.ctx, () => undefined);
  assert.equal(await cancelledAtCarrier(iccid), true);
  assert.deepEqual(await carrierCheck(order_id), { carrier_check: "cancelled", owed: false });
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("failed with no record at the carrier yet: owed a look, which finds nothing made", async () => {
  const order_id = await pendingOrder(0);
  const answer = await settle(order_id, { outcome: "failed", reason: "never provisioned" });
  assert.equal(answer.statusCode, 200, answer.body);
  assert.deepEqual(await carrierCheck(order_id), { carrier_check: "due", owed: true });
  await checkDueNow(order_id);
  await checkFailedAtCarrier(app.ctx, () => undefined);
  assert.deepEqual(await carrierCheck(order_id), { carrier_check: "nothing_made", owed: false });
});
