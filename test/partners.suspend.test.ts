// The operator's partners (issue 32) over real HTTP and PostgreSQL: the list (search by name or id,
// status filter, pages), one partner, rename, suspend and reactivate. A suspended partner's API
// keys may read and every write answers 403 partner_suspended, changing nothing; its console's
// people see why on every page and their forms are refused, but for their own account's,
// signing out and those that only take access away (revoking a key, disabling a person, deleting a
// webhook endpoint). Every change is audited once with its reason; a PATCH that changes nothing is not.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { Authenticator } from "../src/server/auth.ts";
import { FailureBudget, LookupLane } from "../src/server/failure-budget.ts";
import type { ApiError } from "../src/shared/errors.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { END_USER } from "./support/fixtures.ts";
import { addPerson, signInCookie } from "./support/people.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const t = await createTestApp(
  { carrier_timeout_ms: 5_000, webhook_allow_private_networks: true },
  { database, carrier },
);
const base = await t.app.listen({ port: 0, host: "127.0.0.1" });
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

function patch(partner_id: string, payload: Record<string, unknown>) {
  return t.app.inject({ method: "PATCH", url: `/admin/partners/${partner_id}`, headers: admin, payload });
}

/** The PATCH, then this process's cache told at once (main.ts wires the NOTIFY to the same call). */
async function setStatus(partner_id: string, status: "active" | "suspended", reason?: string) {
  const answer = await patch(partner_id, { status, ...(reason ? { reason } : {}) });
  assert.equal(answer.statusCode, 200, answer.body);
  t.authenticator.onPartnerStatusChanged(partner_id);
  return answer.json();
}

async function audits(partner_id: string) {
  const { rows } = await sql<{ action: string; details: Record<string, unknown>; actor_type: string }>`
    select action, details, actor_type from audit_log
    where target_type = 'partner' and target_id = ${partner_id} and action <> 'partner.created'
    order by audit_seq`.execute(t.db);
  return rows;
}

function newCart(api_key: string) {
  return t.app.inject({
    method: "POST",
    url: "/v1/orders/cart",
    headers: t.auth(api_key),
    payload: { package_id: "fr-1gb-7d" },
  });
}

test("the list finds partners by part of the name in any case or by whole id, filters by status and pages newest first", async () => {
  const tag = `Q${Date.now().toString(36)}`;
  const made = [];
  for (const name of [`${tag} Alpha Travel`, `${tag} Beta Roaming`, `${tag} alpha Mobile`])
    made.push(await t.createPartner(name, 500));
  await setStatus(made[1]!.partner_id, "suspended", "unpaid invoice 2026-11");

  const search = await t.app.inject({
    url: `/admin/partners?q=${encodeURIComponent(`${tag} ALPHA`)}`,
    headers: admin,
  });
  assert.equal(search.statusCode, 200, search.body);
  assert.deepEqual(
    search.json().data.map((p: { name: string }) => p.name),
    [`${tag} alpha Mobile`, `${tag} Alpha Travel`],
    "case-insensitive, newest first",
  );
  const one = search.json().data[1];
  assert.equal(one.status, "active");
  assert.deepEqual(one.balance, { amount_minor: 500, currency: "USD" });
  assert.match(one.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  const byId = await t.app.inject({ url: `/admin/partners?q=${made[1]!.partner_id}`, headers: admin });
  assert.deepEqual(
    byId.json().data.map((p: { partner_id: string }) => p.partner_id),
    [made[1]!.partner_id],
  );
  const suspended = await t.app.inject({ url: `/admin/partners?status=suspended&q=${tag}`, headers: admin });
  assert.deepEqual(
    suspended.json().data.map((p: { name: string }) => p.name),
    [`${tag} Beta Roaming`],
  );
  assert.equal(suspended.json().data[0].suspended_reason, "unpaid invoice 2026-11");

  const seen: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 5; pages++) {
    const query: string = `q=${tag}&limit=1${cursor ? `&cursor=${cursor}` : ""}`;
    const answer = await t.app.inject({ url: `/admin/partners?${query}`, headers: admin });
    assert.equal(answer.statusCode, 200, answer.body);
    seen.push(...answer.json().data.map((p: { partner_id: string }) => p.partner_id));
    cursor = answer.json().next_cursor;
    if (!answer.json().has_more) break;
  }
  assert.deepEqual(seen, made.map((p) => p.partner_id).reverse(), "each partner once, newest first");

  for (const url of [
    "/admin/partners?status=gone",
    "/admin/partners?cursor=bm9wZQ",
    "/admin/partners?limit=0",
    "/admin/partners?q=",
  ]) {
    const bad = await t.app.inject({ url, headers: admin });
    assert.equal(bad.statusCode, 400, url);
    assert.equal(bad.json().code, "invalid_request", url);
  }
});

