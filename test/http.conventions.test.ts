import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { sql } from "kysely";
import { hashApiKey } from "../src/partners/api-keys.ts";
import { addressKey } from "../src/shared/address-key.ts";
import { createTestApp } from "./support/app.ts";

const app = await createTestApp();
const partner = await app.createPartner();

function assertProblem(
  response: { statusCode: number; headers: Record<string, unknown>; json: () => any },
  status: number,
  code: string,
) {
  assert.equal(response.statusCode, status);
  assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
  const body = response.json();
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.title, "string");
  assert.equal(typeof body.detail, "string");
  assert.match(body.type, new RegExp(`#${code}$`));
  assert.equal(body.request_id, response.headers["x-request-id"]);
  return body;
}

test("every response carries X-Request-Id, echoing a sane one the client sent", async () => {
  const generated = await app.app.inject({ url: "/healthz" });
  assert.match(String(generated.headers["x-request-id"]), /^[0-9a-f-]{36}$/);
  const echoed = await app.app.inject({ url: "/healthz", headers: { "x-request-id": "trace-abc-123" } });
  assert.equal(echoed.headers["x-request-id"], "trace-abc-123");
  const hostile = await app.app.inject({ url: "/healthz", headers: { "x-request-id": "a b\u0000c" } });
  assert.notEqual(hostile.headers["x-request-id"], "a b\u0000c");
});

test("unknown routes are 404 not_found as problem+json", async () => {
  assertProblem(await app.app.inject({ url: "/v2/nothing" }), 404, "not_found");
  assertProblem(
    await app.app.inject({ url: "/v1/nothing", headers: app.auth(partner.api_key) }),
    404,
    "not_found",
  );
});

test("malformed JSON is 400 invalid_request; schema violations list the fields", async () => {
  const admin = { authorization: "Bearer test-admin-token-0123456789", "content-type": "application/json" };
  assertProblem(
    await app.app.inject({ method: "POST", url: "/admin/partners", headers: admin, payload: "{nope" }),
    400,
    "invalid_request",
  );
  const body = assertProblem(
    await app.app.inject({
      method: "POST",
      url: "/admin/partners",
      headers: admin,
      payload: { name: "", extra: 1 },
    }),
    400,
    "invalid_request",
  );
  assert.ok(Array.isArray(body.errors) && body.errors.length > 0);
  assertProblem(
    await app.app.inject({
      method: "POST",
      url: "/admin/partners",
      headers: admin,
      payload: '{"__proto__": {"x": 1}, "name": "a"}',
    }),
    400,
    "invalid_request",
  );
});

test("bodies over 64 KiB are 413 payload_too_large", async () => {
  const response = await app.app.inject({
    method: "POST",
    url: "/admin/partners",
    headers: { authorization: "Bearer test-admin-token-0123456789", "content-type": "application/json" },
    payload: JSON.stringify({ name: "x".repeat(70_000) }),
  });
  assertProblem(response, 413, "payload_too_large");
});

test("non-JSON bodies are 415 unsupported_media_type", async () => {
  for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
    const response = await app.app.inject({
      method: "POST",
      url: "/admin/partners",
      headers: { authorization: "Bearer test-admin-token-0123456789", "content-type": type },
      payload: "name=x",
    });
    assertProblem(response, 415, "unsupported_media_type");
  }
});

test("rate limits announce RateLimit-* headers and answer 429 rate_limited with Retry-After", async () => {
  const limited = await createTestApp(
    { rate_limit_per_second: 2, rate_limit_burst: 3 },
    { database: app.database },
  );
  const statuses: number[] = [];
  let last: Awaited<ReturnType<typeof limited.app.inject>> | undefined;
  for (let i = 0; i < 5; i++) {
    last = await limited.app.inject({ url: "/v1/profile/wallet", headers: limited.auth(partner.api_key) });
    statuses.push(last.statusCode);
  }
  assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
  const body = assertProblem(last!, 429, "rate_limited");
  assert.ok(body.detail.length > 0);
  assert.ok(Number(last!.headers["retry-after"]) >= 1);
  const first = await limited.app.inject({
    url: "/v1/profile/wallet",
    headers: limited.auth((await limited.createPartner()).api_key),
  });
  assert.equal(first.headers["ratelimit-limit"], "3");
  assert.equal(first.headers["ratelimit-remaining"], "2");
});

test("requests whose key is refused are limited per client address", async () => {
  const limited = await createTestApp({ auth_failures_per_minute: 3 }, { database: app.database });
  // A key that worked here before is never held back by its address's failures.
  const warm = await limited.app.inject({
    url: "/v1/profile/wallet",
    headers: limited.auth(partner.api_key),
  });
  assert.equal(warm.statusCode, 200);
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    const guess = `sand_${"x".repeat(40)}${i}`;
    statuses.push(
      (await limited.app.inject({ url: "/v1/profile/wallet", headers: limited.auth(guess) })).statusCode,
    );
  }
  assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
  const real = await limited.app.inject({
    url: "/v1/profile/wallet",
    headers: limited.auth(partner.api_key),
  });
  assert.equal(real.statusCode, 200, "a valid key is not held back by the failures");
});

