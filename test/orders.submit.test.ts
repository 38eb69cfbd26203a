// New eSIM purchase end to end: real PostgreSQL, real HTTP to a real service process, the
// carrier simulator as its own process and a real SMTP server.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { isValidIccid } from "../src/lib/luhn.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { parseMessage, partText } from "./support/smtp.ts";
import {
  balance,
  call,
  createWorld,
  END_USER,
  newCart,
  newPartner,
  submit,
  waitFor,
} from "./support/world.ts";

const world = await createWorld({ services: 2 });
const [api, api2] = world.services.map((s) => s.url) as [string, string];
const db = createKysely<Database>(world.database.pool);

async function fr1gbPrice(key: string): Promise<number> {
  const packages = await call(api, "GET", "/v1/esim/destination/FR/packages", { key });
  return packages.body.data.find((p: any) => p.package_id === "fr-1gb-7d").wholesale_price.amount_minor;
}

async function ordersOfCart(cart_key: string) {
  return (
    await sql<{
      order_id: string;
      status: string;
    }>`select order_id, status from orders where cart_key = ${cart_key}`.execute(db)
  ).rows;
}

test("happy path: cart, submit, a provisioned eSIM, one debit, one posted transfer, one email", async () => {
  const partner = await newPartner(api, 100_00);
  const price = await fr1gbPrice(partner.api_key);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  assert.match(cart.cart_key, /^cart_[A-Za-z0-9_-]{22,}$/);
  assert.equal(cart.total.amount_minor, price);
  assert.equal(cart.start_date, null);
  const expiresIn = Date.parse(cart.expires_at) - Date.now();
  assert.ok(expiresIn > 29 * 60_000 && expiresIn <= 30 * 60_000 + 1000);

  const response = await submit(api, partner.api_key, cart.cart_key, { client_reference: "booking-42" });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  const order = response.body;
  assert.match(order.orderID, /^ord_/);
  assert.equal(order.type, "esim");
  assert.equal(order.status, "completed");
  assert.equal(order.client_reference, "booking-42");
  assert.deepEqual(order.total, { amount_minor: price, currency: "USD" });
  assert.match(order.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(order.purchases.length, 1);
  const purchase = order.purchases[0];
  assert.ok(isValidIccid(purchase.iccid), purchase.iccid);
  assert.equal(purchase.qr_code, `LPA:1$${purchase.smdp_address}$${purchase.activation_code}`);
  assert.equal(purchase.package_id, "fr-1gb-7d");
  assert.equal(purchase.start_date, null);

  assert.equal(await balance(api, partner.api_key), 100_00 - price);
  const transfers = await sql<{ state: string; amount_minor: number }>`
    select state, amount_minor from ledger_transfers where reference = ${order.orderID}`.execute(db);
  assert.deepEqual(transfers.rows, [{ state: "posted", amount_minor: price }]);
  assert.deepEqual((await auditLedger(db)).breaches, []);

  const email = await waitFor("the confirmation email", async () =>
    world.smtp.messages.find((m) => m.raw.includes(purchase.iccid)),
  );
  assert.deepEqual(email.envelope.rcpt_to, [END_USER.email]);
  const html = partText(parseMessage(email.raw), "text/html");
  assert.ok(html.includes(purchase.activation_code));
  assert.match(email.raw, /image\/png/);

  const fetched = await call(api2, "GET", `/v1/orders/${order.orderID}`, { key: partner.api_key });
  assert.deepEqual(fetched.body, order);
});

test("a retry after success returns the identical order: no second debit, provisioning or email", async () => {
  const partner = await newPartner(api, 50_00);
  const cart = await newCart(api, partner.api_key);
  const first = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(first.status, 200);
  const after = await balance(api, partner.api_key);
  await waitFor("the email", async () =>
    world.smtp.messages.some((m) => m.raw.includes(first.body.purchases[0].iccid)),
  );
  const retry = await submit(api2, partner.api_key, cart.cart_key, {
    email: "other@example.com",
    client_reference: "changed",
  });
  assert.equal(retry.status, 200);
  assert.deepEqual(retry.body, first.body);
  assert.equal(await balance(api, partner.api_key), after);
  const audit = await world.simulator.audit();
  assert.equal(audit.provisionings.filter((p) => p.reference === first.body.orderID).length, 1);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(world.smtp.messages.filter((m) => m.raw.includes(first.body.purchases[0].iccid)).length, 1);
});

test("a retry in another process after the wallet ran dry answers the order, not 402, and holds nothing", async () => {
  // The order's insert and the hold go out together: a cart that has its order rolls the hold back
  // and answers that order, whether or not the hold found the funds.
  const partner = await newPartner(api, 350);
  assert.equal(await fr1gbPrice(partner.api_key), 350, "the wallet covers exactly one cart");
  const cart = await newCart(api, partner.api_key);
  const first = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(await balance(api, partner.api_key), 0);
  const retry = await submit(api2, partner.api_key, cart.cart_key);
  assert.equal(retry.status, 200, JSON.stringify(retry.body));
  assert.deepEqual(retry.body, first.body);
  assert.equal(await balance(api2, partner.api_key), 0);
  assert.equal((await ordersOfCart(cart.cart_key)).length, 1);
  const wallet = await sql<{ pending_debits_minor: number }>`
    select pending_debits_minor from ledger_accounts where partner_id = ${partner.partner_id}`.execute(db);
  assert.deepEqual(wallet.rows, [{ pending_debits_minor: 0 }], "the retry's hold was rolled back");
  assert.deepEqual((await auditLedger(db)).breaches, []);
});

test("50 concurrent submits of one cart across two processes: one order, one debit, one provisioning, one email", async () => {
  const partner = await newPartner(api, 100_00);
  const price = await fr1gbPrice(partner.api_key);
  const cart = await newCart(api, partner.api_key);
  await world.simulator.control({ latency_ms: 300 });
  try {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => submit(i % 2 === 0 ? api : api2, partner.api_key, cart.cart_key)),
    );
    const ok = answers.filter((a) => a.status === 200);
    const busy = answers.filter((a) => a.status === 409);
    assert.equal(ok.length + busy.length, 50, JSON.stringify(answers.map((a) => a.status)));
    assert.ok(ok.length >= 1);
    for (const a of busy) {
      assert.equal(a.body.code, "request_in_progress");
      assert.ok(Number(a.headers.get("retry-after")) >= 1);
    }
    assert.equal(new Set(ok.map((a) => a.body.orderID)).size, 1);
    const orderID = ok[0]!.body.orderID;
    for (const a of busy) assert.equal(a.body.order_id, orderID);
    const final = await submit(api2, partner.api_key, cart.cart_key);
    assert.equal(final.body.orderID, orderID);
    assert.equal((await ordersOfCart(cart.cart_key)).length, 1);
    assert.equal(await balance(api, partner.api_key), 100_00 - price);
    const audit = await world.simulator.audit();
    assert.equal(audit.provisionings.filter((p) => p.reference === orderID).length, 1);
    const iccid = final.body.purchases[0].iccid;
    await waitFor("the email", async () => world.smtp.messages.some((m) => m.raw.includes(iccid)));
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(world.smtp.messages.filter((m) => m.raw.includes(iccid)).length, 1);
  } finally {
    await world.simulator.control({ latency_ms: 0 });
  }
});

