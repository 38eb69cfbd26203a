// The SDK (packages/sdk) against the real service, its real carrier simulator and PostgreSQL,
// through a real HTTP proxy that injects faults (test/support/fault-proxy.ts): what partners
// get from the SDK's own retries is one order, one debit and one top-up however the network behaves.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Transport } from "../packages/sdk/src/core/transport.ts";
import {
  ApiError,
  ConnectionError,
  EsimClient,
  isApiError,
  type Order,
  TimeoutError,
} from "../packages/sdk/src/index.ts";
import { startFaultProxy } from "./support/fault-proxy.ts";
import { PACKAGE_ID } from "./support/fixtures.ts";
import { balance, createWorld, END_USER, newPartner } from "./support/world.ts";

const world = await createWorld();
const api = world.services[0]!.url;
const proxy = await startFaultProxy(api);
const TOPUP_PACKAGE = "fr-3gb-15d";

/** The FR catalog prices, read once through the SDK. */
const prices = await (async () => {
  const probe = await newPartner(api, 0, "Price probe");
  const client = new EsimClient({ apiKey: probe.api_key, baseUrl: api });
  const fr = await client.catalog.packages("fr");
  const price = (id: string) => fr.data.find((p) => p.package_id === id)!.wholesale_price.amount_minor;
  return { esim: price(PACKAGE_ID), topup: price(TOPUP_PACKAGE) };
})();

async function partnerClient(credit_minor: number, options: { maxRetries?: number; timeout?: number } = {}) {
  const partner = await newPartner(api, credit_minor);
  return { ...partner, client: new EsimClient({ apiKey: partner.api_key, baseUrl: proxy.url, ...options }) };
}

async function buy(client: EsimClient, client_reference?: string): Promise<Order> {
  const cart = await client.carts.create({ package_id: PACKAGE_ID });
  return client.orders.submit({ cart_key: cart.cart_key, ...END_USER, client_reference });
}

async function debits(reference: string): Promise<{ state: string; amount_minor: number }[]> {
  const { rows } = await world.database.pool.query(
    "select state, amount_minor::int as amount_minor from ledger_transfers where reference = $1",
    [reference],
  );
  return rows;
}

test("a submit whose answer is dropped is retried by cart_key: one order, one debit", async () => {
  const { client, api_key } = await partnerClient(prices.esim * 3);
  const cart = await client.carts.create({ package_id: PACKAGE_ID });
  proxy.inject("POST", "/v1/orders/submit", { kind: "drop_response" });
  const before = proxy.seen("POST", "/v1/orders/submit").length;
  const order = await client.orders.submit({ cart_key: cart.cart_key, ...END_USER });
  const attempts = proxy.seen("POST", "/v1/orders/submit").slice(before);
  assert.deepEqual(
    attempts.map((a) => a.fault),
    ["drop_response", null],
    "the first answer was lost, the retry got through",
  );
  assert.equal(order.status, "completed");
  assert.equal(order.purchases.length, 1);
  assert.deepEqual(await debits(order.orderID), [{ state: "posted", amount_minor: prices.esim }]);
  assert.equal(await balance(api, api_key), prices.esim * 2);
  const listed = await client.orders.list().toArray();
  assert.deepEqual(
    listed.map((o) => o.orderID),
    [order.orderID],
    "one order, not two",
  );
});

