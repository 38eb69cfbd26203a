// GET /v1/esim/destinations (issue 34): every destination on sale with the number of rows its
// packages endpoint returns and the cheapest of them at the partner's prices; fresh after a
// pricing change and an import, like discovery. Over a listening port.
import assert from "node:assert/strict";
import { test } from "node:test";
import { importCatalog } from "../src/catalog/import-catalog.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { bearer, type Json, request } from "./support/http.ts";

const database = await createTestDatabase({ catalog: true });
const api = await createTestApp({}, { database });
const base = await api.app.listen({ port: 0, host: "127.0.0.1" });
const admin = bearer(ADMIN_TOKEN);

async function destinations(key: string, headers: Record<string, string> = {}) {
  return request(base, "GET", "/v1/esim/destinations", { key, headers });
}

async function packagesOf(key: string, code: string): Promise<Json[]> {
  const answer = await request(base, "GET", `/v1/esim/destination/${code}/packages`, { key });
  assert.equal(answer.status, 200, code);
  return answer.body.data;
}

/** Each row against its destination's packages endpoint, as this partner sees it. */
async function assertMatchesDiscovery(key: string, rows: Json[]): Promise<void> {
  for (const row of rows) {
    const packages = await packagesOf(key, row.destination_code);
    assert.equal(row.package_count, packages.length, row.destination_code);
    const cheapest = Math.min(...packages.map((p) => p.wholesale_price.amount_minor));
    assert.deepEqual(row.from_price, { amount_minor: cheapest, currency: "USD" }, row.destination_code);
  }
}

test("every destination with a package is listed with its packages endpoint's count and cheapest price", async () => {
  const partner = await api.createPartner("Lister");
  const answer = await destinations(partner.api_key);
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get("cache-control"), "private, max-age=60");
  const rows: Json[] = answer.body.data;
  const codes = rows.map((r) => r.destination_code);
  assert.deepEqual(codes, [...codes].sort(), "by destination_code");
  assert.ok(codes.includes("FR") && codes.includes("JP"));
  assert.ok(!codes.includes("AQ"), "Antarctica has no package");
  const fr = rows.find((r) => r.destination_code === "FR")!;
  // 6 France, 4 Europe, 4 Global packages; the cheapest is France 1 GB at 3.50.
  assert.deepEqual(fr, {
    destination_code: "FR",
    destination_name: "France",
    package_count: 14,
    from_price: { amount_minor: 350, currency: "USD" },
  });
  await assertMatchesDiscovery(partner.api_key, rows);
});

test("from_price follows the partner's price list, for that partner only, and 304s while unchanged", async () => {
  const priced = await api.createPartner("Priced");
  const other = await api.createPartner("Other");
  const before = await destinations(priced.api_key);
  const etag = String(before.headers.get("etag"));
  const again = await destinations(priced.api_key, { "if-none-match": etag });
  assert.equal(again.status, 304);

  const set = await request(base, "PUT", `/admin/partners/${priced.partner_id}/pricing`, {
    headers: admin,
    body: { discount_percent: 10, overrides: [{ package_id: "europe-1gb-7d", amount_minor: 120 }] },
  });
  assert.equal(set.status, 200);

  const after = await destinations(priced.api_key);
  assert.equal(after.status, 200);
  assert.notEqual(after.headers.get("etag"), etag, "a pricing change is a new answer");
  const byCode = new Map<string, Json>(after.body.data.map((r: Json) => [r.destination_code, r]));
  // The override makes the Europe package the cheapest in every Europe country: 1.20.
  assert.deepEqual(byCode.get("DE")!.from_price, { amount_minor: 120, currency: "USD" });
  // Elsewhere 10 % off the cheapest list price: Japan's 1 GB (4.20 list) is 3.78.
  assert.deepEqual(byCode.get("JP")!.from_price, { amount_minor: 378, currency: "USD" });
  await assertMatchesDiscovery(
    priced.api_key,
    ["DE", "JP", "US"].map((code) => byCode.get(code)!),
  );

  const unchanged = await destinations(other.api_key);
  assert.deepEqual(unchanged.body, before.body, "another partner keeps list prices");
});

test("an import changes the list at once: retired packages leave it, destinations without any are gone", async () => {
  const partner = await api.createPartner("After import");
  const before = (await destinations(partner.api_key)).body.data as Json[];
  const report = await importCatalog(api.ctx.pool, "test/fixtures/catalog-sample.csv", {
    currency: "USD",
    actor: CLI_ACTOR,
  });
  assert.ok(report.retired > 0);
  const after = (await destinations(partner.api_key)).body.data as Json[];
  assert.ok(after.length < before.length);
  const codes = after.map((r) => r.destination_code);
  assert.ok(codes.includes("LU") && !codes.includes("JP"), "Benelux is new; Japan's packages are retired");
  // France: fr-1gb-7d now 3.00 (the file's price), with fr-3gb-15d, fr-unlimited-7d and Europe 5 GB.
  assert.deepEqual(
    after.find((r) => r.destination_code === "FR"),
    {
      destination_code: "FR",
      destination_name: "France",
      package_count: 4,
      from_price: { amount_minor: 300, currency: "USD" },
    },
  );
  await assertMatchesDiscovery(partner.api_key, after);
});

test("the destinations list needs a partner's key", async () => {
  const answer = await request(base, "GET", "/v1/esim/destinations");
  assert.equal(answer.status, 401);
  assert.equal(answer.body.code, "unauthorized");
});
