// The compatible devices list (issue 34): shipped with the service and seeded into the database,
// searchable over HTTP by brand or model, replaced whole by the operator's CLI import (every row
// valid, or nothing changes), never overwritten by a later start.
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { seedCompatibleDevices } from "../src/catalog/compatible-devices.ts";
import { SHIPPED_DEVICES, SHIPPED_DEVICES_UPDATED_AT } from "../src/catalog/shipped-devices.ts";
import { createTestApp } from "./support/app.ts";
import { runCli } from "./support/cli.ts";
import { createTestDatabase } from "./support/db.ts";
import { type Json, request } from "./support/http.ts";

const database = await createTestDatabase();
const api = await createTestApp({}, { database });
const base = await api.app.listen({ port: 0, host: "127.0.0.1" });
const partner = await api.createPartner("Device lookup");
const env = { DATABASE_URL: database.url, APP_ENV: "sandbox", CURRENCY: "USD" };
const dir = await mkdtemp(path.join(os.tmpdir(), "devices-"));

async function devices(query = ""): Promise<{ status: number; body: Json }> {
  const answer = await request(base, "GET", `/v1/compatible-devices${query}`, { key: partner.api_key });
  return { status: answer.status, body: answer.body };
}

function models(body: Json): string[] {
  return body.data.map((d: Json) => d.model);
}

test("the shipped list is seeded once and served whole, by brand and model, with its date", async () => {
  assert.equal(await seedCompatibleDevices(api.db), "seeded");
  assert.equal(await seedCompatibleDevices(api.db), "kept", "a second start changes nothing");
  const all = await devices();
  assert.equal(all.status, 200);
  assert.equal(all.body.data.length, SHIPPED_DEVICES.length);
  assert.ok(SHIPPED_DEVICES.length >= 200, `${SHIPPED_DEVICES.length} shipped devices`);
  assert.equal(all.body.updated_at, SHIPPED_DEVICES_UPDATED_AT);
  const key = (d: Json) => `${d.brand.toLowerCase()}\u0000${d.model.toLowerCase()}`;
  const sorted = [...SHIPPED_DEVICES].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  assert.deepEqual(all.body.data, sorted, "every shipped device, by brand then model");
  assert.deepEqual(all.body.data[0], {
    brand: "Apple",
    model: "Apple Watch SE (2nd generation) (GPS + Cellular)",
    os: "watchOS",
  });
});

test("q finds devices by brand or model in any case, wildcards are plain characters, limit caps the rows", async () => {
  assert.deepEqual(models((await devices("?q=IPHONE%2015")).body), [
    "iPhone 15",
    "iPhone 15 Plus",
    "iPhone 15 Pro",
    "iPhone 15 Pro Max",
  ]);
  const pixel8 = (await devices("?q=google%20pixel%208")).body;
  assert.deepEqual(models(pixel8), ["Pixel 8", "Pixel 8 Pro", "Pixel 8a"]);
  const samsung = (await devices("?q=samsung")).body.data as Json[];
  assert.ok(samsung.length > 40 && samsung.every((d) => d.brand === "Samsung"));
  assert.deepEqual((await devices("?q=%25")).body.data, [], "% is not a wildcard");
  assert.deepEqual((await devices("?q=nokia%20lumia")).body.data, []);
  assert.equal((await devices("?q=galaxy&limit=3")).body.data.length, 3);
});

test("a query too long, an empty one or a limit out of range is a 400 invalid_request; no key is a 401", async () => {
  for (const query of [`?q=${"x".repeat(65)}`, "?q=", "?limit=0", "?limit=5001", "?other=1"]) {
    const answer = await devices(query);
    assert.equal(answer.status, 400, query);
    assert.equal(answer.body.code, "invalid_request", query);
  }
  const anonymous = await request(base, "GET", "/v1/compatible-devices");
  assert.equal(anonymous.status, 401);
});

