// A database pool whose connections are all busy is a temporary condition of this process, not a
// bug: the partner gets 503 service_unavailable with Retry-After, not 500 (issue 10).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { createPool } from "../src/db/pool.ts";
import { createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";

const database = await createTestDatabase({ catalog: true });
const tiny = createPool(database.url, 2, "esim-tiny-pool");
after(() => tiny.end());
const app = await createTestApp({}, { database: { url: database.url, pool: tiny } });
const partner = await app.createPartner("Acme Travel", 10_000);

function reserve() {
  return app.app.inject({
    method: "POST",
    url: "/v1/orders/cart",
    headers: app.auth(partner.api_key),
    payload: { package_id: "fr-1gb-7d" },
  });
}

test("an exhausted database pool answers 503 service_unavailable with Retry-After, not 500", async () => {
  const held = [await tiny.connect(), await tiny.connect()];
  let busy: Awaited<ReturnType<typeof reserve>>;
  try {
    busy = await reserve();
  } finally {
    for (const client of held) client.release();
  }
  assert.equal(busy.statusCode, 503, busy.body);
  assert.equal(busy.json().code, "service_unavailable");
  assert.match(busy.headers["content-type"] as string, /^application\/problem\+json/);
  assert.ok(Number(busy.headers["retry-after"]) >= 1, "Retry-After tells the partner when to come back");
  assert.doesNotMatch(busy.body, /timeout exceeded/, "no driver internals reach the partner");

  const freed = await reserve();
  assert.equal(freed.statusCode, 201, freed.body);
});
