// The audit log (issue 31): every audited change is one entry, written in its transaction, with
// the actor who made it (an API key, the operator's token, the operator's CLI); a replay that
// changes nothing adds nothing. GET /v1/audit-log shows a partner its own entries (the operator's
// actions on it included) and never another's; GET /admin/audit-log shows all. Filters, cursor
// pages, bad filters, the purge past retention, and the console pages. Real HTTP on a real port,
// the carrier simulator as its own process, one PostgreSQL.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { purgeAuditLog } from "../src/audit/purge-audit-log.ts";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { importCatalog } from "../src/catalog/import-catalog.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { runCli } from "./support/cli.ts";
import { createTestDatabase } from "./support/db.ts";
import { purchase } from "./support/fixtures.ts";
import { bearer, type Json, request } from "./support/http.ts";
import { addPerson, type Person, signInCookie } from "./support/people.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const app = await createTestApp(
  { carrier_timeout_ms: 5_000, webhook_allow_private_networks: true, currency: "USD" },
  { database, carrier },
);
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });
const admin = bearer(ADMIN_TOKEN);

type Entry = {
  audit_id: string;
  created_at: string;
  actor: { type: string; id: string | null; email?: string };
  action: string;
  target: { type: string; id: string | null };
  ip: string | null;
  details: Json;
};

async function partnerLog(api_key: string, query = "limit=100"): Promise<Entry[]> {
  const answer = await request(base, "GET", `/v1/audit-log?${query}`, { key: api_key });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data;
}

async function operatorLog(query: string): Promise<Entry[]> {
  const answer = await request(base, "GET", `/admin/audit-log?${query}`, { headers: admin });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data;
}

/** The entries of one action, asserting there is exactly one. */
function one(entries: Entry[], action: string, target_id?: string): Entry {
  const found = entries.filter(
    (e) => e.action === action && (target_id === undefined || e.target.id === target_id),
  );
  assert.equal(
    found.length,
    1,
    `${action} ${target_id ?? ""}: ${JSON.stringify(entries.map((e) => e.action))}`,
  );
  return found[0]!;
}

const OPERATOR = { type: "operator", id: "admin_token" };

test("the operator's partner, credit and prices are one entry each, as operator/admin_token, a replayed credit none", async () => {
  const partner = await app.createPartner("Audit Ops Travel", 0);
  const credit = { amount_minor: 5_000, reference: "wire-audit-1" };
  const url = `/admin/partners/${partner.partner_id}/wallet/credits`;
  const first = await request(base, "POST", url, { headers: admin, body: credit });
  assert.equal(first.body.credited, true);
  const replay = await request(base, "POST", url, { headers: admin, body: credit });
  assert.equal(replay.status, 201);
  assert.equal(replay.body.credited, false);
  const priced = await request(base, "PUT", `/admin/partners/${partner.partner_id}/pricing`, {
    headers: admin,
    body: { discount_percent: 10, overrides: [] },
  });
  assert.equal(priced.status, 200);

  const entries = await partnerLog(partner.api_key);
  assert.deepEqual(
    entries.map((e) => e.action),
    ["pricing.updated", "wallet.credited", "partner.created"],
    "newest first",
  );
  const created = one(entries, "partner.created");
  assert.deepEqual(created.actor, OPERATOR);
  assert.deepEqual(created.target, { type: "partner", id: partner.partner_id });
  assert.equal(created.ip, "127.0.0.1");
  const credited = one(entries, "wallet.credited");
  assert.deepEqual(credited.actor, OPERATOR);
  assert.deepEqual(credited.details, {
    amount: { amount_minor: 5_000, currency: "USD" },
    reference: "wire-audit-1",
  });
  assert.deepEqual(one(entries, "pricing.updated").details, { discount_percent: 10, override_count: 0 });
  // The wire shape, exactly.
  assert.deepEqual(Object.keys(credited).sort(), [
    "action",
    "actor",
    "audit_id",
    "created_at",
    "details",
    "ip",
    "target",
  ]);
  assert.match(credited.audit_id, /^aud_/);
});