test("one partner: its standing and balance; an unknown one is 404 partner_not_found", async () => {
  const partner = await t.createPartner("Detail Travel", 1_250);
  const answer = await t.app.inject({ url: `/admin/partners/${partner.partner_id}`, headers: admin });
  assert.equal(answer.statusCode, 200, answer.body);
  assert.equal(answer.json().name, "Detail Travel");
  assert.deepEqual(answer.json().balance, { amount_minor: 1_250, currency: "USD" });
  assert.deepEqual(answer.json().held, { amount_minor: 0, currency: "USD" });
  assert.equal(answer.json().suspended_reason, null);
  const unknown = await t.app.inject({ url: "/admin/partners/ptr_AAAAAAAAAAAAAAAAAAAAAA", headers: admin });
  assert.equal(unknown.statusCode, 404);
  assert.equal(unknown.json().code, "partner_not_found");
  const patched = await patch("ptr_AAAAAAAAAAAAAAAAAAAAAA", { name: "Nobody" });
  assert.equal(patched.statusCode, 404);
  assert.equal(patched.json().code, "partner_not_found");
});

test("rename trims the name and is audited once; a PATCH that changes nothing writes no audit entry; bad input changes nothing", async () => {
  const partner = await t.createPartner("Old Name Travel");
  const renamed = await patch(partner.partner_id, { name: "  New Name Travel  " });
  assert.equal(renamed.statusCode, 200, renamed.body);
  assert.equal(renamed.json().name, "New Name Travel");
  const again = await patch(partner.partner_id, { name: "New Name Travel", status: "active" });
  assert.equal(again.statusCode, 200);
  const entries = await audits(partner.partner_id);
  assert.deepEqual(
    entries.map((e) => e.action),
    ["partner.updated"],
  );
  assert.deepEqual(entries[0]!.details.name, { from: "Old Name Travel", to: "New Name Travel" });
  assert.equal(entries[0]!.actor_type, "operator");

  const bad: Array<Record<string, unknown>> = [
    {},
    { name: "   " },
    { name: "x".repeat(201) },
    { name: "tab\there" },
    { status: "closed" },
    { status: "suspended" },
    { status: "suspended", reason: "  " },
    { status: "suspended", reason: "r".repeat(501) },
    { reason: "no status" },
    { name: "Fine", extra: true },
  ];
  for (const body of bad) {
    const answer = await patch(partner.partner_id, body);
    assert.equal(answer.statusCode, 400, JSON.stringify(body));
    assert.equal(answer.json().code, "invalid_request", JSON.stringify(body));
  }
  const now = await t.app.inject({ url: `/admin/partners/${partner.partner_id}`, headers: admin });
  assert.equal(now.json().name, "New Name Travel");
  assert.equal(now.json().status, "active");
  assert.equal((await audits(partner.partner_id)).length, 1, "nothing more audited");
});