test("20 concurrent submits of different carts over a wallet that covers 7: exactly 7 orders, balance zero", async () => {
  const probe = await newPartner(api, 0);
  const price = await fr1gbPrice(probe.api_key);
  const partner = await newPartner(api, 7 * price);
  const carts = await Promise.all(Array.from({ length: 20 }, () => newCart(api, partner.api_key)));
  const answers = await Promise.all(
    carts.map((cart, i) => submit(i % 2 ? api : api2, partner.api_key, cart.cart_key)),
  );
  const statuses = answers.map((a) => a.status).sort();
  assert.equal(statuses.filter((s) => s === 200).length, 7, JSON.stringify(statuses));
  assert.equal(statuses.filter((s) => s === 402).length, 13);
  for (const a of answers.filter((a) => a.status === 402)) assert.equal(a.body.code, "insufficient_balance");
  assert.equal(await balance(api, partner.api_key), 0);
  const orders = await sql<{
    n: number;
  }>`select count(*)::int as n from orders where partner_id = ${partner.partner_id}`.execute(db);
  assert.equal(orders.rows[0]!.n, 7, "a 402 leaves no order behind");
  assert.deepEqual((await auditLedger(db)).breaches, []);
});

test("402 insufficient_balance holds nothing, provisions nothing, and the cart can be paid later", async () => {
  const partner = await newPartner(api, 1);
  const cart = await newCart(api, partner.api_key);
  const before = (await world.simulator.audit()).counts.provisionings;
  const refused = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(refused.status, 402);
  assert.equal(refused.body.code, "insufficient_balance");
  assert.equal(await balance(api, partner.api_key), 1);
  assert.equal((await world.simulator.audit()).counts.provisionings, before);
  assert.equal((await ordersOfCart(cart.cart_key)).length, 0);
  await call(api, "POST", `/admin/partners/${partner.partner_id}/wallet/credits`, {
    headers: { authorization: "Bearer world-admin-token-0123456789" },
    body: { amount_minor: 100_00, reference: "top-up" },
  });
  assert.equal((await submit(api, partner.api_key, cart.cart_key)).status, 200);
});