test("a partner's webhook endpoint and alert changes are one entry each, as its API key", async () => {
  const partner = await app.createPartner("Audit Hooks Travel", 0);
  const created = await request(base, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: "http://127.0.0.1:9/hooks", event_types: ["order.completed"] },
  });
  assert.equal(created.status, 201);
  const hook = `/v1/webhook-endpoints/${created.body.endpoint_id}`;
  assert.equal(
    (await request(base, "PATCH", hook, { key: partner.api_key, body: { status: "disabled" } })).status,
    200,
  );
  assert.equal((await request(base, "POST", `${hook}/rotate-secret`, { key: partner.api_key })).status, 200);
  assert.equal((await request(base, "DELETE", hook, { key: partner.api_key })).status, 204);
  // A second delete changes nothing: 404, and no second entry.
  assert.equal((await request(base, "DELETE", hook, { key: partner.api_key })).status, 404);
  const alert = await request(base, "PUT", "/v1/profile/wallet/low-balance-alert", {
    key: partner.api_key,
    body: { threshold_minor: 1_000 },
  });
  assert.equal(alert.status, 200);
  // The same level again changes nothing and writes no second entry.
  const same = await request(base, "PUT", "/v1/profile/wallet/low-balance-alert", {
    key: partner.api_key,
    body: { threshold_minor: 1_000 },
  });
  assert.equal(same.status, 200);

  const entries = await partnerLog(partner.api_key);
  const by_key = { type: "api_key", id: partner.key_id };
  for (const action of [
    "webhook_endpoint.created",
    "webhook_endpoint.updated",
    "webhook_endpoint.secret_rotated",
    "webhook_endpoint.deleted",
  ]) {
    const entry = one(entries, action, created.body.endpoint_id);
    assert.deepEqual(entry.actor, by_key, action);
    assert.equal(entry.ip, "127.0.0.1");
    assert.equal(entry.target.type, "webhook_endpoint");
  }
  assert.deepEqual(one(entries, "webhook_endpoint.updated").details, { changed: { status: "disabled" } });
  assert.ok(!JSON.stringify(entries).includes("whsec_"), "no secret in the log");
  const set = one(entries, "wallet.low_balance_alert_set");
  assert.deepEqual(set.actor, by_key);
  assert.deepEqual(set.details, { threshold_minor: 1_000 });
});

test("a refund is one order.refunded entry as the key that asked, however often it is asked", async () => {
  const partner = await app.createPartner("Audit Refund Travel", 100_00);
  const order = await purchase(base, partner.api_key);
  const url = `/v1/orders/${order.orderID}/refund`;
  const first = await request(base, "POST", url, { key: partner.api_key, body: {} });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const again = await request(base, "POST", url, { key: partner.api_key, body: {} });
  assert.equal(again.status, 200);
  const entries = await partnerLog(partner.api_key, "action=order.refunded");
  const entry = one(entries, "order.refunded", order.orderID);
  assert.deepEqual(entry.actor, { type: "api_key", id: partner.key_id });
  assert.deepEqual(entry.details, { amount: { amount_minor: order.total.amount_minor, currency: "USD" } });
});

test("the operator's refund, past the partner's window, is one order.refunded entry as operator/admin_token with its reason", async () => {
  const partner = await app.createPartner("Audit Operator Refund Travel", 100_00);
  const order = await purchase(base, partner.api_key);
  // Past REFUND_WINDOW_DAYS: the partner may no longer refund it; the operator may.
  await sql`update orders set created_at = now() - interval '90 days' where order_id = ${order.orderID}`.execute(
    app.db,
  );
  const own = await request(base, "POST", `/v1/orders/${order.orderID}/refund`, {
    key: partner.api_key,
    body: {},
  });
  assert.equal(own.status, 409);
  assert.equal(own.body.reason, "window_passed");
  const url = `/admin/orders/${order.orderID}/refund`;
  const first = await request(base, "POST", url, { headers: admin, body: { reason: "ticket 4711" } });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.status, "refunded");
  const again = await request(base, "POST", url, { headers: admin, body: { reason: "ticket 4711" } });
  assert.equal(again.status, 200);
  const entry = one(
    await partnerLog(partner.api_key, "action=order.refunded"),
    "order.refunded",
    order.orderID,
  );
  assert.deepEqual(entry.actor, OPERATOR);
  assert.equal(entry.details.reason, "ticket 4711");
  const unknown = await request(base, "POST", "/admin/orders/ord_AAAAAAAAAAAAAAAAAAAAAA/refund", {
    headers: admin,
    body: { reason: "x" },
  });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.code, "order_not_found");
});

