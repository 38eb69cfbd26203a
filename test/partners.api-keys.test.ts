import assert from "node:assert/strict";
import { test } from "node:test";
import { type KyselyPlugin, sql } from "kysely";
import { listenForInvalidations } from "../src/db/invalidations.ts";
import { generateApiKey, hashApiKey } from "../src/partners/api-keys.ts";
import { Authenticator } from "../src/server/auth.ts";
import { FailureBudget, LookupLane } from "../src/server/failure-budget.ts";
import type { ApiError } from "../src/shared/errors.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { inParallel } from "./support/fixtures.ts";

/** A budget for an authenticator built by hand: far more than these tests spend. */
const keyFailures = () => new FailureBudget(1_000, "API keys", new LookupLane(2, 64));

const app = await createTestApp();
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

test("a new partner gets a sandbox key of 32+ random characters, stored only as a hash", async () => {
  const partner = await app.createPartner("Acme Travel");
  assert.match(partner.api_key, /^sand_[A-Za-z0-9_-]{32,}$/);
  const rows = await sql<{ key_hash: Buffer; key_hint: string }>`
    select key_hash, key_hint from api_keys where key_id = ${partner.key_id}`.execute(app.db);
  assert.equal(rows.rows.length, 1);
  assert.equal(rows.rows[0]!.key_hash.length, 32);
  const dump = JSON.stringify(await sql`select * from api_keys`.execute(app.db));
  assert.ok(!dump.includes(partner.api_key.slice(5)), "the full key is stored nowhere");
});

test("both Authorization: Bearer and X-API-Key authenticate", async () => {
  const partner = await app.createPartner();
  const bearer = await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(partner.api_key) });
  assert.equal(bearer.statusCode, 200);
  const header = await app.app.inject({
    url: "/v1/profile/wallet",
    headers: { "x-api-key": partner.api_key },
  });
  assert.equal(header.statusCode, 200);
  assert.deepEqual(header.json(), {
    balance: { amount_minor: 0, currency: "USD" },
    pending: { amount_minor: 0, currency: "USD" },
    low_balance_threshold: null,
  });
});

test("missing, malformed and unknown keys are 401 unauthorized as problem+json", async () => {
  const cases: Record<string, string>[] = [
    {},
    { authorization: "Bearer" },
    { authorization: "Basic dXNlcjpwYXNz" },
    { authorization: "Bearer sand_short" },
    { authorization: `Bearer ${generateApiKey("sandbox").api_key}` },
    { "x-api-key": "x".repeat(500) },
  ];
  for (const headers of cases) {
    const response = await app.app.inject({ url: "/v1/profile/wallet", headers });
    assert.equal(response.statusCode, 401, JSON.stringify(headers));
    assert.match(response.headers["content-type"] as string, /^application\/problem\+json/);
    const body = response.json();
    assert.equal(body.code, "unauthorized");
    assert.equal(body.status, 401);
    assert.equal(body.request_id, response.headers["x-request-id"]);
  }
});

test("a production key on the sandbox is 401 wrong_environment naming the key's environment", async () => {
  const production = generateApiKey("production").api_key;
  const response = await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(production) });
  assert.equal(response.statusCode, 401);
  assert.equal(response.json().code, "wrong_environment");
  assert.match(response.json().detail, /production key/);
});

test("a sandbox key on production is 401 wrong_environment", async () => {
  const production = await createTestApp({ app_env: "production" }, { database: app.database });
  const sandboxKey = (await app.createPartner()).api_key;
  const response = await production.app.inject({
    url: "/v1/profile/wallet",
    headers: production.auth(sandboxKey),
  });
  assert.equal(response.statusCode, 401);
  assert.equal(response.json().code, "wrong_environment");
  assert.match(response.json().detail, /sandbox key/);
  const issued = await production.app.inject({
    method: "POST",
    url: "/admin/partners",
    headers: admin,
    payload: { name: "Live" },
  });
  assert.match(issued.json().api_key, /^prod_/);
});

