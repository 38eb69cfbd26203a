// Retries of a completed submit (src/orders/completed-outcomes.ts): the same request again, byte
// for byte, is answered with the bytes already sent and no database work; any other body is
// parsed, validated and checked as a new request would be. A real service over a real
// PostgreSQL and the carrier simulator as its own process.
import assert from "node:assert/strict";
import { tracingChannel } from "node:diagnostics_channel";
import { test } from "node:test";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { createCart } from "./support/fixtures.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const queries: string[] = [];
// Fastify publishes here when a route's handler starts, after parsing, validation and every hook.
const handled: string[] = [];
tracingChannel("fastify.request.handler").subscribe({
  start: (message) => handled.push((message as { route: { url: string } }).route.url),
  end: () => {},
  asyncStart: () => {},
  asyncEnd: () => {},
  error: () => {},
});
// A slow refill, so that each request's spend shows in RateLimit-Remaining.
const app = await createTestApp(
  { rate_limit_per_second: 0.01, rate_limit_burst: 1_000 },
  { database, carrier, onQuery: (sql) => queries.push(sql) },
);
const owner = await app.createPartner("Acme Travel", 10_000);
const stranger = await app.createPartner("Other Travel", 10_000);

const submit = (api_key: string, payload: string) =>
  app.app.inject({
    method: "POST",
    url: "/v1/orders/submit",
    headers: { ...app.auth(api_key), "content-type": "application/json" },
    payload,
  });

test("a completed submit's retries: the same bytes answered as sent, any other body checked again", async () => {
  handled.length = 0;
  const { cart_key } = await createCart(app.app, owner.api_key);
  const body = (phone: string, email = "ana@example.com") =>
    `{"cart_key":"${cart_key}","email":"${email}","phone":"${phone}","first_name":"Ana","last_name":"Lima"}`;
  const first = await submit(owner.api_key, body("+14155550123"));
  assert.equal(first.statusCode, 200, first.body);

  assert.deepEqual(handled.splice(0), ["/v1/orders/cart", "/v1/orders/submit"]);
  queries.length = 0;
  const remaining: number[] = [];
  const {
    "x-request-id": _id,
    date: _date,
    "ratelimit-remaining": _left,
    "ratelimit-reset": _reset,
    ...first_headers
  } = first.headers;
  for (let attempt = 0; attempt < 3; attempt++) {
    const again = await submit(owner.api_key, body("+14155550123"));
    assert.equal(again.statusCode, 200);
    assert.equal(again.body, first.body, "byte for byte");
    const {
      "x-request-id": id,
      date: _when,
      "ratelimit-remaining": left,
      "ratelimit-reset": _later,
      ...headers
    } = again.headers;
    assert.deepEqual(
      headers,
      { ...first_headers, "idempotent-replayed": "true" },
      "the same headers, security ones included, and the replay said",
    );
    assert.notEqual(id, first.headers["x-request-id"]);
    remaining.push(Number(left));
  }
  assert.ok(remaining[0]! > remaining[1]! && remaining[1]! > remaining[2]!, "each one spent rate limit");
  // (The key's cache lasts seconds: a slow machine may look it up again, which is not the answer's work.)
  assert.deepEqual(
    queries.filter((sql) => !sql.includes("api_keys")),
    [],
    "no database work for a remembered answer",
  );
  assert.deepEqual(handled.splice(0), [], "no parse, schema or handler for the same bytes");

  // Authentication still comes first: the same bytes with a wrong key are 401.
  const unknown = await submit(`${owner.api_key.slice(0, -4)}xxxx`, body("+14155550123"));
  assert.equal(unknown.statusCode, 401);
  // Another partner sending the very same bytes gets what any stranger gets for this cart.
  const foreign = await submit(stranger.api_key, body("+14155550123"));
  assert.equal(foreign.statusCode, 404);
  assert.equal(foreign.json().code, "cart_not_found");
  // Other bytes go through every check: a phone that is not a number is refused even now.
  const invalid = await submit(owner.api_key, body("+99912345678"));
  assert.equal(invalid.statusCode, 400);
  assert.equal(invalid.json().code, "invalid_request");
  const malformed = await submit(owner.api_key, `${body("+14155550123")}}`);
  assert.equal(malformed.statusCode, 400);
  // A valid body that differs is answered with the order too: the retry names the same cart.
  const other = await submit(owner.api_key, body("+14155550123", "other@example.com"));
  assert.equal(other.statusCode, 200);
  assert.equal(other.body, first.body);
  // The stranger's 404, the phone the handler refuses, the other email's 200; the malformed body
  // was refused by the parser.
  assert.deepEqual(handled.splice(0), ["/v1/orders/submit", "/v1/orders/submit", "/v1/orders/submit"]);
  // Its bytes are now the cart's link: they are answered from memory, the first ones are checked again.
  assert.equal((await submit(owner.api_key, body("+14155550123", "other@example.com"))).body, first.body);
  assert.equal((await submit(owner.api_key, body("+14155550123"))).body, first.body);
  assert.deepEqual(handled.splice(0), ["/v1/orders/submit"]);
});

test("after a refund, a retry still answers what the purchase answered, from every process", async () => {
  // A second service on the same database: it has kept nothing, so it answers from the order row.
  const other = await createTestApp({}, { database, carrier });
  const cart = await createCart(app.app, owner.api_key);
  const payload = `{"cart_key":"${cart.cart_key}","email":"ana@example.com","phone":"+14155550123","first_name":"Ana","last_name":"Lima"}`;
  const first = await submit(owner.api_key, payload);
  assert.equal(first.statusCode, 200, first.body);
  assert.equal(first.json().status, "completed");
  const refund = await app.app.inject({
    method: "POST",
    url: `/v1/orders/${first.json().orderID}/refund`,
    headers: app.auth(owner.api_key),
  });
  assert.equal(refund.statusCode, 200, refund.body);
  assert.equal(refund.json().status, "refunded");
  const fromOther = () =>
    other.app.inject({
      method: "POST",
      url: "/v1/orders/submit",
      headers: { ...other.auth(owner.api_key), "content-type": "application/json" },
      payload,
    });
  handled.length = 0;
  const kept = await submit(owner.api_key, payload);
  assert.deepEqual(handled.splice(0), [], "answered here from its kept bytes");
  const by_cart = await submit(owner.api_key, payload.replace('"Ana"', ' "Ana"'));
  assert.deepEqual(handled.splice(0), ["/v1/orders/submit"], "answered here from its cart's entry");
  const read = await fromOther();
  assert.deepEqual(handled.splice(0), ["/v1/orders/submit"], "read there from the refunded order");
  const kept_there = await fromOther();
  assert.deepEqual(handled.splice(0), [], "and then kept there too");
  for (const answer of [kept, by_cart, read, kept_there]) {
    assert.equal(answer.statusCode, 200);
    assert.equal(answer.body, first.body, "the purchase's answer, byte for byte");
  }
  // The order itself says what happened since.
  const order = await other.app.inject({
    url: `/v1/orders/${first.json().orderID}`,
    headers: other.auth(owner.api_key),
  });
  assert.equal(order.json().status, "refunded");
});