test("the CLI's credit is one entry as operator/cli with no address; its replay none", async () => {
  const partner = await app.createPartner("Audit CLI Travel", 0);
  const env = { DATABASE_URL: database.url, APP_ENV: "sandbox", CURRENCY: "USD" };
  for (let run = 0; run < 2; run++) {
    const credit = await runCli(
      ["wallet", "credit", partner.partner_id, "25", "--reference", "cli-wire-1", "--json"],
      env,
    );
    assert.equal(credit.code, 0, credit.stderr);
  }
  const entry = one(await partnerLog(partner.api_key), "wallet.credited");
  assert.deepEqual(entry.actor, { type: "operator", id: "cli" });
  assert.equal(entry.ip, null);
  assert.equal(entry.details.reference, "cli-wire-1");
});

test("partner A never sees B's entries, and sees the operator's on A; the operator sees both", async () => {
  const a = await app.createPartner("Audit A Travel", 1_000);
  const b = await app.createPartner("Audit B Travel", 2_000);
  await request(base, "POST", "/v1/webhook-endpoints", {
    key: b.api_key,
    body: { url: "http://127.0.0.1:9/b" },
  });
  const a_log = await partnerLog(a.api_key);
  assert.ok(!JSON.stringify(a_log).includes(b.partner_id), "nothing of B's");
  assert.ok(!JSON.stringify(a_log).includes(b.key_id), "nothing by B's key");
  assert.ok(a_log.every((e) => e.action !== "webhook_endpoint.created"));
  assert.deepEqual(one(a_log, "wallet.credited").actor, OPERATOR);
  const b_log = await partnerLog(b.api_key);
  assert.ok(!JSON.stringify(b_log).includes(a.partner_id), "nothing of A's");

  const of_b = await operatorLog(`partner_id=${b.partner_id}`);
  assert.deepEqual(
    of_b.map((e) => e.audit_id),
    b_log.map((e) => e.audit_id),
    "the operator's view of B is B's own",
  );
  const all = (await operatorLog("limit=100")).map((e) => e.audit_id);
  for (const entry of [...a_log, ...b_log]) assert.ok(all.includes(entry.audit_id));
});

test("a catalog import is the operator's own entry: in the operator's view, in no partner's", async () => {
  const partner = await app.createPartner("Audit Catalog Travel", 0);
  const report = await importCatalog(database.pool, "test/fixtures/catalog-sample.csv", {
    currency: "USD",
    actor: CLI_ACTOR,
  });
  assert.notEqual(report.version, null, "the import changed the catalog");
  const imported = one(await operatorLog("action=catalog.imported"), "catalog.imported");
  assert.deepEqual(imported.actor, { type: "operator", id: "cli" });
  assert.equal(imported.target.id, String(report.version));
  assert.ok((await partnerLog(partner.api_key)).every((e) => e.action !== "catalog.imported"));
  // The same file again changes nothing, and records nothing.
  await importCatalog(database.pool, "test/fixtures/catalog-sample.csv", {
    currency: "USD",
    actor: CLI_ACTOR,
  });
  one(await operatorLog("action=catalog.imported"), "catalog.imported");
});

