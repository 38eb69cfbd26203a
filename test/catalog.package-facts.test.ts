// Networks, fair use and eKYC through the import (issue 34): a file states them, the import checks
// them row by row (a bad row is rejected with its reason and changes nothing), and partners read
// them in discovery over HTTP.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type CatalogImportRow, importCatalog } from "../src/catalog/import-catalog.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { request } from "./support/http.ts";

const database = await createTestDatabase({ catalog: true });
const api = await createTestApp({}, { database });
const base = await api.app.listen({ port: 0, host: "127.0.0.1" });
const partner = await api.createPartner("Facts");
const options = { currency: "USD", actor: CLI_ACTOR };

const ALPS: CatalogImportRow = {
  package_id: "alps-unlimited-7d",
  external_package_id: "CARRIER-ALPS-UNLIMITED-7D",
  name: "Alps Unlimited 7 days",
  destination_codes: ["AT", "CH"],
  data_mb: null,
  validity_days: 7,
  wholesale_minor: 2900,
  retail_minor: 3900,
  coverage: "regional",
  region: "Alps",
  networks: [
    { country_code: "CH", name: "Swisscom", technologies: ["5G", "4G"] },
    { country_code: "AT", name: "A1", technologies: ["4G", "5G"] },
    { country_code: "AT", name: "Magenta Telekom", technologies: "4G/5G" },
  ],
  fair_use: { daily_data_mb: 3072, throttled_kbps: 1024 },
  kyc_required: true,
};

async function discovery(code: string) {
  const answer = await request(base, "GET", `/v1/esim/destination/${code}/packages`, {
    key: partner.api_key,
  });
  assert.equal(answer.status, 200);
  return answer.body.data as Array<Record<string, any>>;
}

async function version(): Promise<number> {
  return (await database.pool.query("select version from catalog_version")).rows[0].version;
}

test("a file's networks, fair use and eKYC reach partners, networks by country in the file's order", async () => {
  const report = await importCatalog(api.ctx.pool, [ALPS], options);
  assert.equal(report.imported, 1);
  assert.equal(report.rejected_total, 0);
  const alps = (await discovery("CH")).find((p) => p.package_id === "alps-unlimited-7d")!;
  assert.deepEqual(alps.networks, [
    { country_code: "AT", name: "A1", technologies: ["4G", "5G"] },
    { country_code: "AT", name: "Magenta Telekom", technologies: ["4G", "5G"] },
    { country_code: "CH", name: "Swisscom", technologies: ["4G", "5G"] },
  ]);
  assert.deepEqual(alps.fair_use, { daily_data_mb: 3072, throttled_kbps: 1024 });
  assert.equal(alps.kyc_required, true);

  const again = await importCatalog(api.ctx.pool, [ALPS], options);
  assert.equal(again.unchanged, 1, "the same facts read back from jsonb are the same");
  assert.equal(again.version, null);

  const changed = await importCatalog(
    api.ctx.pool,
    [{ ...ALPS, networks: "AT:A1:4G/5G; CH:Swisscom:4G/5G; CH:Sunrise:5G", kyc_required: "no" }],
    options,
  );
  assert.equal(changed.updated, 1, "a network more is a change");
  const after = (await discovery("AT")).find((p) => p.package_id === "alps-unlimited-7d")!;
  assert.deepEqual(
    after.networks.map((n: Record<string, string>) => n.name),
    ["A1", "Swisscom", "Sunrise"],
  );
  assert.equal(after.kyc_required, false);
});

test("bad facts are rejected row by row with a clear reason, and those packages keep what they had", async () => {
  const before = (await discovery("CH")).find((p) => p.package_id === "alps-unlimited-7d")!;
  const metered = {
    ...ALPS,
    package_id: "alps-1gb-7d",
    external_package_id: "CARRIER-ALPS-1GB-7D",
    data_mb: 1024,
  };
  const bad: Array<[CatalogImportRow, RegExp]> = [
    [{ ...ALPS, networks: "AT:A1:4G/5G" }, /networks: every covered country needs at least one; none for CH/],
    [
      { ...ALPS, networks: "AT:A1:4G/6G; CH:Swisscom:5G" },
      /AT:A1 \(technologies must be some of 2G\/3G\/4G\/5G\)/,
    ],
    [
      { ...ALPS, networks: "AT:A1:4G; CH:Swisscom:5G; DE:Telekom:5G" },
      /DE:Telekom \(the package does not cover DE\)/,
    ],
    [{ ...ALPS, networks: "AT:A1:4G; at:a1:5G; CH:Swisscom:5G" }, /AT:a1 \(named twice\)/],
    [
      { ...metered, fair_use: { daily_data_mb: 1024, throttled_kbps: 512 } },
      /fair_use is only for unlimited packages/,
    ],
    [
      { ...ALPS, fair_use: null, fair_use_daily_data_mb: "1024" },
      /fair_use needs both daily_data_mb and throttled_kbps/,
    ],
    [
      { ...ALPS, fair_use: { daily_data_mb: 0, throttled_kbps: 512 } },
      /fair_use daily_data_mb must be a whole number from 1/,
    ],
    [{ ...ALPS, kyc_required: "maybe" }, /kyc_required must be true or false/],
  ];
  for (const [row, reason] of bad) {
    const version_before = await version();
    const report = await importCatalog(api.ctx.pool, [row], options);
    assert.equal(report.rejected_total, 1);
    assert.match(report.rejected[0]!.reason, reason);
    assert.equal(report.version, null, "a file with no valid row changes nothing");
    assert.equal(await version(), version_before);
    const now = (await discovery("CH")).find((p) => p.package_id === "alps-unlimited-7d");
    assert.deepEqual(now, before, report.rejected[0]!.reason);
  }
  assert.equal(
    (await discovery("CH")).some((p) => p.package_id === "alps-1gb-7d"),
    false,
    "the metered package with a fair use was never written",
  );
});
