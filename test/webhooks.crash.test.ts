// A service SIGKILLed in the middle of webhook deliveries loses none: the claims it held run out and
// the next process sends them again, so the receiver sees every event id answered 2xx at least once
// (at least once; the event id is the receiver's idempotency key).
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { startWebhookReceiver } from "./support/webhook-receiver.ts";
import { call, createWorld, newCart, newPartner, submit, waitFor } from "./support/world.ts";

const world = await createWorld({
  env: {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 5).toString("base64"),
    WEBHOOK_TIMEOUT_MS: "1500",
    WEBHOOK_POLL_MS: "100",
    USAGE_SYNC_MAX_PER_SECOND: "0",
  },
});
const db = createKysely<Database>(world.database.pool);
const receiver = await startWebhookReceiver();

test("a SIGKILL mid-delivery loses no event: each one is answered 2xx at least once, with a valid signature", async () => {
  const first = world.services[0]!;
  const partner = await newPartner(first.url, 1_000_00);
  // Until the kill every answer takes 3 s, so the kill below finds calls in flight however loaded
  // the machine is (the test's own event loop may lag hundreds of milliseconds); after it, 400 ms.
  let before_kill = true;
  const created = await call(first.url, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: receiver.path("crash", () => ({ status: 200, delay_ms: before_kill ? 3_000 : 400 })) },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  receiver.setSecrets("crash", [created.body.secret]);
  const endpoint_id: string = created.body.endpoint_id;
  // Events both ways: purchases (fanned out by the loop) and test events (delivered by the route).
  for (let i = 0; i < 3; i++) {
    const cart = await newCart(first.url, partner.api_key);
    assert.equal((await submit(first.url, partner.api_key, cart.cart_key)).status, 200);
  }
  for (let i = 0; i < 12; i++) {
    await call(first.url, "POST", `/v1/webhook-endpoints/${endpoint_id}/test`, { key: partner.api_key });
  }
  // Kill while a call is in flight (each answer takes 3 s until then).
  await waitFor(
    "a call in flight",
    async () =>
      receiver.received("crash").length >= 2 &&
      receiver.received("crash").some((entry) => entry.answered === null),
    10_000,
  );
  await first.kill();
  const unanswered = receiver.received("crash").filter((entry) => entry.answered === null).length;
  before_kill = false;
  const second = await world.startService();

  const events = await sql<{ event_id: string }>`
    select event_id from events where partner_id = ${partner.partner_id}
      and created_at >= (select created_at from webhook_endpoints where endpoint_id = ${endpoint_id})`.execute(
    db,
  );
  assert.ok(events.rows.length >= 15, `${events.rows.length} events`);
  await waitFor(
    "every event answered 2xx once or more",
    async () => {
      const ok = new Set(receiver.succeeded("crash").map((entry) => entry.id));
      return events.rows.every((row) => ok.has(row.event_id));
    },
    30_000,
  );
  for (const entry of receiver.received("crash")) assert.deepEqual(entry.verified_with, [0]);
  assert.ok(unanswered >= 1, "the kill cut at least one call short");
  const log = await call(second.url, "GET", `/v1/webhook-endpoints/${endpoint_id}/deliveries?limit=100`, {
    key: partner.api_key,
  });
  await waitFor("every delivery recorded succeeded", async () => {
    const page = await call(second.url, "GET", `/v1/webhook-endpoints/${endpoint_id}/deliveries?limit=100`, {
      key: partner.api_key,
    });
    return page.body.data.every((delivery: { status: string }) => delivery.status === "succeeded");
  });
  assert.equal(log.body.data.length, events.rows.length, "one delivery per event, whatever the retries");
});

test("two processes share the deliveries: without a crash each event is sent exactly once", async () => {
  // The first test left one live service; a second one joins it on the same database.
  await world.startService();
  const live = world.services.filter(
    (service) => service.process.exitCode === null && !service.process.killed,
  );
  assert.ok(live.length >= 2, `${live.length} live services`);
  const partner = await newPartner(live[0]!.url, 0);
  const created = await call(live[0]!.url, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: receiver.path("shared", () => ({ status: 200, delay_ms: 50 })) },
  });
  receiver.setSecrets("shared", [created.body.secret]);
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    const url = live[i % live.length]!.url;
    const tested = await call(url, "POST", `/v1/webhook-endpoints/${created.body.endpoint_id}/test`, {
      key: partner.api_key,
    });
    ids.push(tested.body.event_id);
  }
  await waitFor(
    "every event delivered",
    async () => receiver.succeeded("shared").length >= ids.length,
    30_000,
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  const received = receiver.received("shared").map((entry) => entry.id);
  assert.deepEqual([...received].sort(), [...ids].sort(), "each event id once, none twice");
});
