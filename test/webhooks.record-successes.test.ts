// Successful attempts are recorded together (deliver-webhooks.ts, a group commit): each delivery
// only while the lease that sent it holds, and the endpoints they reached stop failing. And a 410's
// outcome is written after its endpoint's lock, the order an endpoint's DELETE takes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { claimDueDeliveries, deliverOnce, successRecorder } from "../src/webhooks/deliver-webhooks.ts";
import { recordSuccesses } from "../src/webhooks/deliveries.sql.ts";
import { createTestApp } from "./support/app.ts";
import { holdInTransaction } from "./support/db.ts";
import { request } from "./support/http.ts";
import { startWebhookReceiver } from "./support/webhook-receiver.ts";
import { waitFor } from "./support/world.ts";

const receiver = await startWebhookReceiver();

test("successes sent together are recorded under their own leases, and their endpoints are healthy again", async () => {
  const app = await createTestApp({ webhook_allow_private_networks: true });
  const partner = await app.createPartner();
  const endpoints: string[] = [];
  for (const name of ["ok-0", "ok-1", "ok-2"]) {
    const created = await request(app.app, "POST", "/v1/webhook-endpoints", {
      key: partner.api_key,
      body: { url: receiver.path(name), event_types: ["webhook.test"] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    endpoints.push(created.body.endpoint_id);
    await request(app.app, "POST", `/v1/webhook-endpoints/${created.body.endpoint_id}/test`, {
      key: partner.api_key,
    });
  }
  await sql`update webhook_endpoints set failing_since = now() - interval '1 hour'`.execute(app.db);
  const claims = await claimDueDeliveries(app.ctx, 10);
  assert.equal(claims.length, 3);
  // The third's lease ran out and another sender claimed it: this attempt's success is not ours to record.
  const taken = claims.find((claim) => claim.endpoint_id === endpoints[2])!;
  await sql`update webhook_deliveries set lease_token = 'another_sender' where delivery_id = ${taken.delivery_id}`.execute(
    app.db,
  );
  const successes = successRecorder(app.db);
  const results = await Promise.all(claims.map((claim) => deliverOnce(app.ctx, claim, "{}", successes)));
  assert.deepEqual(
    results.map((result) => result.kind),
    ["succeeded", "succeeded", "succeeded"],
  );
  const rows = await sql<{
    endpoint_id: string;
    status: string;
    lease_token: string | null;
    failing: boolean;
  }>`
    select d.endpoint_id, d.status, d.lease_token, e.failing_since is not null as failing
    from webhook_deliveries d join webhook_endpoints e using (endpoint_id)`.execute(app.db);
  const byEndpoint = new Map(rows.rows.map((row) => [row.endpoint_id, row]));
  for (const endpoint_id of endpoints.slice(0, 2)) {
    assert.deepEqual(byEndpoint.get(endpoint_id), {
      endpoint_id,
      status: "succeeded",
      lease_token: null,
      failing: false,
    });
  }
  assert.deepEqual(byEndpoint.get(endpoints[2]!), {
    endpoint_id: endpoints[2],
    status: "pending",
    lease_token: "another_sender",
    failing: false, // it answered 2xx: healthy, whoever records the delivery
  });
});

test("one call records a batch, two deliveries to one endpoint included, and clears that endpoint's failure run", async () => {
  const app = await createTestApp({ webhook_allow_private_networks: true });
  const partner = await app.createPartner();
  const created = await request(app.app, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: receiver.path("batch"), event_types: ["webhook.test"] },
  });
  const endpoint_id = created.body.endpoint_id;
  for (let n = 0; n < 2; n++) {
    await request(app.app, "POST", `/v1/webhook-endpoints/${endpoint_id}/test`, { key: partner.api_key });
  }
  await sql`update webhook_endpoints set failing_since = now()`.execute(app.db);
  const claims = await claimDueDeliveries(app.ctx, 10);
  assert.equal(claims.length, 2);
  await recordSuccesses(
    app.db,
    claims.map((claim) => ({ ...claim, status: 204 })),
  );
  const rows = await sql<{ status: string; last_response_status: number }>`
    select status, last_response_status from webhook_deliveries where endpoint_id = ${endpoint_id}`.execute(
    app.db,
  );
  assert.deepEqual(rows.rows, [
    { status: "succeeded", last_response_status: 204 },
    { status: "succeeded", last_response_status: 204 },
  ]);
  const endpoint = await sql<{ failing_since: Date | null }>`
    select failing_since from webhook_endpoints where endpoint_id = ${endpoint_id}`.execute(app.db);
  assert.equal(endpoint.rows[0]!.failing_since, null);
});

test("a 410 met while its endpoint is being deleted waits for the DELETE, then writes nothing", async () => {
  const app = await createTestApp({ webhook_allow_private_networks: true });
  const partner = await app.createPartner();
  const created = await request(app.app, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: receiver.path("gone-while-deleted", () => 410), event_types: ["webhook.test"] },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const endpoint_id = created.body.endpoint_id;
  const sent = await request(app.app, "POST", `/v1/webhook-endpoints/${endpoint_id}/test`, {
    key: partner.api_key,
  });
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  const [claim] = await claimDueDeliveries(app.ctx, 10);
  assert.ok(claim);
  const statusOfDelivery = async () =>
    (
      await sql<{
        status: string;
      }>`select status from webhook_deliveries where delivery_id = ${claim.delivery_id}`.execute(app.db)
    ).rows[0]?.status ?? "gone";

  // The endpoint's row locked as its DELETE locks it first, before its cascade deletes deliveries.
  const deleting = await holdInTransaction(
    app.db,
    (trx) => sql`select 1 from webhook_endpoints where endpoint_id = ${endpoint_id} for update`.execute(trx),
    (trx) => sql`delete from webhook_endpoints where endpoint_id = ${endpoint_id}`.execute(trx),
  );
  const attempt = deliverOnce(app.ctx, claim, "{}");
  // Reported by the `await attempt` below, not as an unhandled rejection meanwhile.
  attempt.catch(() => undefined);
  try {
    // The attempt's transaction waiting for a row lock: on the endpoint, as the fix orders it.
    await waitFor("the attempt waiting for a lock", async () => {
      const waiting = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`.execute(app.db);
      return waiting.rows[0]!.n === 1;
    });
    // And holding no lock on its delivery: an update written first would hold one, uncommitted.
    const free = await sql`
      select 1 from webhook_deliveries where delivery_id = ${claim.delivery_id}
      for share skip locked`.execute(app.db);
    assert.equal(free.rows.length, 1, "the attempt waits for the endpoint before writing its delivery");
  } finally {
    await deleting.release();
  }
  assert.equal((await attempt).kind, "gone");
  assert.equal(await statusOfDelivery(), "gone", "the DELETE's cascade took the delivery");
});