test("unknown carts and another partner's cart are both 404 cart_not_found", async () => {
  const owner = await newPartner(api, 100_00);
  const stranger = await newPartner(api, 100_00);
  const cart = await newCart(api, owner.api_key);
  const unknown = await submit(api, owner.api_key, "cart_doesnotexist0000000000");
  const foreign = await submit(api, stranger.api_key, cart.cart_key);
  for (const answer of [unknown, foreign]) {
    assert.equal(answer.status, 404);
    assert.equal(answer.body.code, "cart_not_found");
  }
  assert.equal(unknown.body.detail, foreign.body.detail);
  assert.equal(await balance(api, stranger.api_key), 100_00);
});

test("an expired cart is 410 cart_expired and nothing is charged", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key);
  await sql`update carts set expires_at = now() - interval '1 second' where cart_key = ${cart.cart_key}`.execute(
    db,
  );
  const answer = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(answer.status, 410);
  assert.equal(answer.body.code, "cart_expired");
  assert.equal(await balance(api, partner.api_key), 100_00);
});

test("a carrier refusal is 502 carrier_error: hold voided, order failed, balance unchanged, retry answers the same", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key);
  const refused = await submit(api, partner.api_key, cart.cart_key, { email: "decline@carrier.test" });
  assert.equal(refused.status, 502);
  assert.equal(refused.body.code, "carrier_error");
  assert.equal(await balance(api, partner.api_key), 100_00);
  const [order] = await ordersOfCart(cart.cart_key);
  assert.equal(order!.status, "failed");
  const transfer = await sql<{
    state: string;
  }>`select state from ledger_transfers where reference = ${order!.order_id}`.execute(db);
  assert.deepEqual(transfer.rows, [{ state: "voided" }]);
  const retry = await submit(api2, partner.api_key, cart.cart_key);
  assert.equal(retry.status, 502);
  assert.equal(retry.body.code, "carrier_error");
  assert.equal(await balance(api, partner.api_key), 100_00);
});

test("a carrier timeout is 503 carrier_unavailable; the order completes later, once, and retries see it", async () => {
  const partner = await newPartner(api, 100_00);
  const price = await fr1gbPrice(partner.api_key);
  const cart = await newCart(api, partner.api_key);
  const slow = await submit(api, partner.api_key, cart.cart_key, { email: "slow@carrier.test" });
  assert.equal(slow.status, 503);
  assert.equal(slow.body.code, "carrier_unavailable");
  const [pending] = await ordersOfCart(cart.cart_key);
  assert.equal(pending!.status, "pending");
  assert.equal(slow.body.order_id, pending!.order_id, "the 503 names the order whose outcome is pending");
  assert.equal(await balance(api, partner.api_key), 100_00 - price, "held while the outcome is unknown");
  const done = await waitFor("the order to complete", async () => {
    const retry = await submit(api2, partner.api_key, cart.cart_key, { email: "slow@carrier.test" });
    return retry.status === 200 ? retry : null;
  });
  assert.equal(done.body.orderID, pending!.order_id);
  assert.equal(await balance(api, partner.api_key), 100_00 - price);
  const audit = await world.simulator.audit();
  assert.equal(audit.provisionings.filter((p) => p.reference === pending!.order_id).length, 1);
  assert.deepEqual((await auditLedger(db)).breaches, []);
});

