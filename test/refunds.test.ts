// Refunds end to end (contract "Order additions"): a real service process, the carrier simulator as
// its own process, one PostgreSQL. Every test asserts on what matters: the wallet, the ledger's
// refund transfers, the carrier's cancellations, the eSIM's status and the recorded event.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { auditSystem, formatAudit } from "./support/audit.ts";
import { inParallel, topUpBody } from "./support/fixtures.ts";
import {
  balance,
  call,
  createWorld,
  type Json,
  newCart,
  newPartner,
  submit,
  waitFor,
} from "./support/world.ts";

const world = await createWorld({ services: 1 });
const api = world.services[0]!.url;
const db = createKysely<Database>(world.database.pool);
const carrier = new HttpCarrier({
  base_url: world.simulator.url,
  api_key: world.simulator.apiKey,
  timeout_ms: 5_000,
});
const TOPUP = { package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D" };

type Bought = {
  partner_id: string;
  api_key: string;
  order: Json;
  iccid: string;
  paid: number;
  credit: number;
};

async function buyEsim(url = api, credit = 100_00): Promise<Bought> {
  const partner = await newPartner(url, credit);
  const cart = await newCart(url, partner.api_key, "fr-1gb-7d");
  const order = await submit(url, partner.api_key, cart.cart_key);
  assert.equal(order.status, 200, JSON.stringify(order.body));
  const iccid = order.body.purchases[0].iccid as string;
  return { ...partner, order: order.body, iccid, paid: order.body.total.amount_minor, credit };
}

async function topUp(bought: Bought, url = api): Promise<Json> {
  const answer = await call(url, "POST", "/v1/orders/submit-topup", {
    key: bought.api_key,
    body: topUpBody(bought.iccid, TOPUP),
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

function refund(url: string, key: string, order_id: string, headers: Record<string, string> = {}) {
  return call(url, "POST", `/v1/orders/${encodeURIComponent(order_id)}/refund`, { key, headers });
}

async function refundTransfers(order_id: string) {
  const rows = await sql<{ amount_minor: number; state: string }>`
    select amount_minor, state from ledger_transfers where kind = 'refund' and reference = ${order_id}`.execute(
    db,
  );
  return rows.rows;
}

async function booksBalance(): Promise<void> {
  assert.deepEqual((await auditLedger(db)).breaches, []);
}

test("a new eSIM never installed is refunded: credited its total once, cancelled at the carrier and here", async () => {
  const bought = await buyEsim();
  const order_id = bought.order.orderID as string;
  const answer = await refund(api, bought.api_key, order_id);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.status, "refunded");
  assert.equal(answer.body.esim_iccid, bought.iccid);
  assert.ok(Date.parse(answer.body.refunded_at) > 0);
  assert.equal(await balance(api, bought.api_key), bought.credit);
  assert.deepEqual(await refundTransfers(order_id), [{ amount_minor: bought.paid, state: "posted" }]);

  const esim = await call(api, "GET", `/v1/esims/${bought.iccid}`, { key: bought.api_key });
  assert.equal(esim.body.status, "cancelled");
  assert.equal(esim.body.bundles[0].status, "cancelled");
  const cancelled = (await world.simulator.audit()).cancellations.filter((c) => c.reference === order_id);
  assert.deepEqual(
    cancelled.map((c) => [c.kind, c.iccid]),
    [["profile", bought.iccid]],
  );
  const events = await sql<{ type: string; data: Json }>`
    select type, data from events where partner_id = ${bought.partner_id} and type = 'order.refunded'`.execute(
    db,
  );
  assert.equal(events.rows.length, 1);
  assert.equal(events.rows[0]!.data.orderID, order_id);
  assert.equal(events.rows[0]!.data.status, "refunded");

  const shown = await call(api, "GET", `/v1/orders/${order_id}`, { key: bought.api_key });
  assert.deepEqual(shown.body, answer.body);
  const listed = await call(api, "GET", "/v1/profile/orders", { key: bought.api_key });
  assert.equal(listed.body.data[0].status, "refunded");
  const statement = await call(api, "GET", "/v1/profile/wallet/transactions", { key: bought.api_key });
  assert.deepEqual(
    statement.body.data.map((row: Json) => [
      row.type,
      row.order_id,
      row.amount.amount_minor,
      row.balance_after.amount_minor,
    ]),
    [
      ["refund", order_id, bought.paid, bought.credit],
      ["purchase", order_id, -bought.paid, bought.credit - bought.paid],
      ["credit", null, bought.credit, bought.credit],
    ],
  );

  const again = await refund(api, bought.api_key, order_id);
  assert.equal(again.status, 200);
  assert.equal(again.body.status, "refunded");
  assert.equal(await balance(api, bought.api_key), bought.credit, "no second credit");
  assert.equal((await refundTransfers(order_id)).length, 1);
  await booksBalance();
});

test("a queued top-up is refunded alone: its bundle cancelled, the eSIM and its own bundle untouched", async () => {
  const bought = await buyEsim();
  const topup = await topUp(bought);
  const before = await balance(api, bought.api_key);
  const answer = await refund(api, bought.api_key, topup.orderID);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.type, "topup");
  assert.equal(answer.body.status, "refunded");
  assert.equal(await balance(api, bought.api_key), before + topup.total.amount_minor);
  const esim = await call(api, "GET", `/v1/esims/${bought.iccid}`, { key: bought.api_key });
  assert.equal(esim.body.status, "released");
  assert.deepEqual(
    esim.body.bundles.map((b: Json) => b.status),
    ["queued", "cancelled"],
  );
  const profile = await world.simulator.esimState(bought.iccid);
  assert.deepEqual(
    profile.bundles.map((b) => b.reference),
    [bought.order.orderID],
    "the carrier no longer has the top-up's bundle",
  );
  await booksBalance();
});

test("refunding a new eSIM refunds its two queued top-ups with it; a later top-up is 422, nothing held", async () => {
  const bought = await buyEsim();
  const order_id = bought.order.orderID as string;
  const first = await topUp(bought);
  const topup_key = { "idempotency-key": "topup-of-refunded-esim" };
  const created = await fetch(`${api}/v1/orders/submit-topup`, {
    method: "POST",
    headers: { authorization: `Bearer ${bought.api_key}`, "content-type": "application/json", ...topup_key },
    body: JSON.stringify(topUpBody(bought.iccid, TOPUP)),
  });
  const created_text = await created.text();
  assert.equal(created.status, 200, created_text);
  const second = JSON.parse(created_text) as Json;
  const orders = [order_id, first.orderID as string, second.orderID as string];

  const answer = await refund(api, bought.api_key, order_id);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.orderID, order_id);
  assert.equal(await balance(api, bought.api_key), bought.credit, "every order's money is back");
  const statement = await call(api, "GET", "/v1/profile/wallet/transactions", { key: bought.api_key });
  const refunds = statement.body.data.filter((row: Json) => row.type === "refund");
  assert.deepEqual(refunds.map((row: Json) => row.order_id).sort(), [...orders].sort());
  const paid = [bought.paid, first.total.amount_minor, second.total.amount_minor];
  for (const [index, id] of orders.entries())
    assert.deepEqual(await refundTransfers(id), [{ amount_minor: paid[index], state: "posted" }]);
  for (const id of orders) {
    const shown = await call(api, "GET", `/v1/orders/${id}`, { key: bought.api_key });
    assert.equal(shown.body.status, "refunded", id);
    assert.ok(Date.parse(shown.body.refunded_at) > 0);
  }
  const events = await sql<{ order_id: string }>`
    select data->>'orderID' as order_id from events
    where partner_id = ${bought.partner_id} and type = 'order.refunded'`.execute(db);
  assert.deepEqual(events.rows.map((row) => row.order_id).sort(), [...orders].sort());
  const esim = await call(api, "GET", `/v1/esims/${bought.iccid}`, { key: bought.api_key });
  assert.equal(esim.body.status, "cancelled");
  assert.deepEqual(
    esim.body.bundles.map((b: Json) => b.status),
    ["cancelled", "cancelled", "cancelled"],
  );
  await booksBalance();

  // Refunding a top-up afterwards: the same refunded order, nothing credited again.
  const again = await refund(api, bought.api_key, second.orderID, { "idempotency-key": "late-topup-refund" });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.orderID, second.orderID);
  assert.equal(again.body.status, "refunded");
  assert.deepEqual(
    again.body,
    (await call(api, "GET", `/v1/orders/${second.orderID}`, { key: bought.api_key })).body,
  );
  assert.equal(await balance(api, bought.api_key), bought.credit, "no second credit");
  assert.equal((await refundTransfers(second.orderID)).length, 1);
  // The top-up's own key still replays what it answered when it completed.
  const replay = await fetch(`${api}/v1/orders/submit-topup`, {
    method: "POST",
    headers: { authorization: `Bearer ${bought.api_key}`, "content-type": "application/json", ...topup_key },
    body: JSON.stringify(topUpBody(bought.iccid, TOPUP)),
  });
  assert.equal(replay.status, 200);
  assert.equal(replay.headers.get("idempotent-replayed"), "true");
  assert.equal(await replay.text(), created_text);

  // A top-up after the cancel: a cancelled eSIM takes none (422), before any hold or carrier call.
  // One racing the cancel is refused by the carrier instead (the test after this one).
  const late = await call(api, "POST", "/v1/orders/submit-topup", {
    key: bought.api_key,
    body: topUpBody(bought.iccid, TOPUP),
  });
  assert.equal(late.status, 422, JSON.stringify(late.body));
  assert.equal(late.body.code, "topup_not_available");
  const later = await sql<{ status: string }>`
    select status from orders where iccid = ${bought.iccid} and type = 'topup' and order_id <> all(${orders})`.execute(
    db,
  );
  assert.deepEqual(later.rows, [], "no order");
  const wallet = await call(api, "GET", "/v1/profile/wallet", { key: bought.api_key });
  assert.equal(wallet.body.balance.amount_minor, bought.credit);
  assert.equal(wallet.body.pending.amount_minor, 0, "nothing held");
  const cancellations = (await world.simulator.audit()).cancellations.filter((c) => c.iccid === bought.iccid);
  assert.deepEqual(
    cancellations.map((c) => [c.kind, c.reference]),
    [["profile", order_id]],
  );
  await booksBalance();
  // The chaos run's audit too: no top-up left charged on a cancelled profile, each refund once.
  // (Confirmation emails go out in the background here: not what this test is about.)
  const audit = await auditSystem({ pool: world.database.pool, simulator: world.simulator });
  const breaches = audit.breaches.filter((breach) => !breach.startsWith("[one-email-per-new-esim]"));
  assert.deepEqual(breaches, [], formatAudit(audit));
});

