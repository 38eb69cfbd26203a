import assert from "node:assert/strict";
import { test } from "node:test";
import { catalogChanged, VERSION_RECHECK_MS } from "../src/catalog/catalog-cache.ts";
import { importCatalog } from "../src/catalog/import-catalog.ts";
import { ifNoneMatchMatches } from "../src/catalog/list-destination-packages.route.ts";
import {
  destinationPackagesBody,
  listDestinationPackages,
  partnerDestinationAnswer,
  rememberedAnswer,
} from "../src/catalog/list-destination-packages.ts";
import { LIST_PRICES } from "../src/catalog/price-list.ts";
import { seedDefaultCatalogIfEmpty } from "../src/catalog/seed-catalog.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { ApiError } from "../src/shared/errors.ts";
import { createTestDatabase } from "./support/db.ts";

async function seeded() {
  const database = await createTestDatabase();
  await seedDefaultCatalogIfEmpty(database.pool, "USD");
  return database;
}

function rejectsWith(code: string) {
  return (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.code, code);
    return true;
  };
}

test("a destination's packages carry Money objects with integer minor amounts", async () => {
  const { pool } = await seeded();
  const fr = await listDestinationPackages(pool, "FR");
  assert.equal(fr.destination_code, "FR");
  assert.equal(fr.destination_name, "France");
  const first = fr.data[0]!;
  assert.deepEqual(first, {
    package_id: "fr-1gb-7d",
    external_package_id: "CARRIER-FR-1GB-7D",
    name: "France 1 GB 7 days",
    destination_codes: ["FR"],
    data_mb: 1024,
    validity_days: 7,
    wholesale_price: { amount_minor: 350, currency: "USD" },
    list_price: { amount_minor: 350, currency: "USD" },
    retail_price: { amount_minor: 490, currency: "USD" },
    coverage: "country",
    region: null,
    networks: [
      { country_code: "FR", name: "Orange", technologies: ["4G", "5G"] },
      { country_code: "FR", name: "SFR", technologies: ["4G", "5G"] },
      { country_code: "FR", name: "Bouygues Telecom", technologies: ["4G", "5G"] },
      { country_code: "FR", name: "Free Mobile", technologies: ["4G", "5G"] },
    ],
    fair_use: null,
    kyc_required: false,
  });
  const unlimited = fr.data.find((pkg) => pkg.package_id === "fr-unlimited-7d")!;
  assert.deepEqual(unlimited.fair_use, { daily_data_mb: 2048, throttled_kbps: 512 });
  const europe = fr.data.find((pkg) => pkg.package_id === "europe-5gb-30d")!;
  assert.deepEqual(
    [...new Set(europe.networks.map((n) => n.country_code))],
    europe.destination_codes,
    "a regional package lists its networks per country it covers",
  );
  assert.ok(europe.networks.some((n) => n.country_code === "DE" && n.name === "Telekom"));
  const china = await listDestinationPackages(pool, "CN");
  assert.equal(china.data.find((pkg) => pkg.package_id === "cn-1gb-7d")?.kyc_required, true);
  for (const pkg of fr.data) {
    assert.ok(Number.isInteger(pkg.wholesale_price.amount_minor));
    assert.ok(Number.isInteger(pkg.retail_price.amount_minor));
  }
});

test("packages come country first by data size with unlimited last, then regional, then global", async () => {
  const { pool } = await seeded();
  const fr = await listDestinationPackages(pool, "FR");
  assert.deepEqual(
    fr.data.map((p) => p.package_id),
    [
      "fr-1gb-7d",
      "fr-3gb-15d",
      "fr-5gb-30d",
      "fr-10gb-30d",
      "fr-20gb-30d",
      "fr-unlimited-7d",
      "europe-1gb-7d",
      "europe-5gb-30d",
      "europe-10gb-30d",
      "europe-20gb-30d",
      "global-1gb-7d",
      "global-3gb-15d",
      "global-5gb-30d",
      "global-10gb-30d",
    ],
  );
  const europe = fr.data.find((p) => p.package_id === "europe-5gb-30d")!;
  assert.ok(europe.destination_codes.includes("DE") && europe.destination_codes.length > 30);
  const jp = await listDestinationPackages(pool, "JP");
  assert.ok(jp.data.some((p) => p.package_id === "asia-5gb-30d"));
  assert.ok(!jp.data.some((p) => p.region === "Europe"));
});

test("codes are case-insensitive; malformed ones are invalid_request, unknown ones destination_not_found", async () => {
  const { pool } = await seeded();
  assert.equal((await listDestinationPackages(pool, "fr")).destination_code, "FR");
  for (const malformed of ["F1", "FRA", "", "f", "ÉÉ"]) {
    await assert.rejects(listDestinationPackages(pool, malformed), rejectsWith("invalid_request"));
    await assert.rejects(destinationPackagesBody(pool, malformed), rejectsWith("invalid_request"));
  }
  await assert.rejects(listDestinationPackages(pool, "AA"), rejectsWith("destination_not_found"));
  await assert.rejects(destinationPackagesBody(pool, "aa"), rejectsWith("destination_not_found"));
});

test("retired packages are not offered", async () => {
  const { pool } = await seeded();
  await importCatalog(pool, "test/fixtures/catalog-sample.csv", { currency: "USD", actor: CLI_ACTOR });
  const fr = await listDestinationPackages(pool, "FR");
  assert.deepEqual(
    fr.data.map((p) => p.package_id),
    ["fr-1gb-7d", "fr-3gb-15d", "fr-unlimited-7d", "europe-5gb-30d"],
  );
});