test("cursor pages walk a filtered log newest first, each entry once; dates bound it", async () => {
  const partner = await app.createPartner("Audit Pages Travel", 0);
  for (let i = 1; i <= 5; i++) {
    await request(base, "PUT", "/v1/profile/wallet/low-balance-alert", {
      key: partner.api_key,
      body: { threshold_minor: i * 100 },
    });
  }
  const seen: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `action=wallet.low_balance_alert_set&limit=2${cursor ? `&cursor=${cursor}` : ""}`;
    const answer = await request(base, "GET", `/v1/audit-log?${query}`, { key: partner.api_key });
    assert.equal(answer.status, 200);
    seen.push(...answer.body.data.map((e: Entry) => e.details.threshold_minor as number));
    assert.equal(answer.body.has_more, answer.body.next_cursor !== null);
    cursor = answer.body.next_cursor;
    pages++;
  } while (cursor !== null && pages < 10);
  assert.deepEqual(seen, [500, 400, 300, 200, 100]);
  assert.equal(pages, 3);

  // Two entries moved to noon 30 days ago: that day's range finds them and only them.
  const noon = new Date(Date.now() - 30 * 86_400_000);
  noon.setUTCHours(12, 0, 0, 0);
  await sql`update audit_log set created_at = ${noon}
            where partner_id = ${partner.partner_id} and details->>'threshold_minor' in ('100', '200')`.execute(
    app.db,
  );
  const day = noon.toISOString().slice(0, 10);
  const that_day = await partnerLog(partner.api_key, `from=${day}&to=${day}`);
  assert.deepEqual(that_day.map((e) => e.details.threshold_minor).sort(), [100, 200]);
  const today = new Date().toISOString().slice(0, 10);
  const recent = await partnerLog(partner.api_key, `action=wallet.low_balance_alert_set&from=${today}`);
  assert.deepEqual(
    recent.map((e) => e.details.threshold_minor),
    [500, 400, 300],
  );
});

test("a bad filter is 400 invalid_request on both routes", async () => {
  const partner = await app.createPartner("Audit Filters Travel", 0);
  for (const query of [
    "from=yesterday",
    "from=2026-02-30",
    "to=2026-13-01",
    "from=2026-03-02&to=2026-03-01",
    "action=Wallet%20Credited",
    "action=credited",
    "cursor=not-a-cursor",
    "limit=0",
    "partner=ptr_x",
  ]) {
    const own = await request(base, "GET", `/v1/audit-log?${query}`, { key: partner.api_key });
    assert.equal(own.status, 400, `${query}: ${JSON.stringify(own.body)}`);
    assert.equal(own.body.code, "invalid_request", query);
    const ops = await request(base, "GET", `/admin/audit-log?${query}`, { headers: admin });
    assert.equal(ops.status, 400, `admin ${query}`);
    assert.equal(ops.body.code, "invalid_request", query);
  }
  const bad_partner = await request(base, "GET", "/admin/audit-log?partner_id=nobody", { headers: admin });
  assert.equal(bad_partner.status, 400);
  // Another list's cursor is not this one's.
  const events = await request(base, "GET", "/v1/events?limit=1", { key: partner.api_key });
  if (events.body.next_cursor) {
    const crossed = await request(base, "GET", `/v1/audit-log?cursor=${events.body.next_cursor}`, {
      key: partner.api_key,
    });
    assert.equal(crossed.status, 400);
  }
});

test("the purge deletes entries past retention in batches and keeps the younger ones", async () => {
  const partner = await app.createPartner("Audit Purge Travel", 0);
  for (let i = 1; i <= 5; i++) {
    await request(base, "PUT", "/v1/profile/wallet/low-balance-alert", {
      key: partner.api_key,
      body: { threshold_minor: i },
    });
  }
  // 1-3 are 401 days old (past a 400-day retention), 4 is 399 days old, 5 and the partner's
  // creation are today's.
  await sql`update audit_log set created_at = now() - interval '401 days'
            where partner_id = ${partner.partner_id} and details->>'threshold_minor' in ('1', '2', '3')`.execute(
    app.db,
  );
  await sql`update audit_log set created_at = now() - interval '399 days'
            where partner_id = ${partner.partner_id} and details->>'threshold_minor' = '4'`.execute(app.db);
  const others = async () =>
    Number(
      (
        await sql<{ n: string }>`select count(*) as n from audit_log
                                 where partner_id is distinct from ${partner.partner_id}`.execute(app.db)
      ).rows[0]!.n,
    );
  const others_before = await others();
  const purged = await purgeAuditLog(app.db, 400, { batch_size: 2 });
  assert.equal(purged.entries, 3);
  assert.equal(purged.more, false);
  const left = await partnerLog(partner.api_key);
  assert.deepEqual(
    left.map((e) => (e.action === "partner.created" ? "created" : e.details.threshold_minor)),
    [5, 4, "created"],
  );
  assert.equal((await purgeAuditLog(app.db, 400)).entries, 0, "nothing more to purge");
  assert.equal(await others(), others_before, "nobody else's entries went");
  // A run that stops at its limit says there is more.
  await sql`update audit_log set created_at = now() - interval '500 days'
            where partner_id = ${partner.partner_id}`.execute(app.db);
  const limited = await purgeAuditLog(app.db, 400, { batch_size: 1, max_batches: 2 });
  assert.deepEqual(limited, { entries: 2, more: true });
});

