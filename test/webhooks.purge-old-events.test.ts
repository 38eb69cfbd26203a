// The `purge_old_events` job (src/webhooks/purge-old-events.ts, migration 0017): events past GET
// /v1/events' 30 days are deleted with their deliveries, in bounded batches, skipping rows another
// transaction holds; recent ones and their deliveries stay. Real service processes deliver to a
// real receiver first, so the deliveries purged are the ones the service made.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { EXPIRING_NOTICE_MS } from "../src/esims/apply-signal-merge.ts";
import { EVENT_WINDOW_DAYS } from "../src/events/events.sql.ts";
import { purgeOldEvents } from "../src/webhooks/purge-old-events.ts";
import { holdInTransaction } from "./support/db.ts";
import { startWebhookReceiver } from "./support/webhook-receiver.ts";
import { call, createWorld, type Json, newPartner, waitFor } from "./support/world.ts";

const world = await createWorld({
  env: {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    WEBHOOK_POLL_MS: "100",
    USAGE_SYNC_MAX_PER_SECOND: "0",
  },
});
const api = world.services[0]!.url;
const db = createKysely<Database>(world.database.pool);
const receiver = await startWebhookReceiver();

const partner = await newPartner(api, 10_00);

/** An endpoint of the partner on the receiver's path `name`, its secret registered there. */
async function newEndpoint(name: string): Promise<string> {
  const created = await call(api, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: receiver.path(name) },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  receiver.setSecrets(name, [created.body.secret]);
  return created.body.endpoint_id;
}

const endpoint_id = await newEndpoint("purge");

/** A `webhook.test` event to one endpoint (by default the file's), delivered to the receiver. */
async function deliveredEvent(to = { endpoint_id, name: "purge" }): Promise<string> {
  const sent = await call(api, "POST", `/v1/webhook-endpoints/${to.endpoint_id}/test`, {
    key: partner.api_key,
  });
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  const event_id: string = sent.body.event_id;
  await waitFor("the delivery", async () => receiver.succeeded(to.name).some((r) => r.id === event_id));
  return event_id;
}

/** Moves events to just past the window, as time would. */
function age(event_ids: string[]) {
  return sql`update events set created_at = now() - interval '30 days 1 second'
             where event_id = any(${event_ids}::text[])`.execute(db);
}

async function deliveredEventIds(): Promise<string[]> {
  const page = await call(api, "GET", `/v1/webhook-endpoints/${endpoint_id}/deliveries?limit=100`, {
    key: partner.api_key,
  });
  assert.equal(page.status, 200);
  return page.body.data.map((delivery: Json) => delivery.event_id);
}

async function eventCount(): Promise<number> {
  const result = await sql<{ n: string }>`select count(*) as n from events`.execute(db);
  return Number(result.rows[0]!.n);
}

test("an event past 30 days goes with its deliveries; a recent one and its deliveries stay", async () => {
  const old = await deliveredEvent();
  const recent = await deliveredEvent();
  await age([old]);
  assert.deepEqual(await purgeOldEvents(db), { events: 1, deliveries: 1, more: false });
  assert.deepEqual(await deliveredEventIds(), [recent]);
  const listed = await call(api, "GET", "/v1/events?type=webhook.test", { key: partner.api_key });
  assert.deepEqual(
    listed.body.data.map((event: Json) => event.id),
    [recent],
  );
  assert.equal((await call(api, "GET", `/v1/events/${recent}`, { key: partner.api_key })).status, 200);
  assert.deepEqual(await purgeOldEvents(db), { events: 0, deliveries: 0, more: false }, "nothing twice");
});

test("an old event another transaction holds is skipped, never waited for, and purged later", async () => {
  const held = await deliveredEvent();
  await age([held]);
  const holder = await holdInTransaction(db, (trx) =>
    sql`select 1 from events where event_id = ${held} for update`.execute(trx),
  );
  try {
    assert.deepEqual(await purgeOldEvents(db), { events: 0, deliveries: 0, more: false });
  } finally {
    await holder.release();
  }
  assert.deepEqual(await purgeOldEvents(db), { events: 1, deliveries: 1, more: false });
});

