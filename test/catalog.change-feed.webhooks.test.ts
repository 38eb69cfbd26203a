// package.* webhook events end to end: a real service process announces catalog changes to a real
// HTTP receiver that verifies every delivery with the `standardwebhooks` package. The events are
// like every other type: an endpoint of all types gets them, one that lists package.updated gets only
// those; each event's data is the change GET /v1/catalog/changes lists, as that partner sees it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { defaultCatalog } from "../src/catalog/default-catalog.ts";
import { importCatalog } from "../src/catalog/import-catalog.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { startWebhookReceiver } from "./support/webhook-receiver.ts";
import { ADMIN_TOKEN, call, createWorld, type Json, newPartner, waitFor } from "./support/world.ts";

const world = await createWorld({
  env: {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    WEBHOOK_POLL_MS: "100",
    USAGE_SYNC_MAX_PER_SECOND: "0",
  },
});
const api = world.services[0]!.url;
const receiver = await startWebhookReceiver();
const PACKAGE_TYPES = ["package.added", "package.updated", "package.removed"];

async function subscribed(name: string, event_types: string[]) {
  const partner = await newPartner(api, 0, `Partner ${name}`);
  const created = await call(api, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: receiver.path(name), event_types },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.deepEqual(created.body.event_types, event_types);
  receiver.setSecrets(name, [created.body.secret]);
  return { ...partner, endpoint_id: created.body.endpoint_id as string };
}

/** The partner's feed after its start: the seed's `added` changes are skipped by the cursor. */
async function feedEnd(key: string): Promise<string> {
  let since = "";
  for (;;) {
    const got = await call(api, "GET", `/v1/catalog/changes?limit=100${since}`, { key });
    assert.equal(got.status, 200, JSON.stringify(got.body));
    since = `&since=${got.body.next_cursor}`;
    if (!got.body.has_more) return got.body.next_cursor;
  }
}

async function changesAfter(key: string, cursor: string): Promise<Json[]> {
  const got = await call(api, "GET", `/v1/catalog/changes?since=${cursor}`, { key });
  assert.equal(got.status, 200);
  return got.body.data;
}