test("a top-up whose answer is dropped makes one top-up, under one generated Idempotency-Key", async () => {
  const { client, api_key } = await partnerClient(prices.esim + prices.topup * 2);
  const esim = await buy(client);
  const iccid = esim.esim_iccid!;
  const offers = await client.topUps.available(iccid);
  const offer = offers.data.find((o) => o.package_id === TOPUP_PACKAGE)!;
  proxy.inject("POST", "/v1/orders/submit-topup", { kind: "drop_response" });
  const before = proxy.seen("POST", "/v1/orders/submit-topup").length;
  const topup = await client.topUps.submit({
    iccid,
    package_id: offer.package_id,
    external_package_id: offer.external_package_id,
    ...END_USER,
  });
  const attempts = proxy.seen("POST", "/v1/orders/submit-topup").slice(before);
  assert.equal(attempts.length, 2);
  const keys = attempts.map((a) => a.headers["idempotency-key"]);
  assert.match(String(keys[0]), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(keys[1], keys[0], "the same key on every attempt");
  assert.equal(topup.type, "topup");
  assert.equal(topup.status, "completed");
  const carrierTopups = (await world.simulator.audit()).topups.filter((t) => t.iccid === iccid);
  assert.equal(carrierTopups.length, 1, "the carrier topped up once");
  assert.deepEqual(await debits(topup.orderID), [{ state: "posted", amount_minor: prices.topup }]);
  assert.equal(await balance(api, api_key), prices.topup);
});

test("409 request_in_progress is waited out (Retry-After) and then answered", async () => {
  const { client } = await partnerClient(prices.esim);
  const cart = await client.carts.create({ package_id: PACKAGE_ID });
  proxy.inject("POST", "/v1/orders/submit", {
    kind: "respond",
    status: 409,
    headers: { "retry-after": "1" },
    body: { status: 409, code: "request_in_progress", detail: "still running", request_id: "req_1" },
  });
  const before = proxy.seen("POST", "/v1/orders/submit").length;
  const order = await client.orders.submit({ cart_key: cart.cart_key, ...END_USER });
  const attempts = proxy.seen("POST", "/v1/orders/submit").slice(before);
  assert.equal(order.status, "completed");
  assert.equal(attempts.length, 2);
  assert.ok(attempts[1]!.at_ms - attempts[0]!.at_ms >= 1000, "waited the second Retry-After asked for");
});

test("a 409 with another code is final: not retried, an ApiError with the code", async () => {
  const { client } = await partnerClient(0);
  proxy.inject("GET", "/v1/profile/wallet", {
    kind: "respond",
    status: 409,
    headers: { "x-request-id": "req_conflict" },
    body: { status: 409, code: "credit_reference_reused", detail: "no", request_id: "req_conflict" },
  });
  const before = proxy.seen("GET", "/v1/profile/wallet").length;
  const error = await client.wallet.get().catch((e: unknown) => e);
  assert.ok(isApiError(error, "credit_reference_reused"));
  assert.equal(error.status, 409);
  assert.equal(error.requestId, "req_conflict");
  assert.equal(proxy.seen("GET", "/v1/profile/wallet").length - before, 1);
});

test("429 with Retry-After: the SDK waits at least that long, then succeeds", async () => {
  const { client } = await partnerClient(500);
  proxy.inject("GET", "/v1/profile/wallet", {
    kind: "respond",
    status: 429,
    headers: { "retry-after": "2" },
    body: { status: 429, code: "rate_limited", detail: "slow down", request_id: "req_429" },
  });
  const started = performance.now();
  const wallet = await client.wallet.get();
  assert.ok(performance.now() - started >= 2000, "not before Retry-After");
  assert.equal(wallet.balance.amount_minor, 500);
});

test("429 resend_limit_reached is final: one attempt, the ApiError at once with its Retry-After", async () => {
  const { client } = await partnerClient(500);
  proxy.inject("GET", "/v1/profile/wallet", {
    kind: "respond",
    status: 429,
    headers: { "retry-after": "3600" },
    body: { status: 429, code: "resend_limit_reached", detail: "5 a day", request_id: "req_quota" },
  });
  const before = proxy.seen("GET", "/v1/profile/wallet").length;
  const error = await client.wallet.get().catch((e: unknown) => e);
  assert.ok(error instanceof ApiError, String(error));
  assert.equal(error.code, "resend_limit_reached");
  assert.equal(error.retryAfter, 3600);
  assert.equal(proxy.seen("GET", "/v1/profile/wallet").length - before, 1, "not retried");
});

test("retries run out: the last answer's ApiError carries status, code, requestId and retryAfter", async () => {
  const { client } = await partnerClient(0, { maxRetries: 1 });
  for (let i = 0; i < 2; i++) {
    proxy.inject("GET", "/v1/profile/wallet", {
      kind: "respond",
      status: 503,
      headers: { "retry-after": "0", "x-request-id": `req_503_${i}` },
      body: { status: 503, code: "service_unavailable", detail: "down", request_id: `req_503_${i}` },
    });
  }
  const error = await client.wallet.get().catch((e: unknown) => e);
  assert.ok(error instanceof ApiError);
  assert.equal(error.code, "service_unavailable");
  assert.equal(error.requestId, "req_503_1");
  assert.equal(error.retryAfter, 0);
});

test("an attempt slower than the timeout raises TimeoutError; with retries left it is tried again", async () => {
  const { client } = await partnerClient(0, { timeout: 300 });
  proxy.inject("GET", "/v1/profile/wallet", { kind: "delay", ms: 1500 });
  const error = await client.wallet.get({ maxRetries: 0 }).catch((e: unknown) => e);
  assert.ok(error instanceof TimeoutError, String(error));
  assert.equal(error.timeoutMs, 300);

  proxy.inject("GET", "/v1/profile/wallet", { kind: "delay", ms: 1500 });
  const before = proxy.seen("GET", "/v1/profile/wallet").length;
  const wallet = await client.wallet.get({ maxRetries: 1 });
  assert.equal(wallet.balance.amount_minor, 0);
  assert.equal(proxy.seen("GET", "/v1/profile/wallet").length - before, 2);
});

test("the caller's AbortSignal stops the retries at once", async () => {
  const { client } = await partnerClient(0);
  proxy.inject("GET", "/v1/profile/wallet", {
    kind: "respond",
    status: 503,
    headers: { "retry-after": "5" },
    body: { status: 503, code: "service_unavailable", detail: "down", request_id: "req" },
  });
  const before = proxy.seen("GET", "/v1/profile/wallet").length;
  const controller = new AbortController();
  const pending = client.wallet.get({ signal: controller.signal });
  setTimeout(() => controller.abort(new Error("caller gave up")), 200);
  await assert.rejects(pending, /caller gave up/);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(proxy.seen("GET", "/v1/profile/wallet").length - before, 1, "no attempt after the abort");
});

test("a refused connection is a ConnectionError after the retries", async () => {
  const closed = await startFaultProxy(api);
  await closed.close();
  const client = new EsimClient({ apiKey: "sand_x".padEnd(40, "x"), baseUrl: closed.url, maxRetries: 1 });
  await assert.rejects(client.wallet.get(), ConnectionError);
});

test("insufficient balance is a typed ApiError, not retried, nothing charged", async () => {
  const { client, api_key } = await partnerClient(prices.esim - 1);
  const error = await buy(client).catch((e: unknown) => e);
  assert.ok(isApiError(error, "insufficient_balance"), String(error));
  assert.equal(error.status, 402);
  assert.match(String(error.requestId), /.+/);
  assert.equal(await balance(api, api_key), prices.esim - 1);
});

test("orders.list iterates over more than two pages, newest first, and toArray stops at its limit", async () => {
  const { client } = await partnerClient(prices.esim * 5);
  const bought: string[] = [];
  for (let i = 0; i < 5; i++) bought.push((await buy(client, "trip-42")).orderID);
  const before = proxy.seen("GET", "/v1/profile/orders").length;
  const seen: string[] = [];
  for await (const order of client.orders.list({ client_reference: "trip-42", limit: 2 }))
    seen.push(order.orderID);
  assert.deepEqual(seen, [...bought].reverse());
  assert.equal(proxy.seen("GET", "/v1/profile/orders").length - before, 3, "pages of 2, 2 and 1");

  const pagesBefore = proxy.seen("GET", "/v1/profile/orders").length;
  const firstThree = await client.orders.list({ limit: 2 }).toArray({ limit: 3 });
  assert.equal(firstThree.length, 3);
  assert.equal(proxy.seen("GET", "/v1/profile/orders").length - pagesBefore, 2, "no page past the limit");
});

test("concurrent calls on one client keep their own headers", async () => {
  const { client } = await partnerClient(prices.esim * 2 + prices.topup * 2);
  const esims = await Promise.all([buy(client), buy(client)]);
  const before = proxy.seen("POST", "/v1/orders/submit-topup").length;
  await Promise.all(
    esims.map((esim, i) =>
      client.topUps.submit(
        {
          iccid: esim.esim_iccid!,
          package_id: TOPUP_PACKAGE,
          external_package_id: "CARRIER-FR-3GB-15D",
          ...END_USER,
        },
        { idempotencyKey: `key-${i}` },
      ),
    ),
  );
  const sent = proxy
    .seen("POST", "/v1/orders/submit-topup")
    .slice(before)
    .map((r) => `${JSON.parse(r.body).iccid} ${r.headers["idempotency-key"]}`);
  assert.deepEqual(sent.sort(), esims.map((esim, i) => `${esim.esim_iccid!} key-${i}`).sort());
});

test("a request that is not idempotent and has no key is never retried, even when its answer is lost", async () => {
  // Checked on the transport itself, with a route that is safe (a cart), so that the rule is seen
  // apart from any route; test/sdk.webhook-endpoints.test.ts checks the routes that rely on it.
  const { api_key } = await partnerClient(0);
  const transport = new Transport({
    apiKey: api_key,
    baseUrl: proxy.url,
    maxRetries: 3,
    timeout: 5_000,
    fetch: (input, init) => fetch(input, init),
  });
  proxy.inject("POST", "/v1/orders/cart", { kind: "drop_response" });
  const before = proxy.seen("POST", "/v1/orders/cart").length;
  const call = { method: "POST" as const, path: "/v1/orders/cart", body: { package_id: PACKAGE_ID } };
  await assert.rejects(transport.request({ ...call, idempotent: false }), ConnectionError);
  assert.equal(proxy.seen("POST", "/v1/orders/cart").length - before, 1, "one attempt only");
});
