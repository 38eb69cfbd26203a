// Group orders (issue 34, contract "Group orders"): a cart of `quantity` eSIMs, one submit, one
// order, one hold of quantity x price; each eSIM provisioned on its own by the carrier simulator
// (a real process over HTTP), each line final on its own. Lines the carrier refuses for good (the
// sandbox's decline@carrier.test, per traveller) are never charged; when every line is refused the
// submit answers as a declined purchase does. Retries by cart_key return the same order.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { resolveDueOrders } from "../src/orders/resolve-pending-orders.ts";
import { orderFinishers } from "../src/topups/order-finishers.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { END_USER } from "./support/fixtures.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const api = await createTestApp(
  { carrier_timeout_ms: 2_000, resolve_after_ms: 600_000 },
  { database, carrier },
);
// The same service with a short give-up: the resolver's last look at an order pending for an hour.
const short = await createTestApp(
  {
    carrier_timeout_ms: 2_000,
    resolve_after_ms: 600_000,
    pending_give_up_hours: 1,
    pending_fail_after_hours: 1,
  },
  { database, carrier },
);
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const PACKAGE_ID = "fr-1gb-7d";

type Answer = { statusCode: number; headers: Record<string, unknown>; body: string; json(): any };

async function cartOf(api_key: string, quantity: number | undefined): Promise<Answer> {
  return api.app.inject({
    method: "POST",
    url: "/v1/orders/cart",
    headers: api.auth(api_key),
    payload: quantity === undefined ? { package_id: PACKAGE_ID } : { package_id: PACKAGE_ID, quantity },
  });
}

async function submit(api_key: string, body: object): Promise<Answer> {
  return api.app.inject({
    method: "POST",
    url: "/v1/orders/submit",
    headers: api.auth(api_key),
    payload: body,
  });
}

async function balanceOf(api_key: string): Promise<number> {
  const wallet = await api.app.inject({
    method: "GET",
    url: "/v1/profile/wallet",
    headers: api.auth(api_key),
  });
  return wallet.json().balance.amount_minor;
}

function traveller(n: number, email = `traveller${n}@example.com`) {
  return { first_name: `T${n}`, last_name: "Lima", email };
}

test("a cart of 3 costs 3 x the price; a quantity outside 1-50 is 400 and makes no cart", async () => {
  const partner = await api.createPartner("Quantity", 100_000);
  const one = (await cartOf(partner.api_key, undefined)).json();
  assert.equal(one.quantity, 1);
  const three = await cartOf(partner.api_key, 3);
  assert.equal(three.statusCode, 201, three.body);
  assert.equal(three.json().quantity, 3);
  assert.equal(three.json().total.amount_minor, 3 * one.total.amount_minor);
  for (const quantity of [0, 51, 2.5]) {
    const refused = await cartOf(partner.api_key, quantity);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().code, "invalid_request");
    assert.equal(refused.json().errors[0].field, "quantity");
  }
  const carts = await sql<{ n: number }>`
    select count(*)::int as n from carts where partner_id = ${partner.partner_id}`.execute(api.db);
  assert.equal(carts.rows[0]!.n, 2);
});

test("a group of 4 with one traveller declined: one order, 3 eSIMs charged, the declined line never charged", async () => {
  const partner = await api.createPartner("Group", 100_000);
  const before = await balanceOf(partner.api_key);
  const cart = (await cartOf(partner.api_key, 4)).json();
  const price = cart.total.amount_minor / 4;
  const travellers = [traveller(0), traveller(1, "decline@carrier.test"), traveller(2), traveller(3)];
  const body = { cart_key: cart.cart_key, ...END_USER, travellers };
  const first = await submit(partner.api_key, body);
  assert.equal(first.statusCode, 200, first.body);
  const order = first.json();
  assert.equal(order.status, "completed");
  assert.equal(order.quantity, 4);
  assert.equal(order.total.amount_minor, 3 * price, "total is what was charged");
  assert.deepEqual(
    order.purchases.map((p: { status: string }) => p.status),
    ["completed", "failed", "completed", "completed"],
  );
  assert.deepEqual(Object.keys(order.purchases[1]).sort(), ["package_id", "start_date", "status"]);
  const iccids = order.purchases
    .filter((p: { iccid?: string }) => p.iccid)
    .map((p: { iccid: string }) => p.iccid);
  assert.equal(new Set(iccids).size, 3, "three distinct eSIMs");
  assert.equal(order.esim_iccid, iccids[0]);
  assert.equal(await balanceOf(partner.api_key), before - 3 * price, "charged for three, once");

  // Every eSIM is the partner's, and the carrier made exactly one profile per line reference.
  for (const iccid of iccids) {
    const esim = await api.app.inject({
      method: "GET",
      url: `/v1/esims/${iccid}`,
      headers: api.auth(partner.api_key),
    });
    assert.equal(esim.statusCode, 200, esim.body);
  }
  const lines = await sql<{ reference: string; status: string }>`
    select reference, status from order_lines where order_id = ${order.orderID} order by position`.execute(
    api.db,
  );
  assert.deepEqual(
    lines.rows.map((line) => line.reference),
    [0, 1, 2, 3].map((n) => `${order.orderID}-${n}`),
  );

  // The retry: the same bytes, replayed, nothing more charged.
  const retry = await submit(partner.api_key, body);
  assert.equal(retry.statusCode, 200);
  assert.equal(retry.body, first.body);
  assert.equal(retry.headers["idempotent-replayed"], "true");
  const shown = await api.app.inject({
    method: "GET",
    url: `/v1/orders/${order.orderID}`,
    headers: api.auth(partner.api_key),
  });
  assert.deepEqual(shown.json().purchases, order.purchases);
  assert.equal(await balanceOf(partner.api_key), before - 3 * price);
  const transfer = await sql<{ amount_minor: number; held_minor: number | null; state: string }>`
    select amount_minor, held_minor, state from ledger_transfers where reference = ${order.orderID}`.execute(
    api.db,
  );
  assert.deepEqual(transfer.rows, [{ amount_minor: 3 * price, held_minor: 4 * price, state: "posted" }]);
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
});

