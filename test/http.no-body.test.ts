// A route that takes no body refuses one with 400 invalid_request and does nothing (shared/endpoint.ts,
// refuseBody): a body means the caller expects something of the route that it would not do. No
// body, or `{}`, is fine. The refund's own case (a partial amount) is in refunds.test.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { request } from "./support/http.ts";

const app = await createTestApp({ webhook_allow_private_networks: true });
const partner = await app.createPartner();
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function newEndpoint(): Promise<string> {
  const created = await request(app.app, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: "http://127.0.0.1:9/hooks" },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.endpoint_id;
}

function assertRefused(answer: { status: number; body: any }, errors: unknown[]): void {
  assert.equal(answer.status, 400, JSON.stringify(answer.body));
  assert.equal(answer.body.code, "invalid_request");
  assert.deepEqual(answer.body.errors, errors);
}

/** How many rows of `table` the partner has. */
const rowsOfPartner = async (table: "events" | "api_keys") =>
  (
    await sql<{
      n: number;
    }>`select count(*)::int as n from ${sql.table(table)} where partner_id = ${partner.partner_id}`.execute(
      app.db,
    )
  ).rows[0]!.n;

const secretOf = async (endpoint_id: string) =>
  (
    await sql<{
      secret_sealed: string;
    }>`select secret_sealed from webhook_endpoints where endpoint_id = ${endpoint_id}`.execute(app.db)
  ).rows[0]?.secret_sealed;

test("rotate-secret with a body is refused and rotates nothing; with {} or none it rotates", async () => {
  const endpoint_id = await newEndpoint();
  const path = `/v1/webhook-endpoints/${endpoint_id}/rotate-secret`;
  const before = await secretOf(endpoint_id);
  assertRefused(await request(app.app, "POST", path, { key: partner.api_key, body: { expires_in: 0 } }), [
    { field: "expires_in", code: "unknown_field", message: "is not a known field" },
  ]);
  assertRefused(await request(app.app, "POST", path, { key: partner.api_key, body: ["now"] }), [
    { field: "body", code: "not_allowed", message: "must be empty: this request takes no body" },
  ]);
  assertRefused(await request(app.app, "POST", path, { key: partner.api_key, body: "now" }), [
    { field: "body", code: "not_allowed", message: "must be empty: this request takes no body" },
  ]);
  assert.equal(await secretOf(endpoint_id), before, "not rotated");
  assert.equal((await request(app.app, "POST", path, { key: partner.api_key, body: {} })).status, 200);
  assert.equal((await request(app.app, "POST", path, { key: partner.api_key })).status, 200);
});

test("a test event, a delivery retry and an endpoint's DELETE with a body are refused and change nothing", async () => {
  const endpoint_id = await newEndpoint();
  const base = `/v1/webhook-endpoints/${endpoint_id}`;
  const events = () => rowsOfPartner("events");
  const events_before = await events();
  assertRefused(
    await request(app.app, "POST", `${base}/test`, { key: partner.api_key, body: { type: "x" } }),
    [{ field: "type", code: "unknown_field", message: "is not a known field" }],
  );
  assert.equal(await events(), events_before, "no test event recorded");

  const sent = await request(app.app, "POST", `${base}/test`, { key: partner.api_key });
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  const [delivery] = (await request(app.app, "GET", `${base}/deliveries`, { key: partner.api_key })).body
    .data;
  const next_before = delivery.next_attempt_at;
  assertRefused(
    await request(app.app, "POST", `${base}/deliveries/${delivery.delivery_id}/retry`, {
      key: partner.api_key,
      body: { at: "now" },
    }),
    [{ field: "at", code: "unknown_field", message: "is not a known field" }],
  );
  const [after] = (await request(app.app, "GET", `${base}/deliveries`, { key: partner.api_key })).body.data;
  assert.equal(after.next_attempt_at, next_before, "not rescheduled");

  assertRefused(await request(app.app, "DELETE", base, { key: partner.api_key, body: { force: true } }), [
    { field: "force", code: "unknown_field", message: "is not a known field" },
  ]);
  assert.equal((await request(app.app, "GET", base, { key: partner.api_key })).status, 200, "still there");
  assert.equal((await request(app.app, "DELETE", base, { key: partner.api_key })).status, 204);
});

test("the operator's API key routes refuse a body (revoke) or a field (issue) they do not take", async () => {
  const keys = () => rowsOfPartner("api_keys");
  const before = await keys();
  const path = `/admin/partners/${partner.partner_id}/api-keys`;
  // Issuing takes {name, scope, allowed_ips} since issue 31; anything else is still refused.
  assertRefused(await request(app.app, "POST", path, { headers: admin, body: { label: "ci" } }), [
    { field: "label", code: "unknown_field", message: "is not a known field" },
  ]);
  assertRefused(
    await request(app.app, "DELETE", `/admin/api-keys/${partner.key_id}`, {
      headers: admin,
      body: { now: true },
    }),
    [{ field: "now", code: "unknown_field", message: "is not a known field" }],
  );
  assert.equal(await keys(), before, "no key issued");
  const revoked = await sql<{
    revoked_at: Date | null;
  }>`select revoked_at from api_keys where key_id = ${partner.key_id}`.execute(app.db);
  assert.equal(revoked.rows[0]!.revoked_at, null, "the key not revoked");
});
