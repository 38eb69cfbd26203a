// API keys' name, scope and allowlist (issue 31): issued through the operator API and the CLI
// (checked alike), enforced by authentication on cached and uncached keys, refusals changing
// nothing, and each issue and revocation audited once with its actor.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { checkCidr } from "../src/partners/key-access.ts";
import { ADMIN_TOKEN, createTestApp, type TestApp } from "./support/app.ts";
import { runCli } from "./support/cli.ts";

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
/** Every SQL statement the app runs through Kysely, to tell a cached request from a looked-up one. */
const queries: string[] = [];
// Private networks allowed: a webhook endpoint at loopback (nothing is delivered: no loop runs here).
const app = await createTestApp(
  { webhook_allow_private_networks: true },
  { onQuery: (text) => queries.push(text) },
);

type Issued = {
  api_key: string;
  key_id: string;
  name: string;
  scope: "full" | "read_only";
  allowed_ips: string[];
};

async function issueKey(target: TestApp, partner_id: string, body?: unknown): Promise<Issued> {
  const answer = await target.app.inject({
    method: "POST",
    url: `/admin/partners/${partner_id}/api-keys`,
    headers: admin,
    ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
  });
  assert.equal(answer.statusCode, 201, answer.body);
  return answer.json();
}

type AuditRow = {
  action: string;
  partner_id: string | null;
  actor_type: string;
  actor_id: string | null;
  ip: string | null;
  target_type: string;
  target_id: string | null;
  details: Record<string, unknown>;
};

async function auditOf(target_id: string): Promise<AuditRow[]> {
  const result = await sql<AuditRow>`
    select action, partner_id, actor_type, actor_id, ip, target_type, target_id, details
    from audit_log where target_id = ${target_id} order by audit_seq`.execute(app.db);
  return result.rows;
}

async function countRows(table: "carts" | "webhook_endpoints", partner_id: string): Promise<number> {
  const result = await sql<{ n: number }>`
    select count(*)::int as n from ${sql.table(table)} where partner_id = ${partner_id}`.execute(app.db);
  return result.rows[0]!.n;
}

test("an issued key answers and stores its name, scope and allowed_ips, CIDRs in PostgreSQL's form", async () => {
  const partner = await app.createPartner("Named keys");
  const issued = await issueKey(app, partner.partner_id, {
    name: "  Reporting  ",
    scope: "read_only",
    allowed_ips: ["203.0.113.0/24", "2001:DB8::/32", "198.51.100.7"],
  });
  assert.equal(issued.name, "Reporting");
  assert.equal(issued.scope, "read_only");
  assert.deepEqual(issued.allowed_ips, ["203.0.113.0/24", "2001:db8::/32", "198.51.100.7/32"]);
  const stored = await sql<{ name: string; scope: string; allowed_ips: string[] }>`
    select name, scope, allowed_ips::text[] as allowed_ips from api_keys where key_id = ${issued.key_id}`.execute(
    app.db,
  );
  assert.deepEqual(stored.rows[0], {
    name: "Reporting",
    scope: "read_only",
    allowed_ips: issued.allowed_ips,
  });
});

test("without a body (or with {}) a key is unnamed, full and usable from any address, as before", async () => {
  const partner = await app.createPartner("Plain keys");
  for (const body of [undefined, {}]) {
    const issued = await issueKey(app, partner.partner_id, body);
    assert.deepEqual([issued.name, issued.scope, issued.allowed_ips], ["", "full", []]);
    const wallet = await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(issued.api_key) });
    assert.equal(wallet.statusCode, 200);
  }
});