/** Signs a person in to their console area through its form: the Cookie header. */
async function signIn(person: Person): Promise<string> {
  const name = person.realm === "operator" ? "console_operator" : "console_partner";
  return `${name}=${await signInCookie(base, person)}`;
}

test("the console's audit log pages list the entries, filtered and paged, on both sides", async () => {
  const partner = await app.createPartner("Audit Console Travel", 700);
  const owner = await addPerson(app.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const own = await signIn(owner);
  const page = await fetch(`${base}/console/audit-log`, { headers: { cookie: own } });
  assert.equal(page.status, 200);
  const text = await page.text();
  assert.match(text, /<title>Audit log/);
  assert.match(text, /aria-current="page">Audit log/);
  assert.match(text, /wallet\.credited/);
  assert.match(text, /partner\.created/);
  assert.match(text, /admin_token/);
  assert.match(text, /class="table-wrap"/, "the table scrolls on a phone");

  // A change made in the partner's console is audited as the person signed in.
  const made = await fetch(`${base}/console/webhooks`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: own, "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams({ _csrf: csrfOf(text), url: "http://127.0.0.1:9/console" }).toString(),
  });
  assert.equal(made.status, 200, (await made.text()).slice(0, 300));
  const hook = one(await partnerLog(partner.api_key), "webhook_endpoint.created");
  assert.deepEqual(hook.actor, { type: "user", id: owner.user_id, email: owner.email });
  assert.equal(hook.details.url, "http://127.0.0.1:9/console");

  const operator = await addPerson(app.database.pool, { realm: "operator", role: "admin" });
  const ops = await signIn(operator);
  const filtered = await fetch(
    `${base}/console/admin/audit-log?partner_id=${partner.partner_id}&action=wallet.credited`,
    { headers: { cookie: ops } },
  );
  assert.equal(filtered.status, 200);
  const ops_text = await filtered.text();
  assert.match(ops_text, new RegExp(`href="/console/admin/partners/${partner.partner_id}"`));
  assert.match(ops_text, /wallet\.credited/);
  assert.doesNotMatch(ops_text, /partner\.created/);
  const paged = await fetch(`${base}/console/admin/audit-log?limit=1`, { headers: { cookie: ops } });
  assert.equal(paged.status, 400, "the page reads only its own filters");
  const first = await fetch(`${base}/console/admin/audit-log`, { headers: { cookie: ops } });
  assert.match(await first.text(), /Older entries/, "more than one page of entries by now");
  const bad = await fetch(`${base}/console/admin/audit-log?from=someday`, { headers: { cookie: ops } });
  assert.equal(bad.status, 400);

  // A change made in the operator's console is audited as the operator's person: the credit form.
  const credit = await fetch(`${base}/console/admin/partners/${partner.partner_id}/credits`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: ops, "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams({
      _csrf: csrfOf(ops_text),
      amount: "3.00",
      reference: "console-wire-1",
    }).toString(),
  });
  assert.equal(credit.status, 303, await credit.text());
  const entries = await partnerLog(partner.api_key, "action=wallet.credited");
  const entry = entries.find((e) => e.details.reference === "console-wire-1");
  assert.ok(entry);
  // The operator's staff act as the operator; the partner's log names them by id only.
  assert.deepEqual(entry.actor, { type: "operator", id: operator.user_id });
  const { rows } = await sql<{ actor_email: string }>`
    select actor_email from audit_log where action = 'wallet.credited' and details->>'reference' = 'console-wire-1'`.execute(
    app.db,
  );
  assert.deepEqual(rows, [{ actor_email: operator.email }], "the operator's own log keeps the email");
});

function csrfOf(html: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(token, "a CSRF token on the page");
  return token;
}