test("a group whose every traveller is declined fails as a declined purchase does: 502, nothing charged", async () => {
  const partner = await api.createPartner("All declined", 100_000);
  const before = await balanceOf(partner.api_key);
  const cart = (await cartOf(partner.api_key, 2)).json();
  const travellers = [traveller(0, "decline@carrier.test"), traveller(1, "decline@carrier.test")];
  const body = { cart_key: cart.cart_key, ...END_USER, travellers };
  const first = await submit(partner.api_key, body);
  assert.equal(first.statusCode, 502, first.body);
  assert.equal(first.json().code, "carrier_error");
  const retry = await submit(partner.api_key, body);
  assert.equal(retry.statusCode, 502);
  assert.equal(retry.headers["idempotent-replayed"], "true");
  assert.equal(await balanceOf(partner.api_key), before, "nothing charged");
  const orders = await sql<{ status: string }>`
    select status from orders where cart_key = ${cart.cart_key}`.execute(api.db);
  assert.deepEqual(orders.rows, [{ status: "failed" }]);
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
});

test("travellers must be one per eSIM: another count is 400 and changes nothing", async () => {
  const partner = await api.createPartner("Counts", 100_000);
  const before = await balanceOf(partner.api_key);
  const cart = (await cartOf(partner.api_key, 3)).json();
  for (const travellers of [[traveller(0)], [0, 1, 2, 3].map((n) => traveller(n))]) {
    const refused = await submit(partner.api_key, { cart_key: cart.cart_key, ...END_USER, travellers });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().errors[0].field, "travellers");
  }
  const bad = await submit(partner.api_key, {
    cart_key: cart.cart_key,
    ...END_USER,
    travellers: [traveller(0), traveller(1, "not an address"), traveller(2)],
  });
  assert.equal(bad.statusCode, 400, bad.body);
  assert.equal(bad.json().errors[0].field, "travellers.1.email");
  assert.equal(await balanceOf(partner.api_key), before);
  const orders = await sql<{ n: number }>`
    select count(*)::int as n from orders where cart_key = ${cart.cart_key}`.execute(api.db);
  assert.equal(orders.rows[0]!.n, 0);
});

test("a group without travellers: every eSIM made and charged, one order of quantity 5", async () => {
  const partner = await api.createPartner("No travellers", 100_000);
  const cart = (await cartOf(partner.api_key, 5)).json();
  const answer = await submit(partner.api_key, { cart_key: cart.cart_key, ...END_USER });
  assert.equal(answer.statusCode, 200, answer.body);
  assert.equal(answer.json().purchases.length, 5);
  assert.equal(answer.json().total.amount_minor, cart.total.amount_minor);
  const transfer = await sql<{ held_minor: number | null }>`
    select held_minor from ledger_transfers where reference = ${answer.json().orderID}`.execute(api.db);
  assert.deepEqual(transfer.rows, [{ held_minor: null }], "all of the hold posted");
  const outbox = await sql<{ position: number }>`
    select position from email_outbox where order_id = ${answer.json().orderID}`.execute(api.db);
  assert.deepEqual(outbox.rows, [{ position: 0 }], "one email, with every eSIM, to the end user");
});