test("security headers are set", async () => {
  const response = await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(partner.api_key) });
  assert.equal(response.headers["x-content-type-options"], "nosniff");
  assert.match(String(response.headers["strict-transport-security"]), /max-age=/);
  assert.match(String(response.headers["content-security-policy"]), /default-src 'none'/);
});

test("health, readiness, metrics and the OpenAPI document are served", async () => {
  assert.deepEqual((await app.app.inject({ url: "/healthz" })).json(), { status: "ok" });
  assert.deepEqual((await app.app.inject({ url: "/readyz" })).json(), { status: "ready" });
  const metrics = await app.app.inject({ url: "/metrics" });
  assert.equal(metrics.statusCode, 200);
  assert.match(metrics.body, /http_request_duration_seconds_bucket/);
  assert.match(metrics.body, /^esim_orders_pending 0$/m);
  const openapi = await app.app.inject({ url: "/openapi.json" });
  assert.equal(openapi.json().openapi, "3.1.0");
  const docs = await app.app.inject({ url: "/docs" });
  assert.equal(docs.statusCode, 200);
  assert.match(docs.body, /Partner eSIM Ordering API/);
  assert.doesNotMatch(docs.body, /(src|href)="https?:\/\//, "nothing loaded from other hosts");
});

test("an unexpected error is a 500 internal_error that leaks no internals", async () => {
  const broken = await createTestApp();
  const victim = await broken.createPartner();
  // Break the database under the running app: the wallet query now fails unexpectedly.
  await sql`alter table ledger_accounts rename to ledger_accounts_gone`.execute(broken.db);
  const response = await broken.app.inject({
    url: "/v1/profile/wallet",
    headers: broken.auth(victim.api_key),
  });
  const body = assertProblem(response, 500, "internal_error");
  assert.doesNotMatch(JSON.stringify(body), /ledger|relation|select|stack/i);
});

test("a flood of random well-formed keys is 429 past the address's budget, each looked up once, and the address's valid key still works", async () => {
  let lookups = 0;
  const counted = await createTestApp(
    { rate_limit_per_second: 2, rate_limit_burst: 3, auth_failures_per_minute: 3 },
    {
      database: app.database,
      onQuery: (text) => {
        if (/from api_keys k join partners p on p.partner_id = k.partner_id\s+where k.key_hash =/.test(text))
          lookups++;
      },
    },
  );
  const statuses = new Map<number, number>();
  for (let i = 0; i < 300; i++) {
    const guess = `sand_${randomBytes(32).toString("base64url")}`;
    const answer = await counted.app.inject({ url: "/v1/profile/wallet", headers: counted.auth(guess) });
    statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1);
  }
  assert.equal(statuses.get(401), 3, "the budget of failures is answered 401");
  assert.equal(statuses.get(429), 297, "the rest is 429");
  // Past the budget a key is still verified (a valid one is never refused), through the narrow lane
  // that holds at most OVER_BUDGET_LOOKUPS_IN_FLIGHT connections (server.failure-budgets.test.ts).
  assert.equal(lookups, 300, "one lookup per key, never more");
  const real = await counted.app.inject({
    url: "/v1/profile/wallet",
    headers: counted.auth(partner.api_key),
  });
  assert.equal(real.statusCode, 200, "a valid key not cached here, from the flooding address");
});

test("unknown keys do not take the cache slots of real keys: after a flood the cache holds only the real key", async () => {
  const flooded = await createTestApp({}, { database: app.database });
  const real = await flooded.app.inject({
    url: "/v1/profile/wallet",
    headers: flooded.auth(partner.api_key),
  });
  assert.equal(real.statusCode, 200);
  // Unknown keys, each from an address of its own, so no failure budget runs out.
  for (let batch = 0; batch < 10; batch++) {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        flooded.app.inject({
          url: "/v1/profile/wallet",
          headers: flooded.auth(`sand_${randomBytes(32).toString("base64url")}`),
          remoteAddress: `10.0.${batch}.${j}`,
        }),
      ),
    );
    assert.ok(answers.every((answer) => answer.statusCode === 401));
  }
  // Entries past their TTL stay until evicted, so this holds however long the flood took.
  assert.deepEqual(
    [...flooded.authenticator.cachedKeyHashes()],
    [hashApiKey(partner.api_key).toString("base64url")],
  );
});