test("a bad devices file is refused with every problem by row, and the list stays as it was", async () => {
  const before = await devices();
  const file = path.join(dir, "bad.csv");
  await writeFile(
    file,
    "brand,model,os\nAcme,Phone 1,Android\nacme,PHONE 1,Android\nAcme,,Android\nAcme,Phone 2,\n",
  );
  const run = await runCli(["devices", "import", file, "--json"], env);
  assert.equal(run.code, 1, run.stderr);
  const error = JSON.parse(run.stderr).error;
  assert.equal(error.code, "invalid_devices_file");
  assert.match(error.message, /3 problems, nothing imported/);
  assert.match(error.message, /row 2: repeats row 1/);
  assert.match(error.message, /row 3: model is missing/);
  assert.match(error.message, /row 4: os is missing/);
  const header = path.join(dir, "header.csv");
  await writeFile(header, "make,model,os\nAcme,Phone,Android\n");
  const wrongHeader = await runCli(["devices", "import", header, "--json"], env);
  assert.match(JSON.parse(wrongHeader.stderr).error.message, /header brand,model,os/);
  const empty = path.join(dir, "empty.json");
  await writeFile(empty, "[]");
  const none = await runCli(["devices", "import", empty, "--json"], env);
  assert.match(JSON.parse(none.stderr).error.message, /lists no device/);
  assert.deepEqual(await devices(), before);
});

test("an operator's import replaces the list whole, is audited, and no later start overwrites it", async () => {
  const file = path.join(dir, "devices.json");
  const list = [
    { brand: "Acme", model: "Roam 5G", os: "Android" },
    { brand: "Apple", model: "iPhone 17 Pro", os: "iOS" },
  ];
  await writeFile(file, JSON.stringify(list));
  const run = await runCli(["devices", "import", file, "--json"], env);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout).device_count, 2);
  const after = await devices();
  assert.deepEqual(after.body.data, list);
  assert.notEqual(after.body.updated_at, SHIPPED_DEVICES_UPDATED_AT);
  const audit = await database.pool.query(
    "select details from audit_log where action = 'compatible_devices.imported'",
  );
  assert.deepEqual(
    audit.rows.map((r) => r.details),
    [{ device_count: 2 }],
  );
  assert.equal(await seedCompatibleDevices(api.db), "kept", "a start keeps the operator's list");
  assert.deepEqual((await devices()).body, after.body);

  const csv = path.join(dir, "devices.csv");
  await writeFile(csv, "brand,model,os\nGoogle,Pixel 10,Android\n");
  const again = await runCli(["devices", "import", csv], env);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual((await devices()).body.data, [{ brand: "Google", model: "Pixel 10", os: "Android" }]);
});

test("a new release's shipped list refreshes an older shipped list", async () => {
  const other = await createTestDatabase();
  const app = await createTestApp({}, { database: other });
  await seedCompatibleDevices(app.db);
  await other.pool.query("update compatible_devices_list set updated_at = '2025-01-01T00:00:00Z'");
  await other.pool.query("delete from compatible_devices where brand = 'Apple'");
  assert.equal(await seedCompatibleDevices(app.db), "refreshed");
  const count = await other.pool.query<{ n: number }>("select count(*)::int as n from compatible_devices");
  assert.equal(count.rows[0]!.n, SHIPPED_DEVICES.length);
});

test("an import of the most devices a list holds is answered whole without a limit; limit narrows it", async () => {
  const file = path.join(dir, "many-devices.json");
  const list = Array.from({ length: 5_000 }, (_, i) => ({
    brand: "Acme",
    model: `Roam ${String(i).padStart(4, "0")}`,
    os: "Android",
  }));
  await writeFile(file, JSON.stringify(list));
  const run = await runCli(["devices", "import", file, "--json"], env);
  assert.equal(run.code, 0, run.stderr);
  const whole = await devices();
  assert.equal(whole.status, 200);
  assert.deepEqual(whole.body.data, list);
  assert.deepEqual(models((await devices("?limit=2")).body), ["Roam 0000", "Roam 0001"]);
});