test("catalog changes reach the endpoints that list package events, signed, with the feed's change as data", async () => {
  const all = await subscribed("catalog-all", PACKAGE_TYPES);
  const updates = await subscribed("catalog-updates", ["package.updated"]);
  await subscribed("all-types", []);
  const cursor = { all: await feedEnd(all.api_key), updates: await feedEnd(updates.api_key) };

  const rows = defaultCatalog()
    .packages.filter((pkg) => pkg.package_id !== "de-3gb-15d")
    .map((pkg) => (pkg.package_id === "de-1gb-7d" ? { ...pkg, wholesale_minor: 377 } : { ...pkg }));
  rows.push({
    ...rows.find((pkg) => pkg.package_id === "de-1gb-7d")!,
    package_id: "de-2gb-10d",
    external_package_id: "CARRIER-DE-2GB-10D",
    name: "Germany 2 GB 10 days",
    data_mb: 2048,
    validity_days: 10,
  });
  const report = await importCatalog(world.database.pool, rows, { currency: "USD", actor: CLI_ACTOR });
  assert.deepEqual([report.imported, report.updated, report.retired], [1, 1, 1]);
  // A price list is this partner's change only.
  const priced = await call(api, "PUT", `/admin/partners/${all.partner_id}/pricing`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { discount_percent: 0, overrides: [{ package_id: "fr-1gb-7d", amount_minor: 111 }] },
  });
  assert.equal(priced.status, 200, JSON.stringify(priced.body));

  const got = await waitFor("four package events", async () => {
    const received = receiver.succeeded("catalog-all");
    return received.length >= 4 ? received : null;
  });
  const feed = await changesAfter(all.api_key, cursor.all);
  assert.equal(feed.length, 4);
  for (const entry of got) {
    assert.deepEqual(entry.verified_with, [0], "signed with the endpoint's secret");
    assert.equal(entry.event.type, `package.${entry.event.data.kind}`);
  }
  // Each event's data is the feed's change, rendered for this partner.
  const byChange = new Map(got.map((entry) => [entry.event.data.change_id, entry.event.data]));
  assert.equal(byChange.size, 4, "each change once");
  for (const change of feed) assert.deepEqual(byChange.get(change.change_id), change);
  assert.deepEqual(feed.map((c) => `${c.kind} ${c.package_id}`).sort(), [
    "added de-2gb-10d",
    "removed de-3gb-15d",
    "updated de-1gb-7d",
    "updated fr-1gb-7d",
  ]);
  assert.equal(feed.find((c) => c.package_id === "fr-1gb-7d")!.package.wholesale_price.amount_minor, 111);
  // GET /v1/events shows them too, like every other event.
  const events = await call(api, "GET", "/v1/events?type=package.updated", { key: all.api_key });
  assert.equal(events.body.data.length, 2);

  // package.updated only, and not this partner's price list.
  const onlyUpdates = await waitFor("the update", async () => {
    const received = receiver.succeeded("catalog-updates");
    return received.length >= 1 ? received : null;
  });
  const updatesFeed = await changesAfter(updates.api_key, cursor.updates);
  assert.equal(updatesFeed.length, 3);
  await waitFor("every delivery", async () => {
    const deliveries = await call(api, "GET", `/v1/webhook-endpoints/${updates.endpoint_id}/deliveries`, {
      key: updates.api_key,
    });
    return deliveries.body.data.every((d: Json) => d.status === "succeeded");
  });
  assert.deepEqual(
    receiver.succeeded("catalog-updates").map((entry) => [entry.event.type, entry.event.data.package_id]),
    [["package.updated", "de-1gb-7d"]],
  );
  assert.deepEqual(onlyUpdates.length, 1);
  // An endpoint of all types (`event_types: []`, contract: empty = all) gets the catalog's changes
  // too, each once, but not another partner's price list.
  const everything = await waitFor("the all-types endpoint's three package events", async () => {
    const received = receiver
      .succeeded("all-types")
      .filter((entry) => entry.event.type.startsWith("package."));
    return received.length >= 3 ? received : null;
  });
  assert.deepEqual(everything.map((entry) => `${entry.event.type} ${entry.event.data.package_id}`).sort(), [
    "package.added de-2gb-10d",
    "package.removed de-3gb-15d",
    "package.updated de-1gb-7d",
  ]);
});

test("a process killed before a price list commits leaves neither the prices nor their change; the retry records it once", async () => {
  const partner = await subscribed("crash-prices", PACKAGE_TYPES);
  const cursor = await feedEnd(partner.api_key);
  const pricing = { discount_percent: 0, overrides: [{ package_id: "it-1gb-7d", amount_minor: 101 }] };
  const put = (url: string) =>
    call(url, "PUT", `/admin/partners/${partner.partner_id}/pricing`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: pricing,
    });
  const doomed = await world.startService({ CRASH_AT: "before_pricing_commit" });
  await assert.rejects(put(doomed.url), "the request dies with its process");
  await waitFor("the process to die", async () => doomed.process.signalCode === "SIGKILL");
  const read = await call(api, "GET", `/admin/partners/${partner.partner_id}/pricing`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  assert.deepEqual(read.body, { discount_percent: 0, overrides: [] }, "the prices were not changed");
  assert.deepEqual(await changesAfter(partner.api_key, cursor), [], "and no change was recorded");

  assert.equal((await put(api)).status, 200);
  const changes = await changesAfter(partner.api_key, cursor);
  assert.deepEqual(
    changes.map((c) => [c.kind, c.package_id, c.package.wholesale_price.amount_minor]),
    [["updated", "it-1gb-7d", 101]],
  );
  const delivered = await waitFor("its event", async () => {
    const received = receiver.succeeded("crash-prices");
    return received.length >= 1 ? received : null;
  });
  assert.deepEqual(
    delivered.map((entry) => entry.event.data),
    changes,
  );
});