test("an endpoint's DELETE under way is waited for before any of its deliveries is touched", async () => {
  const other_id = await newEndpoint("purge-2");
  const event_id = await deliveredEvent({ endpoint_id: other_id, name: "purge-2" });
  await age([event_id]);
  const deliveriesOf = async () =>
    Number(
      (
        await sql<{
          n: string;
        }>`select count(*) as n from webhook_deliveries where event_id = ${event_id}`.execute(db)
      ).rows[0]!.n,
    );

  // The endpoint's row locked as its DELETE locks it first, before its cascade deletes deliveries.
  const deleting = await holdInTransaction(
    db,
    (trx) => sql`select 1 from webhook_endpoints where endpoint_id = ${other_id} for update`.execute(trx),
    (trx) => sql`delete from webhook_endpoints where endpoint_id = ${other_id}`.execute(trx),
  );
  let purged: Awaited<ReturnType<typeof purgeOldEvents>> | null = null;
  const purging = purgeOldEvents(db).then((result) => {
    purged = result;
  });
  // Reported by the `await purging` below, not as an unhandled rejection meanwhile.
  purging.catch(() => undefined);
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(purged, null, "the purge waits for the endpoint");
    assert.equal(await deliveriesOf(), 1, "and has not touched its delivery");
  } finally {
    await deleting.release();
    await purging;
  }
  assert.deepEqual(purged, { events: 1, deliveries: 0, more: false }, "the cascade deleted the delivery");
  assert.equal(await deliveriesOf(), 0);
});

test("bounded: batches of the oldest events, and `more` when a run stops at its limit", async () => {
  // Every event so far is past the window, and 25 more, older still, each with a failed delivery.
  const before = await eventCount();
  await sql`update events set created_at = now() - interval '31 days'`.execute(db);
  await sql`
    with made as (
      insert into events (event_id, partner_id, type, data, created_at, dispatched_at)
      select 'evt_bulk' || n, ${partner.partner_id}, 'webhook.test', '{}', now() - interval '40 days', now()
      from generate_series(1, 25) as n
      returning event_id)
    insert into webhook_deliveries
      (delivery_id, endpoint_id, partner_id, event_id, event_type, status, attempts)
    select 'dlv_' || event_id, ${endpoint_id}, ${partner.partner_id}, event_id, 'webhook.test', 'failed', 8
    from made`.execute(db);
  const total = before + 25;
  const bySeq = async () =>
    (await sql<{ event_id: string }>`select event_id from events order by seq`.execute(db)).rows.map(
      (row) => row.event_id,
    );
  const all = await bySeq();
  const first = await purgeOldEvents(db, { batch_size: 10, max_batches: 2 });
  assert.equal(first.events, 20);
  assert.equal(first.more, true);
  assert.deepEqual(await bySeq(), all.slice(20), "the lowest seqs went first");
  const rest = await purgeOldEvents(db, { batch_size: 10, max_batches: 10 });
  assert.equal(rest.events, total - 20);
  assert.equal(rest.more, false);
  assert.equal(await eventCount(), 0);
  assert.deepEqual(await deliveredEventIds(), []);
});

test("the worker runs the same purge as the hourly cron job", async () => {
  const old = await deliveredEvent();
  const recent = await deliveredEvent();
  await age([old]);
  await sql`select graphile_worker.add_job('purge_old_events', '{}'::json)`.execute(db);
  await waitFor("the purge job", async () => (await eventCount()) === 1);
  assert.deepEqual(await deliveredEventIds(), [recent]);
});

test("a delivery is still one per endpoint and event (migration 0017's unique index)", async () => {
  const event_id = await deliveredEvent();
  const again = sql`
    insert into webhook_deliveries (delivery_id, endpoint_id, partner_id, event_id, event_type, status)
    values ('dlv_again', ${endpoint_id}, ${partner.partner_id}, ${event_id}, 'webhook.test', 'failed')`;
  await assert.rejects(
    again.execute(db),
    (error: Error & { code?: string; constraint?: string }) =>
      error.code === "23505" && error.constraint === "webhook_deliveries_event_endpoint_key",
  );
});

test("an expiry warning's dedup key, its only guard, outlives the warning's 24 hours by far", () => {
  // purge-old-events.ts: the other once-only events are guarded by the eSIM's stored state.
  assert.ok(EXPIRING_NOTICE_MS * 2 <= EVENT_WINDOW_DAYS * 24 * 3_600_000);
});