test("invalid names, scopes and CIDRs are 400 invalid_request naming the field; no key and no audit entry", async () => {
  const partner = await app.createPartner("Refused keys");
  const cases: Array<{ body: Record<string, unknown>; field: string; says: RegExp }> = [
    { body: { allowed_ips: ["not-an-ip"] }, field: "allowed_ips.0", says: /not an IPv4 or IPv6 address/ },
    {
      body: { allowed_ips: ["203.0.113.0/24", "10.0.0.1/8"] },
      field: "allowed_ips.1",
      says: /10\.0\.0\.0\/8/,
    },
    { body: { allowed_ips: ["10.0.0.0/33"] }, field: "allowed_ips.0", says: /prefix length/ },
    { body: { allowed_ips: ["2001:db8::1/32"] }, field: "allowed_ips.0", says: /2001:db8::\/32/ },
    { body: { allowed_ips: ["fe80::1%eth0"] }, field: "allowed_ips.0", says: /not an IPv4 or IPv6/ },
    {
      body: { allowed_ips: Array.from({ length: 21 }, (_, i) => `10.0.${i}.0/24`) },
      field: "allowed_ips",
      says: /20/,
    },
    { body: { name: "x".repeat(101) }, field: "name", says: /100/ },
    { body: { name: "tab\there" }, field: "name", says: /./ },
    { body: { scope: "admin" }, field: "scope", says: /./ },
    { body: { allowed_ips: "10.0.0.0/8" }, field: "allowed_ips", says: /must be a list/ },
    { body: { colour: "blue" }, field: "colour", says: /not a known field/ },
  ];
  const keysBefore = await sql<{ n: number }>`
    select count(*)::int as n from api_keys where partner_id = ${partner.partner_id}`.execute(app.db);
  for (const { body, field, says } of cases) {
    const answer = await app.app.inject({
      method: "POST",
      url: `/admin/partners/${partner.partner_id}/api-keys`,
      headers: admin,
      payload: body,
    });
    const label = JSON.stringify(body).slice(0, 80);
    assert.equal(answer.statusCode, 400, label);
    assert.equal(answer.json().code, "invalid_request", label);
    const errors: Array<{ field: string; message: string }> = answer.json().errors ?? [];
    assert.ok(
      errors.some((e) => e.field === field && says.test(e.message)),
      `${label}: ${answer.body}`,
    );
  }
  const keysAfter = await sql<{ n: number }>`
    select count(*)::int as n from api_keys where partner_id = ${partner.partner_id}`.execute(app.db);
  assert.equal(keysAfter.rows[0]!.n, keysBefore.rows[0]!.n, "no key was added");
  const audited = await sql<{ n: number }>`
    select count(*)::int as n from audit_log where partner_id = ${partner.partner_id}
      and action = 'api_key.created'`.execute(app.db);
  assert.equal(audited.rows[0]!.n, 0);
});

test("checkCidr keeps networks, makes a bare address one host and says what a host-bits CIDR should be", () => {
  assert.equal(checkCidr("10.0.0.0/8"), "10.0.0.0/8");
  assert.equal(checkCidr("0.0.0.0/0"), "0.0.0.0/0");
  assert.equal(checkCidr("192.0.2.1"), "192.0.2.1/32");
  assert.equal(checkCidr("2001:0DB8:0:0::/32"), "2001:db8::/32");
  assert.equal(checkCidr("::1"), "::1/128");
  assert.equal(checkCidr("::ffff:10.0.0.0/104"), "::ffff:10.0.0.0/104");
  const hostBits = checkCidr("10.0.0.1/8");
  assert.ok(typeof hostBits === "object" && /10\.0\.0\.0\/8.*10\.0\.0\.1\/32/.test(hostBits.problem));
  const v6HostBits = checkCidr("2001:db8::1:0/96");
  assert.ok(typeof v6HostBits === "object" && v6HostBits.problem.includes("2001:db8::/96"));
});

