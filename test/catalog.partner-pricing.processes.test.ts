// Prices per partner across processes: a price change made through one service process reaches the
// discovery cache of another at once (the change bumps the catalog version and notifies
// catalog_changed in its transaction), while a third partner's cached list prices stay as they were.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ADMIN_TOKEN, call, createWorld, type Json, newPartner, waitFor } from "./support/world.ts";

const world = await createWorld({ services: 2 });
const [api1, api2] = world.services.map((s) => s.url) as [string, string];

async function frPrice(url: string, key: string): Promise<number> {
  const answer = await call(url, "GET", "/v1/esim/destination/FR/packages", { key });
  assert.equal(answer.status, 200);
  return answer.body.data.find((p: Json) => p.package_id === "fr-1gb-7d").wholesale_price.amount_minor;
}

test("a pricing change through one process is what another process's discovery serves next", async () => {
  const priced = await newPartner(api1, 0, "Priced");
  const other = await newPartner(api1, 0, "Other");
  const list = await frPrice(api2, priced.api_key); // warms process 2's cache at list prices
  assert.equal(await frPrice(api2, other.api_key), list);
  const set = await call(api1, "PUT", `/admin/partners/${priced.partner_id}/pricing`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { discount_percent: 20, overrides: [] },
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  const started = Date.now();
  await waitFor("process 2 serves the new price", async () => (await frPrice(api2, priced.api_key)) !== list);
  assert.equal(await frPrice(api2, priced.api_key), Math.floor((list * 80 + 50) / 100));
  assert.equal(await frPrice(api2, other.api_key), list, "another partner keeps list prices");
  assert.ok(Date.now() - started < 5_000);
});