test("the carrier down, then up: the resolver finishes the order exactly once", async () => {
  const partner = await newPartner(api, 100_00);
  const price = await fr1gbPrice(partner.api_key);
  const cart = await newCart(api, partner.api_key);
  await world.simulator.control({ down: true });
  const down = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(down.status, 503);
  assert.equal(down.body.code, "carrier_unavailable");
  await world.simulator.control({ down: false });
  const [order] = await ordersOfCart(cart.cart_key);
  await waitFor("the resolver", async () => (await ordersOfCart(cart.cart_key))[0]!.status === "completed");
  assert.equal(await balance(api, partner.api_key), 100_00 - price);
  const fetched = await call(api, "GET", `/v1/orders/${order!.order_id}`, { key: partner.api_key });
  assert.equal(fetched.body.status, "completed");
  const iccid = fetched.body.purchases[0].iccid;
  await waitFor("the email", async () => world.smtp.messages.some((m) => m.raw.includes(iccid)));
  assert.equal(
    (await world.simulator.audit()).provisionings.filter((p) => p.reference === order!.order_id).length,
    1,
  );
});

test("submit validates the end user: bad email, non-E.164 or invalid phone, empty names", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key);
  const cases = [
    { email: "not-an-email" },
    { phone: "4155550123" },
    { phone: "+1555" },
    { phone: "+99912345678" },
    { first_name: "" },
    { last_name: "   " },
    { client_reference: "x".repeat(129) },
    { unexpected: true },
  ];
  for (const overrides of cases) {
    const answer = await submit(api, partner.api_key, cart.cart_key, overrides);
    assert.equal(answer.status, 400, JSON.stringify(overrides));
    assert.equal(answer.body.code, "invalid_request");
    assert.ok(answer.body.errors.length > 0);
  }
  assert.equal((await ordersOfCart(cart.cart_key)).length, 0);
  assert.equal(await balance(api, partner.api_key), 100_00);
});

test("a client that disconnects mid-request does not stop the order; its retry gets the result", async () => {
  const partner = await newPartner(api, 100_00);
  const price = await fr1gbPrice(partner.api_key);
  const cart = await newCart(api, partner.api_key);
  await world.simulator.control({ latency_ms: 800 });
  try {
    const gone = fetch(`${api}/v1/orders/submit`, {
      method: "POST",
      headers: { authorization: `Bearer ${partner.api_key}`, "content-type": "application/json" },
      body: JSON.stringify({ cart_key: cart.cart_key, ...END_USER }),
      signal: AbortSignal.timeout(200),
    });
    await assert.rejects(gone, /abort|timeout/i);
  } finally {
    await world.simulator.control({ latency_ms: 0 });
  }
  const done = await waitFor("the order to finish without its client", async () => {
    const retry = await submit(api2, partner.api_key, cart.cart_key);
    return retry.status === 200 ? retry : null;
  });
  assert.equal(done.body.status, "completed");
  assert.equal(await balance(api, partner.api_key), 100_00 - price);
  assert.equal((await ordersOfCart(cart.cart_key)).length, 1);
});

test("the carrier is asked for the terms the cart reserved, even if an import changed the package since", async () => {
  const partner = await newPartner(api, 100_00);
  const price = await fr1gbPrice(partner.api_key);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  await sql`update packages set data_mb = 20480, validity_days = 30, wholesale_minor = 9999,
            external_package_id = 'CARRIER-FR-20GB-30D-NEW' where package_id = 'fr-1gb-7d'`.execute(db);
  try {
    const answer = await submit(api, partner.api_key, cart.cart_key);
    assert.equal(answer.status, 200);
    assert.equal(await balance(api, partner.api_key), 100_00 - price, "charged the cart's price");
    const profile = (await world.simulator.profile(answer.body.purchases[0].iccid))!;
    assert.equal(profile.data_mb_total, 1024, "provisioned the reserved 1 GB");
    assert.equal(profile.validity_days, 7);
    assert.equal(profile.external_package_id, "CARRIER-FR-1GB-7D");
  } finally {
    await sql`update packages set data_mb = 1024, validity_days = 7, wholesale_minor = ${price},
              external_package_id = 'CARRIER-FR-1GB-7D' where package_id = 'fr-1gb-7d'`.execute(db);
  }
});

test("a cart whose start date passed while it waited is 422 invalid_start_date, nothing charged", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key);
  await sql`update carts set start_date = current_date - 1 where cart_key = ${cart.cart_key}`.execute(db);
  const answer = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(answer.status, 422);
  assert.equal(answer.body.code, "invalid_start_date");
  assert.equal(await balance(api, partner.api_key), 100_00);
  assert.equal((await ordersOfCart(cart.cart_key)).length, 0);
});