test("a revoked key is refused at once, a second key keeps working, revoking twice is harmless", async () => {
  const partner = await app.createPartner();
  const warm = await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(partner.api_key) });
  assert.equal(warm.statusCode, 200, "the key is now in the process cache");
  const second = await app.app.inject({
    method: "POST",
    url: `/admin/partners/${partner.partner_id}/api-keys`,
    headers: admin,
  });
  assert.equal(second.statusCode, 201);
  const revoke = await app.app.inject({
    method: "DELETE",
    url: `/admin/api-keys/${partner.key_id}`,
    headers: admin,
  });
  assert.equal(revoke.statusCode, 204);
  app.authenticator.onKeyRevoked(partner.key_id);
  const refused = await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(partner.api_key) });
  assert.equal(refused.statusCode, 401);
  assert.equal(refused.json().code, "unauthorized");
  const other = await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(second.json().api_key) });
  assert.equal(other.statusCode, 200);
  const again = await app.app.inject({
    method: "DELETE",
    url: `/admin/api-keys/${partner.key_id}`,
    headers: admin,
  });
  assert.equal(again.statusCode, 204);
  const unknown = await app.app.inject({
    method: "DELETE",
    url: "/admin/api-keys/key_AAAAAAAAAAAAAAAAAAAAAA",
    headers: admin,
  });
  assert.equal(unknown.statusCode, 404);
  assert.equal(unknown.json().code, "api_key_not_found");
});

test("a revocation made by another process reaches this one without waiting for the cache", async () => {
  const other = await createTestApp({}, { database: app.database });
  const partner = await app.createPartner();
  assert.equal(
    (await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(partner.api_key) })).statusCode,
    200,
  );
  const { listenForInvalidations } = await import("../src/db/invalidations.ts");
  const listener = await listenForInvalidations(app.database.url, {
    api_key_revoked: (key_id) => app.authenticator.onKeyRevoked(key_id),
  });
  try {
    const revoke = await other.app.inject({
      method: "DELETE",
      url: `/admin/api-keys/${partner.key_id}`,
      headers: admin,
    });
    assert.equal(revoke.statusCode, 204);
    const deadline = Date.now() + 2_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      status = (await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(partner.api_key) }))
        .statusCode;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(status, 401);
  } finally {
    await listener.close();
  }
});

test("last-used time is recorded in a batch, off the request path", async () => {
  const partner = await app.createPartner();
  await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(partner.api_key) });
  const before = await sql<{
    last_used_at: Date | null;
  }>`select last_used_at from api_keys where key_id = ${partner.key_id}`.execute(app.db);
  assert.equal(before.rows[0]!.last_used_at, null);
  await app.authenticator.flushLastUsed();
  const afterFlush = await sql<{
    last_used_at: Date | null;
  }>`select last_used_at from api_keys where key_id = ${partner.key_id}`.execute(app.db);
  assert.ok(afterFlush.rows[0]!.last_used_at instanceof Date);
});

test("the operator API needs ADMIN_TOKEN and does not exist without one", async () => {
  const wrong = await app.app.inject({
    method: "POST",
    url: "/admin/partners",
    headers: { authorization: "Bearer nope" },
    payload: { name: "x" },
  });
  assert.equal(wrong.statusCode, 401);
  const none = await app.app.inject({ method: "POST", url: "/admin/partners", payload: { name: "x" } });
  assert.equal(none.statusCode, 401);
  const disabled = await createTestApp({ admin_token: null }, { database: app.database });
  const hidden = await disabled.app.inject({
    method: "POST",
    url: "/admin/partners",
    headers: admin,
    payload: { name: "x" },
  });
  assert.equal(hidden.statusCode, 404);
  assert.equal(hidden.json().code, "not_found");
});