test("a read-only key reads everything; every write method answers 403 insufficient_scope and changes nothing", async () => {
  const partner = await app.createPartner("Read only", 100_000);
  const reader = await issueKey(app, partner.partner_id, { scope: "read_only" });
  const headers = app.auth(reader.api_key);
  for (const url of [
    "/v1/profile/wallet",
    "/v1/profile/wallet/transactions",
    "/v1/profile/orders",
    "/v1/esims",
    "/v1/esim/destination/FR/packages",
    "/v1/webhook-endpoints",
    "/v1/events",
  ]) {
    const answer = await app.app.inject({ url, headers });
    assert.equal(answer.statusCode, 200, `GET ${url}: ${answer.body}`);
  }
  const head = await app.app.inject({ method: "HEAD", url: "/v1/profile/wallet", headers });
  assert.equal(head.statusCode, 200, "HEAD is a read");
  const endpoint = await app.app.inject({
    method: "POST",
    url: "/v1/webhook-endpoints",
    headers: app.auth(partner.api_key),
    payload: { url: "http://127.0.0.1:9/hook" },
  });
  // The full key may write; the read-only one may not.
  assert.equal(endpoint.statusCode, 201, endpoint.body);
  const endpoint_id: string = endpoint.json().endpoint_id;
  const writes: Array<{ method: "POST" | "PUT" | "PATCH" | "DELETE"; url: string; payload?: object }> = [
    { method: "POST", url: "/v1/orders/cart", payload: { package_id: "fr-1gb-7d" } },
    { method: "POST", url: "/v1/orders/submit", payload: { cart_key: "cart_AAAAAAAAAAAAAAAAAAAAAA" } },
    { method: "PUT", url: "/v1/profile/wallet/low-balance-alert", payload: { threshold_minor: 500 } },
    { method: "POST", url: "/v1/webhook-endpoints", payload: { url: "http://127.0.0.1:9/other" } },
    { method: "PATCH", url: `/v1/webhook-endpoints/${endpoint_id}`, payload: { description: "changed" } },
    { method: "POST", url: `/v1/webhook-endpoints/${endpoint_id}/rotate-secret` },
    { method: "DELETE", url: `/v1/webhook-endpoints/${endpoint_id}` },
  ];
  const carts = await countRows("carts", partner.partner_id);
  const hooks = await countRows("webhook_endpoints", partner.partner_id);
  for (const write of writes) {
    const answer = await app.app.inject({ ...write, headers });
    assert.equal(answer.statusCode, 403, `${write.method} ${write.url}: ${answer.body}`);
    assert.match(answer.headers["content-type"] as string, /^application\/problem\+json/);
    assert.equal(answer.json().code, "insufficient_scope");
  }
  assert.equal(await countRows("carts", partner.partner_id), carts, "no cart was created");
  assert.equal(
    await countRows("webhook_endpoints", partner.partner_id),
    hooks,
    "no endpoint created or deleted",
  );
  const hook = await app.app.inject({
    url: `/v1/webhook-endpoints/${endpoint_id}`,
    headers: app.auth(partner.api_key),
  });
  assert.equal(hook.json().description ?? null, endpoint.json().description ?? null, "not changed");
  const wallet = await app.app.inject({ url: "/v1/profile/wallet", headers });
  assert.equal(wallet.json().low_balance_threshold, null, "the alert was not set");
});

test("a cached key's scope and allowlist hold with no query, and its revocation still takes effect at once", async () => {
  const partner = await app.createPartner("Cached");
  const reader = await issueKey(app, partner.partner_id, { scope: "read_only" });
  const headers = app.auth(reader.api_key);
  assert.equal((await app.app.inject({ url: "/v1/profile/wallet", headers })).statusCode, 200);
  queries.length = 0;
  const refused = await app.app.inject({
    method: "POST",
    url: "/v1/orders/cart",
    headers,
    payload: { package_id: "fr-1gb-7d" },
  });
  assert.equal(refused.statusCode, 403);
  assert.equal(refused.json().code, "insufficient_scope");
  assert.equal(
    queries.length,
    0,
    `the cached key's scope was checked without a query: ${queries.join("; ")}`,
  );
  // A cached read costs what a full key's cached read costs: the route's own queries, no lookup.
  const full = partner.api_key;
  await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(full) });
  queries.length = 0;
  await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(full) });
  const fullCost = queries.length;
  queries.length = 0;
  await app.app.inject({ url: "/v1/profile/wallet", headers });
  assert.equal(queries.length, fullCost);
  assert.ok(!queries.some((text) => text.includes("api_keys")), "no key lookup");

  const revoke = await app.app.inject({
    method: "DELETE",
    url: `/admin/api-keys/${reader.key_id}`,
    headers: admin,
  });
  assert.equal(revoke.statusCode, 204);
  app.authenticator.onKeyRevoked(reader.key_id); // what the revocation's NOTIFY does in a served process
  const after = await app.app.inject({ url: "/v1/profile/wallet", headers });
  assert.equal(after.statusCode, 401);
  assert.equal(after.json().code, "unauthorized");
});