test("the operator suspends a partner: its next write is refused, reads still work, and reactivating restores writes", async () => {
  const partner = await t.createPartner("Suspended Travel", 10_000);
  const warm = await newCart(partner.api_key);
  assert.equal(warm.statusCode, 201, "the key is cached and may write");

  const suspended = await setStatus(partner.partner_id, "suspended", "  KYC documents expired  ");
  assert.equal(suspended.status, "suspended");
  assert.equal(suspended.suspended_reason, "KYC documents expired");
  assert.ok(suspended.suspended_at);

  const before = await sql<{
    n: number;
  }>`select count(*)::int as n from carts where partner_id = ${partner.partner_id}`.execute(t.db);
  const refused = await newCart(partner.api_key);
  assert.equal(refused.statusCode, 403, refused.body);
  assert.equal(refused.json().code, "partner_suspended");
  assert.match(refused.headers["content-type"] as string, /^application\/problem\+json/);
  const submit = await t.app.inject({
    method: "POST",
    url: "/v1/orders/submit",
    headers: t.auth(partner.api_key),
    payload: { cart_key: warm.json().cart_key, ...END_USER },
  });
  assert.equal(submit.statusCode, 403);
  assert.equal(submit.json().code, "partner_suspended");
  const after = await sql<{
    n: number;
  }>`select count(*)::int as n from carts where partner_id = ${partner.partner_id}`.execute(t.db);
  assert.equal(after.rows[0]!.n, before.rows[0]!.n, "nothing was written");
  const wallet = await t.app.inject({ url: "/v1/profile/wallet", headers: t.auth(partner.api_key) });
  assert.equal(wallet.statusCode, 200, "reads still work");
  assert.equal(wallet.json().balance.amount_minor, 10_000);

  // A key issued while suspended is just as suspended (its first lookup reads the partner's standing).
  const issued = await t.app.inject({
    method: "POST",
    url: `/admin/partners/${partner.partner_id}/api-keys`,
    headers: admin,
  });
  assert.equal((await newCart(issued.json().api_key)).json().code, "partner_suspended");

  // Suspending again with a new reason replaces the reason; the standing notice is not needed for it.
  await setStatus(partner.partner_id, "suspended", "KYC documents expired (second notice)");
  await setStatus(partner.partner_id, "active", "documents received");
  const restored = await newCart(partner.api_key);
  assert.equal(restored.statusCode, 201, restored.body);
  const reactivated = await t.app.inject({ url: `/admin/partners/${partner.partner_id}`, headers: admin });
  assert.equal(reactivated.json().suspended_reason, null);
  assert.equal(reactivated.json().suspended_at, null);

  assert.deepEqual(
    (await audits(partner.partner_id)).map((e) => [e.action, e.details.reason]),
    [
      ["partner.suspended", "KYC documents expired"],
      ["partner.suspended", "KYC documents expired (second notice)"],
      ["partner.reactivated", "documents received"],
    ],
  );
});

test("a suspension made in another process reaches this one's key cache by NOTIFY, without waiting for its TTL", async () => {
  const { listenForInvalidations } = await import("../src/db/invalidations.ts");
  // A key cache that trusts a key for an hour: only the notice can drop the key within this test.
  const authenticator = new Authenticator(t.db, "sandbox", {
    failures: new FailureBudget(1_000, "API keys", new LookupLane(2, 64)),
    cache_ttl_ms: 3_600_000,
  });
  const listener = await listenForInvalidations(database.url, {
    partner_status_changed: (partner_id) => authenticator.onPartnerStatusChanged(partner_id),
  });
  try {
    const partner = await t.createPartner("Notified Travel", 0);
    const write = {
      headers: { authorization: `Bearer ${partner.api_key}` },
      ip: "192.0.2.1",
      method: "POST",
      routeOptions: { url: "/v1/orders/cart" },
    } as never;
    assert.equal(
      (await authenticator.authenticate(write)).partner_id,
      partner.partner_id,
      "cached as active",
    );
    const answer = await patch(partner.partner_id, { status: "suspended", reason: "fraud review" });
    assert.equal(answer.statusCode, 200);
    let refusal: string | null = null;
    for (let i = 0; i < 400 && refusal === null; i++) {
      await authenticator.authenticate(write).then(
        () => new Promise((resolve) => setTimeout(resolve, 25)),
        (error: ApiError) => {
          refusal = error.code;
        },
      );
    }
    assert.equal(refusal, "partner_suspended", "the notice dropped the key, cached for an hour");
  } finally {
    await listener.close();
  }
});