test("the cached body is the use case's answer serialized, with a strong ETag", async () => {
  const { pool } = await seeded();
  const cached = await destinationPackagesBody(pool, "de");
  assert.deepEqual(JSON.parse(cached.body.toString()), await listDestinationPackages(pool, "DE"));
  assert.match(cached.etag, /^"[A-Za-z0-9_-]+"$/);
  assert.equal(await destinationPackagesBody(pool, "DE"), cached, "the second call is served from memory");
});

test("an import in this process replaces the cached body and its ETag at once", async () => {
  const { pool } = await seeded();
  const before = await destinationPackagesBody(pool, "FR");
  const untouched = await destinationPackagesBody(pool, "JP");
  await importCatalog(pool, "test/fixtures/catalog-sample.csv", { currency: "USD", actor: CLI_ACTOR });
  const after = await destinationPackagesBody(pool, "FR");
  assert.notEqual(after.etag, before.etag);
  assert.equal(JSON.parse(after.body.toString()).data[0].wholesale_price.amount_minor, 300);
  const jp = await destinationPackagesBody(pool, "JP");
  assert.notEqual(jp.etag, untouched.etag, "JP lost its Global packages");
});

test("a change made by another process is seen on its notification, or within the recheck interval", async () => {
  const { pool } = await seeded();
  const before = await destinationPackagesBody(pool, "FR");
  // Another process's import, as this process sees it: rows and version change, no local call.
  const bump = async (name: string) => {
    await pool.query("update packages set name = $1 where package_id = 'fr-1gb-7d'", [name]);
    const result = await pool.query<{ version: number }>(
      "update catalog_version set version = version + 1 returning version",
    );
    return result.rows[0]!.version;
  };
  const version = await bump("France Starter");
  assert.equal(await destinationPackagesBody(pool, "FR"), before, "no notification yet: still cached");
  catalogChanged(pool, String(version));
  const notified = await destinationPackagesBody(pool, "FR");
  assert.equal(JSON.parse(notified.body.toString()).data[0].name, "France Starter");

  await bump("France Basic");
  await new Promise((resolve) => setTimeout(resolve, VERSION_RECHECK_MS + 100));
  const missed = await destinationPackagesBody(pool, "FR");
  assert.equal(
    JSON.parse(missed.body.toString()).data[0].name,
    "France Basic",
    "a missed notification is not fatal",
  );
});

test("a partner's remembered answer is its price list's cached body, dropped by a catalog change and after the recheck interval", async () => {
  const { pool } = await seeded();
  const listPrices = async () => LIST_PRICES;
  assert.equal(rememberedAnswer(pool, "ptr_a", "fr"), undefined, "nothing served yet");
  const first = await partnerDestinationAnswer(pool, "ptr_a", "fr", listPrices);
  assert.equal(rememberedAnswer(pool, "ptr_a", "fr"), undefined, "no version was trusted when it started");
  const served = await partnerDestinationAnswer(pool, "ptr_a", "fr", listPrices);
  assert.equal(served, first);
  assert.equal(served, await destinationPackagesBody(pool, "FR"), "the catalog cache's own body");
  assert.equal(rememberedAnswer(pool, "ptr_a", "fr"), served);
  assert.equal(rememberedAnswer(pool, "ptr_a", "FR"), undefined, "by the code as requested");
  assert.equal(rememberedAnswer(pool, "ptr_b", "fr"), undefined, "per partner");

  const { rows } = await pool.query<{ version: number }>(
    "update catalog_version set version = version + 1 returning version",
  );
  catalogChanged(pool, String(rows[0]!.version));
  assert.equal(rememberedAnswer(pool, "ptr_a", "fr"), undefined, "a new catalog version drops it");
  const again = await partnerDestinationAnswer(pool, "ptr_a", "fr", listPrices);
  assert.equal(rememberedAnswer(pool, "ptr_a", "fr"), again);

  await new Promise((resolve) => setTimeout(resolve, VERSION_RECHECK_MS + 100));
  assert.equal(rememberedAnswer(pool, "ptr_a", "fr"), undefined, "not trusted past the recheck interval");
});

test("many concurrent requests on a cold cache share one load per destination", async () => {
  const { pool } = await seeded();
  let queries = 0;
  const query = pool.query.bind(pool);
  pool.query = ((...args: Parameters<typeof query>) => {
    queries += 1;
    return query(...args);
  }) as typeof pool.query;
  try {
    const bodies = await Promise.all(Array.from({ length: 50 }, () => destinationPackagesBody(pool, "IT")));
    assert.ok(bodies.every((b) => b === bodies[0]));
    assert.ok(queries <= 2, `${queries} queries: one version read and one load`);
  } finally {
    pool.query = query;
  }
});

test("If-None-Match matches the current ETag weakly, in a list, or as *", () => {
  const etag = '"abc"';
  assert.equal(ifNoneMatchMatches(undefined, etag), false);
  assert.equal(ifNoneMatchMatches('"abc"', etag), true);
  assert.equal(ifNoneMatchMatches('W/"abc"', etag), true);
  assert.equal(ifNoneMatchMatches('"x", W/"abc" ,"y"', etag), true);
  assert.equal(ifNoneMatchMatches(" * ", etag), true);
  assert.equal(ifNoneMatchMatches('"abcd"', etag), false);
  assert.equal(ifNoneMatchMatches("abc", etag), false, "an unquoted tag is not a tag");
  assert.equal(ifNoneMatchMatches('"", "ab"', etag), false);
});
