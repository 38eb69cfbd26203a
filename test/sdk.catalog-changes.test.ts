// The SDK's catalog change feed (packages/sdk: client.catalog.changes / changesPage) against the
// real service and PostgreSQL: every page after a position as one async sequence, the position to
// poll from afterwards, and a cursor the API did not return refused as a typed ApiError.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type CatalogChange, EsimClient, isApiError } from "../packages/sdk/src/index.ts";
import { ADMIN_TOKEN, call, createWorld, newPartner } from "./support/world.ts";

const world = await createWorld();
const api = world.services[0]!.url;

test("catalog.changes iterates every page from a position and leaves the cursor to poll from", async () => {
  const partner = await newPartner(api, 0);
  const client = new EsimClient({ apiKey: partner.api_key, baseUrl: api });
  const active = await world.database.pool.query<{ n: number }>(
    "select count(*)::int as n from packages where active",
  );

  const feed = client.catalog.changes({ limit: 100 });
  assert.equal(feed.cursor, undefined, "no position before a page is read");
  let pages = 0;
  for await (const page of feed.pages()) {
    assert.ok(page.data.length <= 100);
    pages++;
  }
  assert.ok(pages > 1);
  const start = feed.cursor;
  assert.equal(typeof start, "string");
  const all = await client.catalog.changes().toArray({ limit: 100_000 });
  assert.equal(all.length, active.rows[0]!.n);
  assert.ok(all.every((change: CatalogChange) => change.kind === "added" && change.package !== null));

  const priced = await call(api, "PUT", `/admin/partners/${partner.partner_id}/pricing`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { discount_percent: 0, overrides: [{ package_id: "fr-1gb-7d", amount_minor: 222 }] },
  });
  assert.equal(priced.status, 200);
  const next = client.catalog.changes({ since: start });
  const changes: CatalogChange[] = [];
  for await (const change of next) changes.push(change);
  assert.deepEqual(
    changes.map((c) => [c.kind, c.package_id, c.package?.wholesale_price.amount_minor]),
    [["updated", "fr-1gb-7d", 222]],
  );
  assert.notEqual(next.cursor, start);

  // Caught up: nothing new, and the same position.
  const caughtUp = client.catalog.changes({ since: next.cursor });
  assert.deepEqual(await caughtUp.toArray(), []);
  assert.equal(caughtUp.cursor, next.cursor);
  const one = await client.catalog.changesPage({ since: next.cursor!, limit: 1 });
  assert.deepEqual(one, { data: [], has_more: false, next_cursor: next.cursor });
});

test("a cursor the API did not return is an ApiError invalid_request", async () => {
  const partner = await newPartner(api, 0);
  const client = new EsimClient({ apiKey: partner.api_key, baseUrl: api });
  await assert.rejects(client.catalog.changesPage({ since: "not-a-cursor" }), (error: unknown) => {
    assert.ok(isApiError(error));
    assert.equal(error.status, 400);
    assert.equal(error.code, "invalid_request");
    return true;
  });
});