test("an allowlisted key works from its addresses and answers 403 ip_not_allowed from any other, changing nothing", async () => {
  // Behind a trusted proxy at 127.0.0.1 the client is X-Forwarded-For's rightmost untrusted address.
  const proxied = await createTestApp({ trusted_proxies: ["127.0.0.1/32"] }, { database: app.database });
  const partner = await proxied.createPartner("Allowlisted");
  const key = await issueKey(proxied, partner.partner_id, {
    allowed_ips: ["198.51.100.0/24", "2001:db8::/32"],
  });
  const from = (address: string, method: "GET" | "POST" = "GET") =>
    proxied.app.inject({
      method,
      url: method === "GET" ? "/v1/profile/wallet" : "/v1/orders/cart",
      headers: { ...proxied.auth(key.api_key), "x-forwarded-for": address },
      ...(method === "POST" ? { payload: { package_id: "fr-1gb-7d" } } : {}),
    });
  for (const allowed of ["198.51.100.7", "198.51.100.255", "2001:db8::5", "2001:db8:ffff::1"]) {
    assert.equal((await from(allowed)).statusCode, 200, allowed);
  }
  const carts = await countRows("carts", partner.partner_id);
  for (const refused of ["198.51.101.7", "203.0.113.9", "2001:db9::1", "::1"]) {
    for (const method of ["GET", "POST"] as const) {
      const answer = await from(refused, method);
      assert.equal(answer.statusCode, 403, `${method} from ${refused}`);
      assert.equal(answer.json().code, "ip_not_allowed");
      assert.ok(answer.json().detail.includes(refused), "the detail names the address seen");
    }
  }
  assert.equal(await countRows("carts", partner.partner_id), carts, "no cart was created");
  // The same key from the proxy's own address (no X-Forwarded-For): 127.0.0.1 is not allowed.
  const direct = await proxied.app.inject({ url: "/v1/profile/wallet", headers: proxied.auth(key.api_key) });
  assert.equal(direct.statusCode, 403);
});

test("a key allowed from 127.0.0.1/32 works from there only; an IPv4 client on an IPv6 socket (::ffff:) matches its IPv4 CIDR", async () => {
  const partner = await app.createPartner("Loopback");
  const local = await issueKey(app, partner.partner_id, { allowed_ips: ["127.0.0.1/32"] });
  const wallet = (api_key: string, remoteAddress: string) =>
    app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(api_key), remoteAddress });
  assert.equal((await wallet(local.api_key, "127.0.0.1")).statusCode, 200);
  assert.equal((await wallet(local.api_key, "::ffff:127.0.0.1")).statusCode, 200);
  const elsewhere = await wallet(local.api_key, "192.0.2.10");
  assert.equal(elsewhere.statusCode, 403);
  assert.equal(elsewhere.json().code, "ip_not_allowed");
  assert.equal((await wallet(local.api_key, "::1")).statusCode, 403, "IPv6 loopback is another address");
  const mapped = await issueKey(app, partner.partner_id, { allowed_ips: ["192.0.2.0/24"] });
  assert.equal((await wallet(mapped.api_key, "::ffff:192.0.2.44")).statusCode, 200);
  assert.equal((await wallet(mapped.api_key, "::ffff:192.0.3.44")).statusCode, 403);
  // Read-only and allowlisted: the address is judged first, so a stranger learns nothing of the scope.
  const both = await issueKey(app, partner.partner_id, { scope: "read_only", allowed_ips: ["192.0.2.0/24"] });
  const write = await app.app.inject({
    method: "POST",
    url: "/v1/orders/cart",
    headers: app.auth(both.api_key),
    payload: { package_id: "fr-1gb-7d" },
    remoteAddress: "203.0.113.1",
  });
  assert.equal(write.json().code, "ip_not_allowed");
});