test("a suspended partner's console shows why on every page and refuses its forms, but not signing out", async () => {
  const partner = await t.createPartner("Console Suspended Travel", 0);
  const owner = await addPerson(t.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const cookie = `console_partner=${await signInCookie(base, owner)}`;
  await setStatus(partner.partner_id, "suspended", "chargebacks under review");
  for (const path of ["/console", "/console/keys", "/console/team"]) {
    const page = await (await fetch(`${base}${path}`, { headers: { cookie } })).text();
    assert.match(page, /data-testid="suspended-banner"/, path);
    assert.match(page, /chargebacks under review/, path);
  }
  const page = await (await fetch(`${base}/console/keys`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
  assert.ok(csrf);
  const keysBefore = await sql<{
    n: number;
  }>`select count(*)::int as n from api_keys where partner_id = ${partner.partner_id}`.execute(t.db);
  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${base}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: base, cookie },
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    });
  const refused = await post("/console/keys", { name: "new" });
  assert.equal(refused.status, 403);
  assert.match(await refused.text(), /suspended/);
  const keysAfter = await sql<{
    n: number;
  }>`select count(*)::int as n from api_keys where partner_id = ${partner.partner_id}`.execute(t.db);
  assert.equal(keysAfter.rows[0]!.n, keysBefore.rows[0]!.n, "no key was issued");
  const signOut = await post("/console/sign-out", {});
  assert.equal(signOut.status, 303, "signing out still works");
});

test("a suspended partner may still take access away: revoke a key, disable a person, delete a webhook endpoint; nothing else", async () => {
  const partner = await t.createPartner("Compromised Travel", 0);
  const owner = await addPerson(t.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const member = await addPerson(t.database.pool, {
    realm: "partner",
    role: "viewer",
    partner_id: partner.partner_id,
  });
  const cookie = `console_partner=${await signInCookie(base, owner)}`;
  const hooks = [];
  for (const name of ["api", "console"]) {
    const made = await t.app.inject({
      method: "POST",
      url: "/v1/webhook-endpoints",
      headers: t.auth(partner.api_key),
      payload: { url: `http://127.0.0.1:9/${name}` },
    });
    assert.equal(made.statusCode, 201, made.body);
    hooks.push(made.json().endpoint_id as string);
  }
  await setStatus(partner.partner_id, "suspended", "credentials leaked");

  // The API: deleting an endpoint works; changing one is still refused.
  const changed = await t.app.inject({
    method: "PATCH",
    url: `/v1/webhook-endpoints/${hooks[0]}`,
    headers: t.auth(partner.api_key),
    payload: { description: "still mine" },
  });
  assert.equal(changed.json().code, "partner_suspended");
  const deleted = await t.app.inject({
    method: "DELETE",
    url: `/v1/webhook-endpoints/${hooks[0]}`,
    headers: t.auth(partner.api_key),
  });
  assert.equal(deleted.statusCode, 204, deleted.body);

  const page = await (await fetch(`${base}/console/team`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
  assert.ok(csrf);
  const post = (path: string, fields: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: base, cookie },
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    });
  const userStatus = async () =>
    (
      await t.db
        .selectFrom("users")
        .select("status")
        .where("user_id", "=", member.user_id)
        .executeTakeFirstOrThrow()
    ).status;

  assert.equal((await post(`/console/team/${member.user_id}/status`, { status: "disabled" })).status, 303);
  assert.equal(await userStatus(), "disabled", "the person was disabled");
  const enable = await post(`/console/team/${member.user_id}/status`, { status: "active" });
  assert.equal(enable.status, 403, "enabling a person gives access: refused");
  assert.match(await enable.text(), /suspended/);
  assert.equal(await userStatus(), "disabled", "still disabled");

  assert.equal((await post(`/console/webhooks/${hooks[1]}/delete`)).status, 303);
  const endpoints = await sql<{ n: number }>`
    select count(*)::int as n from webhook_endpoints where partner_id = ${partner.partner_id}`.execute(t.db);
  assert.equal(endpoints.rows[0]!.n, 0, "both endpoints are gone: nothing more is sent");

  assert.equal((await post("/console/keys", { name: "new" })).status, 403, "issuing a key stays refused");
  assert.equal((await post(`/console/keys/${partner.key_id}/revoke`)).status, 303);
  const key = await sql<{ revoked: boolean }>`
    select revoked_at is not null as revoked from api_keys where key_id = ${partner.key_id}`.execute(t.db);
  assert.equal(key.rows[0]!.revoked, true, "the key is revoked");
});

test("suspending while 20 purchases run: each is done (200) or refused (403), never a 500, and the ledger balances", async () => {
  const partner = await t.createPartner("Racing Travel", 100_000);
  const carts = await Promise.all(Array.from({ length: 20 }, () => newCart(partner.api_key)));
  const purchases = carts.map((cart, i) =>
    t.app.inject({
      method: "POST",
      url: "/v1/orders/submit",
      headers: t.auth(partner.api_key),
      payload: { cart_key: cart.json().cart_key, ...END_USER, email: `race-${i}@example.com` },
    }),
  );
  const suspend = setStatus(partner.partner_id, "suspended", "race");
  const answers = await Promise.all(purchases);
  await suspend;
  const statuses = answers.map((a) => a.statusCode);
  for (const [i, answer] of answers.entries()) {
    assert.ok(
      answer.statusCode === 200 || answer.statusCode === 403,
      `purchase ${i}: ${answer.statusCode} ${answer.body}`,
    );
    if (answer.statusCode === 403) assert.equal(answer.json().code, "partner_suspended");
  }
  const completed = statuses.filter((s) => s === 200).length;
  const charged = await t.app.inject({ url: "/v1/profile/wallet", headers: t.auth(partner.api_key) });
  assert.equal(
    charged.json().balance.amount_minor,
    100_000 - completed * 350,
    "each purchase done is charged once",
  );
  // After the suspension, the next one is refused whatever happened in the race.
  const next = await t.app.inject({
    method: "POST",
    url: "/v1/orders/submit",
    headers: t.auth(partner.api_key),
    payload: { cart_key: carts[0]!.json().cart_key, ...END_USER },
  });
  assert.equal(next.statusCode, 403);
  assert.deepEqual((await auditLedger(t.db)).breaches, []);
});

/** An operator person of `role`, signed in: the cookie and a CSRF token for its forms. */
async function operatorSession(role: string) {
  const person = await addPerson(t.database.pool, { realm: "operator", role });
  const cookie = `console_operator=${await signInCookie(base, person)}`;
  const page = await (await fetch(`${base}/console/admin/people`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
  assert.ok(csrf);
  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${base}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: base, cookie },
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    });
  return { person, cookie, post };
}