test("a top-up pending while its eSIM is refunded: the refund waits, the carrier refuses the top-up, then the refund ends", async () => {
  const bought = await buyEsim();
  const { slow_ms } = await world.simulator.control({});
  // The carrier sleeps 2.5 s before deciding the top-up; the service gives up on it after 1.5 s.
  await world.simulator.control({ slow_ms: 2_500 });
  try {
    const key = { "idempotency-key": "slow-topup-of-refunded-esim" };
    const body = topUpBody(bought.iccid, TOPUP, { email: "slow@carrier.test" });
    const started = Date.now();
    const pending = call(api, "POST", "/v1/orders/submit-topup", { key: bought.api_key, body, headers: key });
    const topup_id = await waitFor("the pending top-up", async () => {
      const rows = await sql<{ order_id: string }>`
        select order_id from orders where iccid = ${bought.iccid} and type = 'topup' and status = 'pending'`.execute(
        db,
      );
      return rows.rows[0]?.order_id;
    });
    const waiting = await refund(api, bought.api_key, bought.order.orderID);
    assert.equal(waiting.status, 409, JSON.stringify(waiting.body));
    assert.equal(waiting.body.code, "request_in_progress");
    assert.deepEqual(await refundTransfers(bought.order.orderID), [], "nothing credited yet");
    assert.notEqual((await pending).status, 200);
    // Once the carrier decided (the profile was cancelled meanwhile), the top-up's retry fails it.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 2_800 - Date.now())));
    const retried = await call(api, "POST", "/v1/orders/submit-topup", {
      key: bought.api_key,
      body,
      headers: key,
    });
    assert.notEqual(retried.status, 200, JSON.stringify(retried.body));
    const order = await call(api, "GET", `/v1/orders/${topup_id}`, { key: bought.api_key });
    assert.equal(order.body.status, "failed");

    // The refund's retry now finishes it (409 while the refund sweep happens to hold it).
    const answer = await waitFor("the refund", async () => {
      const retry = await refund(api, bought.api_key, bought.order.orderID);
      if (retry.status === 409 && retry.body.code === "request_in_progress") return null;
      return retry;
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const wallet = await call(api, "GET", "/v1/profile/wallet", { key: bought.api_key });
    assert.equal(wallet.body.balance.amount_minor, bought.credit);
    assert.equal(wallet.body.pending.amount_minor, 0, "the refused top-up's hold is voided");
    assert.deepEqual(await refundTransfers(topup_id), []);
    await booksBalance();
  } finally {
    await world.simulator.control({ slow_ms });
  }
});

test("a top-up the carrier took just before its eSIM's cancel, completed here after: refunded with the eSIM", async () => {
  const bought = await buyEsim();
  const key = { "idempotency-key": "topup-taken-before-cancel" };
  const body = topUpBody(bought.iccid, TOPUP);
  // The top-up's first call finds the carrier down: the order stays pending (the resolver waits 2.5 s).
  await world.simulator.control({ down: true });
  try {
    const first = await call(api, "POST", "/v1/orders/submit-topup", {
      key: bought.api_key,
      body,
      headers: key,
    });
    assert.equal(first.status, 503, JSON.stringify(first.body));
  } finally {
    await world.simulator.control({ down: false });
  }
  const rows = await sql<{
    order_id: string;
    external_package_id: string;
    data_mb: number | null;
    validity_days: number;
  }>`
    select order_id, external_package_id, data_mb, validity_days from orders
    where iccid = ${bought.iccid} and type = 'topup' and status = 'pending'`.execute(db);
  const topup = rows.rows[0]!;
  // The carrier takes it (as a retry in flight would), before the eSIM's refund cancels the profile.
  const taken = await carrier.topUp({
    reference: topup.order_id,
    iccid: bought.iccid,
    ...topup,
    end_user_email: "ana@example.com",
  });
  assert.equal(taken.kind, "ok", JSON.stringify(taken));
  const waiting = await refund(api, bought.api_key, bought.order.orderID);
  if (waiting.status !== 200)
    assert.equal(waiting.body.code, "request_in_progress", JSON.stringify(waiting.body));
  // The top-up completes here after the carrier's cancel (its retry hears the recorded ok) ...
  const completed = await call(api, "POST", "/v1/orders/submit-topup", {
    key: bought.api_key,
    body,
    headers: key,
  });
  assert.equal(completed.status, 200, JSON.stringify(completed.body));
  // ... and the eSIM's refund, finishing now, refunds it with the eSIM.
  await waitFor("the refund", async () => {
    const retry = await refund(api, bought.api_key, bought.order.orderID);
    return retry.status === 200 ? retry : null;
  });
  const order = await call(api, "GET", `/v1/orders/${topup.order_id}`, { key: bought.api_key });
  assert.equal(order.body.status, "refunded");
  assert.equal(await balance(api, bought.api_key), bought.credit);
  assert.deepEqual(await refundTransfers(topup.order_id), [
    { amount_minor: completed.body.total.amount_minor, state: "posted" },
  ]);
  await booksBalance();
});

test("refused with each reason, nothing credited: not_completed, esim_installed, bundle_used", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  const failed = await submit(api, partner.api_key, cart.cart_key, { email: "decline@carrier.test" });
  assert.equal(failed.status, 502);
  const failed_id = (
    await sql<{ order_id: string }>`select order_id from orders where cart_key = ${cart.cart_key}`.execute(db)
  ).rows[0]!.order_id;
  const notCompleted = await refund(api, partner.api_key, failed_id);
  assert.equal(notCompleted.status, 409);
  assert.equal(notCompleted.body.code, "refund_not_allowed");
  assert.equal(notCompleted.body.reason, "not_completed");

  // Installed at the carrier: whether or not its signal reached us yet, the answer is the same.
  const installed = await buyEsim();
  await world.simulator.simulate(installed.iccid, { event: "install" });
  const refusedInstalled = await refund(api, installed.api_key, installed.order.orderID);
  assert.equal(refusedInstalled.status, 409, JSON.stringify(refusedInstalled.body));
  assert.equal(refusedInstalled.body.reason, "esim_installed");

  const used = await buyEsim();
  const topup = await topUp(used);
  // 1,500 MB: the original 1 GB bundle is used up and the top-up's bundle started.
  await world.simulator.simulate(used.iccid, { event: "use_data", data_mb: 1_500 });
  const refusedTopUp = await refund(api, used.api_key, topup.orderID);
  assert.equal(refusedTopUp.status, 409, JSON.stringify(refusedTopUp.body));
  assert.equal(refusedTopUp.body.reason, "bundle_used");
  const refusedEsim = await refund(api, used.api_key, used.order.orderID);
  assert.equal(refusedEsim.status, 409);
  assert.ok(["esim_installed", "bundle_used"].includes(refusedEsim.body.reason), refusedEsim.body.reason);

  for (const who of [installed, used]) {
    assert.equal(
      await balance(api, who.api_key),
      who.credit - who.paid - (who === used ? topup.total.amount_minor : 0),
    );
  }
  const intents = await sql<{ n: number }>`
    select count(*)::int as n from order_refunds where order_id in (${installed.order.orderID}, ${topup.orderID})`.execute(
    db,
  );
  assert.equal(intents.rows[0]!.n, 0, "a carrier refusal leaves no refund under way");
  await booksBalance();
});

test("a refund request with a body (a partial amount, say) is 400 and refunds nothing; {} refunds", async () => {
  const bought = await buyEsim();
  const path = `/v1/orders/${encodeURIComponent(bought.order.orderID)}/refund`;
  const partial = await call(api, "POST", path, { key: bought.api_key, body: { amount_minor: 100 } });
  assert.equal(partial.status, 400, JSON.stringify(partial.body));
  assert.equal(partial.body.code, "invalid_request");
  assert.deepEqual(partial.body.errors, [
    { field: "amount_minor", code: "unknown_field", message: "is not a known field" },
  ]);
  const listed = await call(api, "POST", path, { key: bought.api_key, body: [] });
  assert.equal(listed.status, 400, JSON.stringify(listed.body));
  assert.equal(await balance(api, bought.api_key), bought.credit - bought.paid, "nothing credited");
  assert.deepEqual(await refundTransfers(bought.order.orderID), []);
  // An empty object, what many clients send by default, is no body.
  const refunded = await call(api, "POST", path, { key: bought.api_key, body: {} });
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  assert.equal(await balance(api, bought.api_key), bought.credit);
});

test("a refund request with a query parameter (?amount_minor=100, a partial amount) is 400 and refunds nothing", async () => {
  const bought = await buyEsim();
  const path = `/v1/orders/${encodeURIComponent(bought.order.orderID)}/refund`;
  const partial = await call(api, "POST", `${path}?amount_minor=100`, { key: bought.api_key });
  assert.equal(partial.status, 400, JSON.stringify(partial.body));
  assert.equal(partial.body.code, "invalid_request");
  assert.deepEqual(partial.body.errors, [
    { field: "amount_minor", code: "unknown_field", message: "is not a known query parameter" },
  ]);
  assert.equal(await balance(api, bought.api_key), bought.credit - bought.paid, "nothing credited");
  assert.deepEqual(await refundTransfers(bought.order.orderID), []);
  const refunded = await call(api, "POST", path, { key: bought.api_key });
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  assert.equal(await balance(api, bought.api_key), bought.credit);
});

test("window_passed past REFUND_WINDOW_DAYS; unknown and another partner's orders are 404", async () => {
  const strict = await world.startService({ REFUND_WINDOW_DAYS: "0" });
  try {
    const bought = await buyEsim(strict.url);
    const late = await refund(strict.url, bought.api_key, bought.order.orderID);
    assert.equal(late.status, 409);
    assert.equal(late.body.reason, "window_passed");
    const other = await newPartner(api, 0, "Other");
    const foreign = await refund(api, other.api_key, bought.order.orderID);
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.code, "order_not_found");
    const unknown = await refund(api, other.api_key, "ord_doesnotexist00000000");
    assert.equal(unknown.status, 404);
    assert.equal(await balance(api, bought.api_key), bought.credit - bought.paid);
  } finally {
    await strict.stop();
  }
});