test("a line the carrier never answers keeps the group pending (503, nothing charged); settling it by hand is 409; the resolver's last look ends it", async () => {
  const partner = await api.createPartner("Stuck", 100_000);
  const before = await balanceOf(partner.api_key);
  const cart = (await cartOf(partner.api_key, 3)).json();
  const price = cart.total.amount_minor / 3;
  const travellers = [
    traveller(0),
    traveller(1, "unavailable@carrier.test"),
    traveller(2, "decline@carrier.test"),
  ];
  const body = { cart_key: cart.cart_key, ...END_USER, travellers };
  const first = await submit(partner.api_key, body);
  assert.equal(first.statusCode, 503, first.body);
  assert.equal(first.json().code, "carrier_unavailable");
  const order_id = first.json().order_id;
  const lines = await sql<{ status: string }>`
    select status from order_lines where order_id = ${order_id} order by position`.execute(api.db);
  assert.deepEqual(
    lines.rows.map((line) => line.status),
    ["completed", "pending", "failed"],
    "each line final on its own",
  );
  assert.equal(await balanceOf(partner.api_key), before - 3 * price, "held, not charged");

  const settle = await api.app.inject({
    method: "POST",
    url: `/admin/orders/${order_id}/settle`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: { outcome: "failed", reason: "carrier ticket 42" },
  });
  assert.equal(settle.statusCode, 409, settle.body);
  assert.equal(settle.json().code, "group_order_not_settled");

  // Two hours later the resolver's last look: the carrier has no record of the unanswered line.
  const looked = await carrier.lookUpOutcome(`${order_id}-1`);
  assert.equal(looked.kind, "not_found", JSON.stringify(looked));
  await sql`update orders set created_at = now() - interval '2 hours', lease_until = null, next_resolve_at = now()
            where order_id = ${order_id}`.execute(api.db);
  await resolveDueOrders(short.ctx, orderFinishers(short.ctx.config), 10, quiet);
  const shown = await api.app.inject({
    method: "GET",
    url: `/v1/orders/${order_id}`,
    headers: api.auth(partner.api_key),
  });
  assert.equal(shown.json().status, "completed", shown.body);
  assert.deepEqual(
    shown.json().purchases.map((p: { status: string }) => p.status),
    ["completed", "failed", "failed"],
  );
  assert.equal(shown.json().total.amount_minor, price);
  assert.equal(await balanceOf(partner.api_key), before - price, "the one eSIM made, charged once");
  const retry = await submit(partner.api_key, body);
  assert.equal(retry.statusCode, 200, retry.body);
  assert.deepEqual(retry.json().purchases, shown.json().purchases);
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
});

test("a group order is not refunded through the API: 409 refund_not_allowed, reason group_order", async () => {
  const partner = await api.createPartner("No group refunds", 100_000);
  const cart = (await cartOf(partner.api_key, 2)).json();
  const order = (await submit(partner.api_key, { cart_key: cart.cart_key, ...END_USER })).json();
  const refund = await api.app.inject({
    method: "POST",
    url: `/v1/orders/${order.orderID}/refund`,
    headers: { ...api.auth(partner.api_key), "idempotency-key": "refund-group-1" },
  });
  assert.equal(refund.statusCode, 409, refund.body);
  assert.equal(refund.json().code, "refund_not_allowed");
  assert.equal(refund.json().reason, "group_order");
});

test("each eSIM of a group hears its own carrier signals: usage on one moves that eSIM's bundle only", async () => {
  const partner = await api.createPartner("Signals", 100_000);
  const cart = (await cartOf(partner.api_key, 3)).json();
  const order = (await submit(partner.api_key, { cart_key: cart.cart_key, ...END_USER })).json();
  assert.equal(order.status, "completed");
  const [first, second] = order.purchases.map((p: { iccid: string }) => p.iccid);
  const used = await api.app.inject({
    method: "POST",
    url: `/v1/sandbox/esims/${second}/simulate`,
    headers: api.auth(partner.api_key),
    payload: { event: "use_data", data_mb: 300 },
  });
  assert.equal(used.statusCode, 200, used.body);
  const bundles = await sql<{ iccid: string; data_used_mb: number; status: string }>`
    select iccid, data_used_mb, status from esim_bundles where order_id = ${order.orderID}`.execute(api.db);
  const of = (iccid: string) => bundles.rows.find((row) => row.iccid === iccid)!;
  assert.equal(Number(of(second).data_used_mb), 300, "the signal reached the second eSIM's bundle");
  assert.equal(of(second).status, "active");
  assert.equal(Number(of(first).data_used_mb), 0, "and no other eSIM's");
  assert.equal(of(first).status, "queued");
});