test("a lookup that read a key just before its revocation cannot cache it after the revocation's notice", async () => {
  const partner = await app.createPartner();
  // The authenticator's own queries pass through this plugin: while `gate` is set, a finished query
  // waits there, after its row was read and before the authenticator sees it.
  let gate: Promise<void> | null = null;
  let onPaused = () => {};
  const pausing: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      if (gate) {
        onPaused();
        await gate;
      }
      return args.result;
    },
  };
  const authenticator = new Authenticator(app.db.withPlugin(pausing), "sandbox", {
    failures: keyFailures(),
  });
  let noticed = (_key_id: string) => {};
  const listener = await listenForInvalidations(app.database.url, {
    api_key_revoked: (key_id) => {
      authenticator.onKeyRevoked(key_id);
      noticed(key_id);
    },
  });
  try {
    const request = { headers: { authorization: `Bearer ${partner.api_key}` }, ip: "192.0.2.1" };
    let release = () => {};
    gate = new Promise((resolve) => {
      release = resolve;
    });
    const paused = new Promise<void>((resolve) => {
      onPaused = resolve;
    });
    const racing = authenticator.authenticate(request as never);
    await paused; // the lookup has read the key, still valid
    const notice = new Promise<string>((resolve) => {
      noticed = resolve;
    });
    const revoke = await app.app.inject({
      method: "DELETE",
      url: `/admin/api-keys/${partner.key_id}`,
      headers: admin,
    });
    assert.equal(revoke.statusCode, 204);
    assert.equal(await notice, partner.key_id, "the revocation's notice arrived while the lookup was paused");
    gate = null;
    release();
    assert.equal((await racing).key_id, partner.key_id, "read before the revocation committed");
    await assert.rejects(
      authenticator.authenticate(request as never),
      (error: ApiError) => error.code === "unauthorized",
      "the key revoked meanwhile was not cached as valid",
    );
  } finally {
    await listener.close();
  }
});

test("the key cache holds SHA-256 hashes of keys, never the keys", async () => {
  const partner = await app.createPartner();
  const authenticator = new Authenticator(app.db, "sandbox", { failures: keyFailures() });
  const request = { headers: { authorization: `Bearer ${partner.api_key}` }, ip: "192.0.2.1" };
  await authenticator.authenticate(request as never);
  const held = [...authenticator.cachedKeyHashes()];
  assert.equal(held.length, 1);
  assert.equal(held[0], hashApiKey(partner.api_key).toString("base64url"));
  assert.ok(!held.some((entry) => entry.includes(partner.api_key)));
});

test("wrong operator tokens are throttled per client address: 429 with Retry-After, even for the right token", async () => {
  const limited = await createTestApp({ auth_failures_per_minute: 3 }, { database: app.database });
  const attempt = (token: string, remoteAddress = "198.51.100.7") =>
    limited.app.inject({
      method: "POST",
      url: "/admin/partners",
      headers: { authorization: `Bearer ${token}` },
      payload: { name: "Throttled" },
      remoteAddress,
    });
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++)
    statuses.push((await attempt(`wrong-operator-token-${i}-0123456789`)).statusCode);
  assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
  const throttled = await attempt(ADMIN_TOKEN);
  assert.equal(throttled.statusCode, 429, "a guess that happens to be right is not told apart");
  assert.equal(throttled.json().code, "rate_limited");
  assert.ok(Number(throttled.headers["retry-after"]) >= 1);
  assert.equal(
    (await attempt(ADMIN_TOKEN, "198.51.100.8")).statusCode,
    201,
    "other addresses are not held back",
  );
});

test("150 concurrent key issues for one partner stop at exactly 100 keys; the rest are 409 api_key_limit_reached", async () => {
  const partner = await app.createPartner("Key collector");
  // 30 at a time: every issue waits for the partner's lock, and 150 at once queued past the test
  // pool's 5-second wait for a connection on a loaded machine (503s), which is not what this tests.
  const answers = await inParallel(150, 30, () =>
    app.app.inject({
      method: "POST",
      url: `/admin/partners/${partner.partner_id}/api-keys`,
      headers: admin,
    }),
  );
  const keys = await sql<{ n: number }>`
    select count(*)::int as n from api_keys where partner_id = ${partner.partner_id}`.execute(app.db);
  assert.equal(keys.rows[0]!.n, 100, "the first key and 99 more");
  assert.equal(answers.filter((answer) => answer.statusCode === 201).length, 99);
  const refused = answers.filter((answer) => answer.statusCode !== 201);
  assert.equal(refused.length, 51);
  for (const answer of refused) {
    assert.equal(answer.statusCode, 409);
    assert.equal(answer.json().code, "api_key_limit_reached");
  }
});