test("Idempotency-Key: a replay is byte for byte with Idempotent-Replayed; another order under it is 422", async () => {
  const bought = await buyEsim();
  const headers = { "idempotency-key": "refund-key-1" };
  const first = await fetch(`${api}/v1/orders/${bought.order.orderID}/refund`, {
    method: "POST",
    headers: { authorization: `Bearer ${bought.api_key}`, ...headers },
  });
  const first_text = await first.text();
  assert.equal(first.status, 200, first_text);
  const replay = await fetch(`${api}/v1/orders/${bought.order.orderID}/refund`, {
    method: "POST",
    headers: { authorization: `Bearer ${bought.api_key}`, ...headers },
  });
  assert.equal(replay.status, 200);
  assert.equal(replay.headers.get("idempotent-replayed"), "true");
  assert.equal(await replay.text(), first_text);
  const second = await buyEsim();
  const reused = await refund(api, bought.api_key, second.order.orderID, headers);
  assert.equal(reused.status, 422);
  assert.equal(reused.body.code, "idempotency_key_reused");
  const keys = await sql<{ state: string; refund_of: string; response_status: number }>`
    select state, refund_of, response_status from idempotency_keys where idempotency_key = 'refund-key-1'`.execute(
    db,
  );
  assert.deepEqual(keys.rows, [
    { state: "completed", refund_of: bought.order.orderID, response_status: 200 },
  ]);
  await booksBalance();
});