test("issuing and revoking are audited once each, in the operator token's name with its address", async () => {
  const partner = await app.createPartner("Audited");
  const issued = await app.app.inject({
    method: "POST",
    url: `/admin/partners/${partner.partner_id}/api-keys`,
    headers: admin,
    payload: { name: "CI", scope: "read_only", allowed_ips: ["192.0.2.0/24"] },
    remoteAddress: "198.51.100.50",
  });
  const key_id: string = issued.json().key_id;
  for (let i = 0; i < 2; i++) {
    const revoked = await app.app.inject({
      method: "DELETE",
      url: `/admin/api-keys/${key_id}`,
      headers: admin,
      remoteAddress: "198.51.100.51",
    });
    assert.equal(revoked.statusCode, 204);
  }
  const entries = await auditOf(key_id);
  const actor = { partner_id: partner.partner_id, actor_type: "operator", actor_id: "admin_token" };
  const target = { target_type: "api_key", target_id: key_id };
  assert.deepEqual(entries, [
    {
      action: "api_key.created",
      ...actor,
      ip: "198.51.100.50",
      ...target,
      details: { name: "CI", scope: "read_only", allowed_ips: ["192.0.2.0/24"] },
    },
    { action: "api_key.revoked", ...actor, ip: "198.51.100.51", ...target, details: {} },
  ]);
  assert.ok(!JSON.stringify(entries).includes(issued.json().api_key), "never the key itself");
  // A refused issue (unknown partner) leaves no entry.
  const unknown = await app.app.inject({
    method: "POST",
    url: "/admin/partners/ptr_AAAAAAAAAAAAAAAAAAAAAA/api-keys",
    headers: admin,
    payload: { name: "ghost" },
  });
  assert.equal(unknown.statusCode, 404);
  const ghosts = await sql<{ n: number }>`
    select count(*)::int as n from audit_log where details->>'name' = 'ghost'`.execute(app.db);
  assert.equal(ghosts.rows[0]!.n, 0);
});

test("the CLI issues with --name, --scope and repeated --allow-ip, refuses bad values before opening the database, and audits as operator cli", async () => {
  const partner = await app.createPartner("From the terminal");
  const env = { DATABASE_URL: app.database.url, APP_ENV: "sandbox", CURRENCY: "USD" };
  const run = await runCli(
    [
      "keys",
      "issue",
      partner.partner_id,
      "--name",
      "Backoffice",
      "--scope",
      "read_only",
      "--allow-ip",
      "192.0.2.0/24",
      "--allow-ip",
      "2001:db8::/48",
      "--json",
    ],
    env,
  );
  assert.equal(run.code, 0, run.stderr);
  const issued = JSON.parse(run.stdout);
  assert.deepEqual(
    [issued.name, issued.scope, issued.allowed_ips],
    ["Backoffice", "read_only", ["192.0.2.0/24", "2001:db8::/48"]],
  );
  const shown = JSON.parse((await runCli(["partners", "show", partner.partner_id, "--json"], env)).stdout);
  const listed = shown.keys.find((k: { key_id: string }) => k.key_id === issued.key_id);
  assert.deepEqual(
    [listed.name, listed.scope, listed.allowed_ips],
    ["Backoffice", "read_only", issued.allowed_ips],
  );
  const revoked = await runCli(["keys", "revoke", issued.key_id, "--json"], env);
  assert.equal(revoked.code, 0, revoked.stderr);
  const entries = await auditOf(issued.key_id);
  assert.deepEqual(
    entries.map((e) => [e.action, e.actor_type, e.actor_id, e.ip]),
    [
      ["api_key.created", "operator", "cli", null],
      ["api_key.revoked", "operator", "cli", null],
    ],
  );
  // A wrong CIDR fails before any database is opened: an unreachable one changes nothing.
  const refused = await runCli(["keys", "issue", partner.partner_id, "--allow-ip", "10.0.0.1/8", "--json"], {
    ...env,
    DATABASE_URL: "postgres://postgres:postgres@127.0.0.1:1/none",
  });
  assert.notEqual(refused.code, 0);
  assert.match(refused.stdout + refused.stderr, /10\.0\.0\.0\/8/);
});