test("failure budgets are per IPv4 address and per IPv6 /64, so one IPv6 client has one budget", () => {
  assert.equal(addressKey("203.0.113.7"), "203.0.113.7");
  assert.equal(addressKey("::ffff:203.0.113.7"), "::ffff:203.0.113.7");
  assert.equal(addressKey("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
  assert.equal(addressKey("2001:db8:1:2:bbbb:cccc:dddd:eeee"), "2001:db8:1:2::/64");
  assert.equal(addressKey("2001:db8::1"), "2001:db8:0:0::/64");
  assert.equal(addressKey("::1"), "0:0:0:0::/64");
});

test("lone UTF-16 surrogates and bytes that are not UTF-8 are 400 invalid_request, never stored as U+FFFD", async () => {
  const admin = { authorization: "Bearer test-admin-token-0123456789", "content-type": "application/json" };
  const refused = [
    '{"name":"Acme \\ud800 Travel"}',
    '{"name":"Acme \\udc00"}',
    '{"name":"Acme \\ud83d"}',
    '{"name":"Acme","\\ud800":1}',
    Buffer.concat([Buffer.from('{"name":"Acme '), Buffer.of(0xed, 0xa0, 0x80), Buffer.from('"}')]),
    Buffer.concat([Buffer.from('{"name":"Acme '), Buffer.of(0xff), Buffer.from('"}')]),
  ];
  for (const payload of refused) {
    const answer = await app.app.inject({ method: "POST", url: "/admin/partners", headers: admin, payload });
    assertProblem(answer, 400, "invalid_request");
  }
  const cart = await app.app.inject({
    method: "POST",
    url: "/v1/orders/cart",
    headers: { ...app.auth(partner.api_key), "content-type": "application/json" },
    payload: '{"package_id":"fr-1gb-7d","start_date":"\\udfff"}',
  });
  assertProblem(cart, 400, "invalid_request");
  const query = await app.app.inject({
    url: "/v1/profile/orders?client_reference=booking%ED%A0%80",
    headers: app.auth(partner.api_key),
  });
  assertProblem(query, 400, "invalid_request");
  const path = await app.app.inject({ url: "/v1/orders/ord_%ED%A0%80", headers: app.auth(partner.api_key) });
  assertProblem(path, 400, "invalid_request");
  const stored = await sql<{ n: number }>`
    select count(*)::int as n from partners where name like ${"%\ufffd%"}`.execute(app.db);
  assert.equal(stored.rows[0]!.n, 0, "nothing was stored with a replacement character");
  // A surrogate pair is one character, not a lone surrogate: an emoji is welcome.
  const emoji = await app.app.inject({
    method: "POST",
    url: "/admin/partners",
    headers: admin,
    payload: '{"name":"Acme \\ud83d\\ude00"}',
  });
  assert.equal(emoji.statusCode, 201);
  assert.equal(emoji.json().name, "Acme \u{1f600}");
});

test("/docs and /openapi.json are served from bytes built once, not rebuilt per request", async () => {
  const served = await createTestApp({}, { database: app.database });
  const first = {
    openapi: await served.app.inject({ url: "/openapi.json" }),
    docs: await served.app.inject({ url: "/docs" }),
  };
  let built = 0;
  const swagger = served.app.swagger.bind(served.app);
  (served.app as unknown as { swagger: typeof swagger }).swagger = ((...args: Parameters<typeof swagger>) => {
    built++;
    return swagger(...args);
  }) as typeof swagger;
  for (let i = 0; i < 20; i++) {
    const openapi = await served.app.inject({ url: "/openapi.json" });
    assert.equal(openapi.body, first.openapi.body);
    assert.match(String(openapi.headers["content-type"]), /^application\/json/);
    const docs = await served.app.inject({ url: "/docs" });
    assert.equal(docs.body, first.docs.body);
    assert.match(String(docs.headers["content-type"]), /^text\/html/);
  }
  assert.equal(built, 0, "the document was not asked for again");
});

test("/readyz and /metrics cost one database query per second, however many ask at once", async () => {
  const queries = { ready: 0, pending: 0 };
  const probed = await createTestApp(
    {},
    {
      database: app.database,
      onQuery: (text) => {
        if (/^select 1$/.test(text.trim())) queries.ready++;
        if (/from pending_orders/.test(text)) queries.pending++;
      },
    },
  );
  const burst = await Promise.all(
    Array.from({ length: 50 }, (_, i) => probed.app.inject({ url: i % 2 === 0 ? "/readyz" : "/metrics" })),
  );
  assert.ok(burst.every((answer) => answer.statusCode === 200));
  for (let i = 0; i < 10; i++) {
    assert.equal((await probed.app.inject({ url: "/readyz" })).statusCode, 200);
    assert.equal((await probed.app.inject({ url: "/metrics" })).statusCode, 200);
  }
  assert.ok(queries.ready >= 1 && queries.ready <= 2, `readiness queries: ${queries.ready}`);
  assert.ok(queries.pending >= 1 && queries.pending <= 2, `pending-order queries: ${queries.pending}`);
});

test("with METRICS_TOKEN set, /metrics without that bearer token is 401 problem+json", async () => {
  const token = "metrics-token-0123456789";
  const guarded = await createTestApp({ metrics_token: token }, { database: app.database });
  assertProblem(await guarded.app.inject({ url: "/metrics" }), 401, "unauthorized");
  assertProblem(
    await guarded.app.inject({
      url: "/metrics",
      headers: { authorization: "Bearer wrong-token-0123456789" },
    }),
    401,
    "unauthorized",
  );
  const scraped = await guarded.app.inject({
    url: "/metrics",
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(scraped.statusCode, 200);
  assert.match(scraped.body, /http_request_duration_seconds/);
});