test("20 concurrent refunds of one order, then retries: one credit, one refund transfer", async () => {
  const bought = await buyEsim();
  const order_id = bought.order.orderID as string;
  const answers = await inParallel(20, 20, (i) =>
    refund(api, bought.api_key, order_id, i % 2 === 0 ? {} : { "idempotency-key": `race-${i}` }),
  );
  const statuses = answers.map((answer) => answer.status);
  assert.ok(statuses.includes(200), statuses.join(","));
  for (const answer of answers) {
    assert.ok(
      answer.status === 200 || answer.body.code === "request_in_progress",
      JSON.stringify(answer.body),
    );
  }
  const retries = await inParallel(20, 20, () => refund(api, bought.api_key, order_id));
  assert.deepEqual(
    retries.map((answer) => answer.status),
    Array(20).fill(200),
  );
  assert.equal(await balance(api, bought.api_key), bought.credit);
  assert.deepEqual(await refundTransfers(order_id), [{ amount_minor: bought.paid, state: "posted" }]);
  await booksBalance();
});

test("carrier unavailable: 503 and nothing credited; once it is back the sweep finishes the refund", async () => {
  const bought = await buyEsim();
  const order_id = bought.order.orderID as string;
  await call(world.simulator.url, "POST", "/control", {
    headers: { authorization: `Bearer ${world.simulator.apiKey}` },
    body: { down: true },
  });
  try {
    const answer = await refund(api, bought.api_key, order_id);
    assert.equal(answer.status, 503);
    assert.equal(answer.body.code, "carrier_unavailable");
    assert.equal(answer.body.order_id, order_id);
    assert.equal(await balance(api, bought.api_key), bought.credit - bought.paid);
  } finally {
    await call(world.simulator.url, "POST", "/control", {
      headers: { authorization: `Bearer ${world.simulator.apiKey}` },
      body: { down: false },
    });
  }
  const deadline = Date.now() + 20_000;
  while ((await refundTransfers(order_id)).length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.equal(await balance(api, bought.api_key), bought.credit, "the sweep refunded it without a retry");
  await booksBalance();
});

test("the carrier's cancels: idempotent by reference, refused once installed or used", async () => {
  const fresh = await buyEsim();
  const request = { reference: fresh.order.orderID as string, iccid: fresh.iccid };
  assert.deepEqual(await carrier.cancelProfile(request), { kind: "ok" });
  assert.deepEqual(await carrier.cancelProfile(request), { kind: "ok" }, "a second cancel answers ok");
  const wrong = await carrier.cancelProfile({ reference: "ord_someoneelse000000", iccid: fresh.iccid });
  assert.equal(wrong.kind, "refused");

  const installed = await buyEsim();
  await world.simulator.simulate(installed.iccid, { event: "install" });
  assert.deepEqual(
    await carrier.cancelProfile({ reference: installed.order.orderID, iccid: installed.iccid }),
    {
      kind: "refused",
      reason: "esim_installed",
    },
  );

  const topped = await buyEsim();
  const topup = await topUp(topped);
  const bundle = { reference: topup.orderID as string, iccid: topped.iccid };
  await world.simulator.simulate(topped.iccid, { event: "use_data", data_mb: 1_500 });
  assert.deepEqual(await carrier.cancelBundle(bundle), { kind: "refused", reason: "bundle_used" });
  const queued = await topUp(topped);
  const second = { reference: queued.orderID as string, iccid: topped.iccid };
  assert.deepEqual(await carrier.cancelBundle(second), { kind: "ok" });
  assert.deepEqual(await carrier.cancelBundle(second), { kind: "ok" });
  // A cancelled bundle is gone from the carrier's signals; the used ones remain.
  const state = await world.simulator.esimState(topped.iccid);
  assert.deepEqual(
    state.bundles.map((b) => b.reference),
    [topped.order.orderID, topup.orderID],
  );
});
