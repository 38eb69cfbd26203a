// The SDK's catalog methods for issue 34 (packages/sdk) against the real app over a listening
// port: destinations with counts and the partner's cheapest price, compatible devices with a
// search, and the package facts typed.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type CompatibleDevice,
  type Destination,
  EsimClient,
  type PackageNetwork,
} from "../packages/sdk/src/index.ts";
import { seedCompatibleDevices } from "../src/catalog/compatible-devices.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { bearer, request } from "./support/http.ts";

const database = await createTestDatabase({ catalog: true });
const api = await createTestApp({}, { database });
await seedCompatibleDevices(api.db);
const base = await api.app.listen({ port: 0, host: "127.0.0.1" });
const partner = await api.createPartner("SDK catalog");
const client = new EsimClient({ apiKey: partner.api_key, baseUrl: base });

test("catalog.destinations lists each destination with its count and the partner's cheapest price", async () => {
  await request(base, "PUT", `/admin/partners/${partner.partner_id}/pricing`, {
    headers: bearer(ADMIN_TOKEN),
    body: { discount_percent: 20, overrides: [] },
  });
  const { data } = await client.catalog.destinations();
  const fr: Destination | undefined = data.find((d) => d.destination_code === "FR");
  assert.deepEqual(fr, {
    destination_code: "FR",
    destination_name: "France",
    package_count: 14,
    from_price: { amount_minor: 280, currency: "USD" },
  });
  const packages = await client.catalog.packages("fr");
  assert.equal(packages.data.length, fr!.package_count);
  const networks: PackageNetwork[] = packages.data[0]!.networks;
  assert.equal(networks[0]!.name, "Orange");
});

test("catalog.compatibleDevices searches by brand or model and sends the limit as digits", async () => {
  const found = await client.catalog.compatibleDevices({ q: "Galaxy Z Fold" });
  const models = found.data.map((d: CompatibleDevice) => d.model);
  assert.ok(models.includes("Galaxy Z Fold5"), models.join(", "));
  assert.ok(found.data.every((d) => d.brand === "Samsung"));
  assert.match(found.updated_at, /^\d{4}-\d{2}-\d{2}T/);
  const two = await client.catalog.compatibleDevices({ q: "iphone", limit: 2 });
  assert.equal(two.data.length, 2);
  const all = await client.catalog.compatibleDevices();
  assert.ok(all.data.length >= 200);
});