test("the operator console's forms: rename and suspend audited as the person, bad input refused with nothing changed", async () => {
  const partner = await t.createPartner("Form Travel");
  const admin = await operatorSession("admin");
  const base_path = `/console/admin/partners/${partner.partner_id}`;
  for (const [path, fields] of [
    [`${base_path}/name`, { name: "Nul\u0000Travel" }],
    [`${base_path}/status`, { status: "suspended" }],
    [`${base_path}/status`, { status: "closed", reason: "x" }],
  ] as const) {
    const answer = await admin.post(path, fields);
    assert.equal(answer.status, 400, `${path} ${JSON.stringify(fields)}`);
  }
  assert.equal((await audits(partner.partner_id)).length, 0, "nothing changed");
  assert.equal((await admin.post(`${base_path}/name`, { name: "Form Travel Ltd" })).status, 303);
  const suspended = await admin.post(`${base_path}/status`, { status: "suspended", reason: "audit pending" });
  assert.equal(suspended.headers.get("location"), `${base_path}?done=suspended`);
  const entries = await sql<{ action: string; actor_type: string; actor_id: string }>`
    select action, actor_type, actor_id from audit_log
    where target_id = ${partner.partner_id} and action like 'partner.%' and action <> 'partner.created'
    order by audit_seq`.execute(t.db);
  assert.deepEqual(
    entries.rows.map((e) => [e.action, e.actor_type, e.actor_id]),
    [
      ["partner.updated", "operator", admin.person.user_id],
      ["partner.suspended", "operator", admin.person.user_id],
    ],
  );
  const page = await (await fetch(`${base}${base_path}`, { headers: { cookie: admin.cookie } })).text();
  assert.match(page, /audit pending/);
  const list = await (
    await fetch(`${base}/console/admin?q=form+travel&status=suspended`, { headers: { cookie: admin.cookie } })
  ).text();
  assert.match(list, /Form Travel Ltd/);
  const none = await (
    await fetch(`${base}/console/admin?q=form+travel&status=active`, { headers: { cookie: admin.cookie } })
  ).text();
  assert.doesNotMatch(none, /Form Travel Ltd/);
});

