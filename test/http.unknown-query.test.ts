// A query parameter a route does not read is refused with 400 invalid_request naming it, and
// nothing is done (shared/query-names.ts): ignored, it meant the caller expected something of the
// route that it would not do. Every route: the API's (with or without a query schema), the
// operator's, the service routes and the console's pages and forms (a page, not problem+json).
// The refund's own case (`?amount_minor=100`) is in refunds.test.ts. Real HTTP on a real port.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { request } from "./support/http.ts";
import { ownerCookie } from "./support/people.ts";

const app = await createTestApp({ webhook_allow_private_networks: true, metrics_token: null });
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });
const partner = await app.createPartner();
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

function assertRefused(answer: { status: number; body: any }, names: string[]): void {
  assert.equal(answer.status, 400, JSON.stringify(answer.body));
  assert.equal(answer.body.code, "invalid_request");
  assert.deepEqual(
    answer.body.errors,
    names.map((field) => ({ field, code: "unknown_field", message: "is not a known query parameter" })),
  );
}

const rowsOfPartner = async (table: "events" | "api_keys") =>
  (
    await sql<{
      n: number;
    }>`select count(*)::int as n from ${sql.table(table)} where partner_id = ${partner.partner_id}`.execute(
      app.db,
    )
  ).rows[0]!.n;

/** A partner's owner signs in to the console through its form: the Cookie header. */
const signIn = (partner: { partner_id: string }) => ownerCookie(app.database.pool, base, partner.partner_id);

test("a change with an unknown query parameter is refused and does nothing; without it, it is done", async () => {
  const created = await request(base, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: "http://127.0.0.1:9/hooks" },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const path = `/v1/webhook-endpoints/${created.body.endpoint_id}/test`;
  const events = await rowsOfPartner("events");
  assertRefused(
    await request(base, "POST", `${path}?type=order.completed&dry_run`, { key: partner.api_key }),
    ["type", "dry_run"],
  );
  assert.equal(await rowsOfPartner("events"), events, "no test event recorded");
  assert.equal((await request(base, "POST", path, { key: partner.api_key })).status, 202);
  assert.equal(await rowsOfPartner("events"), events + 1);
});

test("a route with a query schema refuses a name outside it the same way, and takes its own", async () => {
  assertRefused(
    await request(base, "GET", "/v1/profile/orders?limit=5&amount_minor=1", { key: partner.api_key }),
    ["amount_minor"],
  );
  assert.equal(
    (await request(base, "GET", "/v1/profile/orders?limit=5", { key: partner.api_key })).status,
    200,
  );
});

test("the operator's routes refuse an unknown query parameter and issue nothing", async () => {
  const keys = await rowsOfPartner("api_keys");
  const path = `/admin/partners/${partner.partner_id}/api-keys`;
  assertRefused(await request(base, "POST", `${path}?name=ci`, { headers: admin }), ["name"]);
  assert.equal(await rowsOfPartner("api_keys"), keys, "no key issued");
});

test("the service routes refuse one too (HEAD included), and answer without it", async () => {
  for (const path of ["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"]) {
    const refused = await request(base, "GET", `${path}?verbose=1`);
    assertRefused(refused, ["verbose"]);
    assert.equal((await request(base, "GET", path)).status, 200, path);
  }
  const head = await fetch(`${base}/healthz?verbose=1`, { method: "HEAD" });
  assert.equal(head.status, 400);
});

test("the console refuses an unknown query parameter with a page, on pages and forms; its own names work", async () => {
  const cookie = await signIn(partner);
  const page = await fetch(`${base}/console/wallet?from=2026-01-01&to=&cursor=&utm_source=mail`, {
    headers: { cookie },
  });
  assert.equal(page.status, 400);
  assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
  assert.match(await page.text(), /Unknown query parameter: utm_source\./);
  // What the statement's form sends (empty fields included), and its CSV button (formaction).
  const own = await fetch(`${base}/console/wallet?from=2026-01-01&to=`, { headers: { cookie } });
  assert.equal(own.status, 200);
  const csv = await fetch(`${base}/console/wallet/statement.csv?from=&to=`, { headers: { cookie } });
  assert.equal(csv.status, 200);
  assert.equal((await fetch(`${base}/console/sign-in?ended=1`)).status, 200);

  // A form: the CSRF token comes from the page; the key is issued only without the extra name.
  const keys_page = await (await fetch(`${base}/console/keys`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(keys_page)?.[1];
  assert.ok(csrf, "a CSRF token on the page");
  const keys = await rowsOfPartner("api_keys");
  const issue = (query: string) =>
    fetch(`${base}/console/keys${query}`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, origin: base, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
  const refused = await issue("?expires_in=0");
  assert.equal(refused.status, 400);
  assert.match(await refused.text(), /Unknown query parameter: expires_in\./);
  assert.equal(await rowsOfPartner("api_keys"), keys, "no key issued");
  assert.equal((await issue("")).status, 200);
  assert.equal(await rowsOfPartner("api_keys"), keys + 1);
});
