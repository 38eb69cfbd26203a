// An endpoint deleted while a delivery to it is being made: the delivery's insert waits for the
// DELETE and leaves the endpoint out (or in, if the DELETE rolls back), instead of failing on the
// foreign key. Before, a test event answered 500 and a dispatch round failed (deliveries.sql.ts,
// insertDeliveries).
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { recordEvent } from "../src/events/record-event.ts";
import { dispatchEvents } from "../src/webhooks/dispatch-events.ts";
import { createTestApp, type TestApp } from "./support/app.ts";
import { holdInTransaction } from "./support/db.ts";
import { request } from "./support/http.ts";
import { waitFor } from "./support/world.ts";

async function endpointOf(app: TestApp, api_key: string): Promise<string> {
  const created = await request(app.app, "POST", "/v1/webhook-endpoints", {
    key: api_key,
    body: { url: "http://127.0.0.1:9/hooks" },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.endpoint_id;
}

/**
 * The endpoint's DELETE begun and not committed: its row locked and deleted, as the route's. On
 * release it commits, or with `rollback` it rolls back (release() then rejects with ROLLED_BACK).
 */
function deleting(app: TestApp, endpoint_id: string, options = { rollback: false }) {
  return holdInTransaction(
    app.db,
    (trx) => sql`delete from webhook_endpoints where endpoint_id = ${endpoint_id}`.execute(trx),
    async () => {
      if (options.rollback) throw new Error(ROLLED_BACK);
    },
  );
}
const ROLLED_BACK = "the DELETE rolled back";

/** Until one transaction waits for a row lock: the insert, on the DELETE's endpoint. */
async function insertWaiting(app: TestApp): Promise<void> {
  await waitFor("the delivery's insert waiting for the endpoint", async () => {
    const waiting = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(app.db);
    return waiting.rows[0]!.n === 1;
  });
}

const count = async (app: TestApp, table: "events" | "webhook_deliveries", partner_id: string) =>
  (
    await sql<{
      n: number;
    }>`select count(*)::int as n from ${sql.table(table)} where partner_id = ${partner_id}`.execute(app.db)
  ).rows[0]!.n;

test("a test event sent while its endpoint is being deleted answers 404 and records nothing", async () => {
  const app = await createTestApp({ webhook_allow_private_networks: true });
  const partner = await app.createPartner();
  const endpoint_id = await endpointOf(app, partner.api_key);
  const held = await deleting(app, endpoint_id);
  const sent = request(app.app, "POST", `/v1/webhook-endpoints/${endpoint_id}/test`, {
    key: partner.api_key,
  });
  try {
    await insertWaiting(app);
  } finally {
    await held.release();
  }
  const answer = await sent;
  assert.equal(answer.status, 404, JSON.stringify(answer.body));
  assert.equal(answer.body.code, "webhook_endpoint_not_found");
  assert.equal(await count(app, "events", partner.partner_id), 0, "the test event rolled back with it");
  assert.equal(await count(app, "webhook_deliveries", partner.partner_id), 0);
});

test("a test event sent while its endpoint's DELETE rolls back is delivered as usual", async () => {
  const app = await createTestApp({ webhook_allow_private_networks: true });
  const partner = await app.createPartner();
  const endpoint_id = await endpointOf(app, partner.api_key);
  const held = await deleting(app, endpoint_id, { rollback: true });
  const sent = request(app.app, "POST", `/v1/webhook-endpoints/${endpoint_id}/test`, {
    key: partner.api_key,
  });
  try {
    await insertWaiting(app);
  } finally {
    await assert.rejects(held.release(), new RegExp(ROLLED_BACK));
  }
  const answer = await sent;
  assert.equal(answer.status, 202, JSON.stringify(answer.body));
  const made = await sql<{ endpoint_id: string; event_id: string }>`
    select endpoint_id, event_id from webhook_deliveries where partner_id = ${partner.partner_id}`.execute(
    app.db,
  );
  assert.deepEqual(made.rows, [{ endpoint_id, event_id: answer.body.event_id }]);
});

test("a dispatch meeting an endpoint's DELETE leaves that endpoint out and delivers to the others", async () => {
  const app = await createTestApp({ webhook_allow_private_networks: true });
  const partner = await app.createPartner();
  const gone = await endpointOf(app, partner.api_key);
  const kept = await endpointOf(app, partner.api_key);
  const event_id = await app.db
    .transaction()
    .execute((trx) =>
      recordEvent(trx, { partner_id: partner.partner_id, type: "wallet.credited", data: { balance: 1 } }),
    );
  const held = await deleting(app, gone);
  const dispatched = dispatchEvents(app.ctx);
  // Reported by the `await dispatched` below, not as an unhandled rejection meanwhile.
  dispatched.catch(() => undefined);
  try {
    await insertWaiting(app);
  } finally {
    await held.release();
  }
  assert.deepEqual(await dispatched, { events: 1, deliveries: 1 });
  const made = await sql<{ endpoint_id: string; event_id: string }>`
    select endpoint_id, event_id from webhook_deliveries where partner_id = ${partner.partner_id}`.execute(
    app.db,
  );
  assert.deepEqual(made.rows, [{ endpoint_id: kept, event_id }]);
  assert.equal((await dispatchEvents(app.ctx)).events, 0, "the event was dispatched once, in that round");
});