test("the operator console's order page: support settles a pending order and refunds a completed one, each audited with its reason", async () => {
  const partner = await t.createPartner("Order Page Travel", 10_000);
  const support = await operatorSession("support");
  const buy = async (email: string) => {
    const cart = await newCart(partner.api_key);
    return t.app.inject({
      method: "POST",
      url: "/v1/orders/submit",
      headers: t.auth(partner.api_key),
      payload: { cart_key: cart.json().cart_key, ...END_USER, email },
    });
  };
  const stuck = await buy("unavailable@carrier.test");
  assert.equal(stuck.statusCode, 503);
  const pending_id = stuck.json().order_id as string;
  const pendingPage = await (
    await fetch(`${base}/console/admin/orders/${pending_id}`, { headers: { cookie: support.cookie } })
  ).text();
  assert.match(pendingPage, /action="\/console\/admin\/orders\/[^"]+\/settle"/);
  assert.doesNotMatch(pendingPage, /\/refund"/, "no refund form on a pending order");
  assert.equal(
    (
      await support.post(`/console/admin/orders/${pending_id}/settle`, {
        outcome: "failed",
        reason: "ctrl\u0001",
      })
    ).status,
    400,
  );
  const settled = await support.post(`/console/admin/orders/${pending_id}/settle`, {
    outcome: "failed",
    reason: "carrier ticket 9",
  });
  assert.equal(settled.status, 303);
  const order = await t.app.inject({ url: `/v1/orders/${pending_id}`, headers: t.auth(partner.api_key) });
  assert.equal(order.json().status, "failed");

  const bought = await buy("ana@example.com");
  assert.equal(bought.statusCode, 200, bought.body);
  const order_id = bought.json().orderID as string;
  const completedPage = await (
    await fetch(`${base}/console/admin/orders/${order_id}`, { headers: { cookie: support.cookie } })
  ).text();
  assert.match(completedPage, /\/refund"/);
  const refunded = await support.post(`/console/admin/orders/${order_id}/refund`, {
    reason: "trip cancelled",
  });
  assert.equal(refunded.status, 303, await refunded.text());
  const after = await t.app.inject({ url: `/v1/orders/${order_id}`, headers: t.auth(partner.api_key) });
  assert.equal(after.json().status, "refunded");
  const wallet = await t.app.inject({ url: "/v1/profile/wallet", headers: t.auth(partner.api_key) });
  assert.equal(wallet.json().balance.amount_minor, 10_000, "both holds released or refunded");
  const { rows } = await sql<{ action: string; reason: string }>`
    select action, coalesce(details->>'reason', '') as reason from audit_log
    where target_id in (${pending_id}, ${order_id}) and action in ('order.settled', 'order.refunded') order by audit_seq`.execute(
    t.db,
  );
  assert.deepEqual(
    rows.map((r) => [r.action, r.reason]),
    [
      ["order.settled", "carrier ticket 9"],
      ["order.refunded", "trip cancelled"],
    ],
  );
  assert.deepEqual((await auditLedger(t.db)).breaches, []);
});

test("names and reasons count characters as the schema does: 200 emoji are a valid name, 500 a valid reason, trimmed", async () => {
  const partner = await t.createPartner("Emoji Travel", 500);
  const name = "🌍".repeat(200);
  const renamed = await patch(partner.partner_id, { name });
  assert.equal(renamed.statusCode, 200, renamed.body);
  assert.equal(renamed.json().name, name);
  const reason = "⏳".repeat(250) + "🧾".repeat(249);
  const suspended = await patch(partner.partner_id, { status: "suspended", reason: ` ${reason}` });
  assert.equal(suspended.statusCode, 200, suspended.body);
  const stored = await sql<{ name: string; suspended_reason: string }>`
    select name, suspended_reason from partners where partner_id = ${partner.partner_id}`.execute(t.db);
  assert.deepEqual(stored.rows[0], { name, suspended_reason: reason });
  const tooLong = await patch(partner.partner_id, { name: "🌍".repeat(201) });
  assert.equal(tooLong.statusCode, 400);
  assert.equal(tooLong.json().code, "invalid_request");
  await setStatus(partner.partner_id, "active", "paid");
});
