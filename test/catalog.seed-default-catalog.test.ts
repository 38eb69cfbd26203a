import assert from "node:assert/strict";
import { test } from "node:test";
import { ASIA_CODES, defaultCatalog, EUROPE_CODES } from "../src/catalog/default-catalog.ts";
import { seedDefaultCatalogIfEmpty } from "../src/catalog/seed-catalog.ts";
import { createPool } from "../src/db/pool.ts";
import { createTestDatabase } from "./support/db.ts";

async function catalogVersion(pool: import("pg").Pool): Promise<number> {
  const result = await pool.query<{ version: number }>("select version from catalog_version");
  return result.rows[0]!.version;
}

test("the default catalog is the same every time, with unique ids and retail above wholesale", () => {
  const first = defaultCatalog();
  assert.deepEqual(defaultCatalog(), first);
  assert.ok(first.destinations.length >= 190, `${first.destinations.length} destinations`);
  assert.equal(new Set(first.packages.map((p) => p.package_id)).size, first.packages.length);
  assert.equal(new Set(first.packages.map((p) => p.external_package_id)).size, first.packages.length);
  for (const pkg of first.packages) {
    assert.ok(Number.isInteger(pkg.wholesale_minor) && pkg.wholesale_minor > 0, pkg.package_id);
    assert.ok(pkg.retail_minor > pkg.wholesale_minor, pkg.package_id);
    assert.match(pkg.package_id, /^[a-z0-9-]+$/);
  }
  const fr = first.packages.filter(
    (p) => p.destination_codes.length === 1 && p.destination_codes[0] === "FR",
  );
  assert.deepEqual(
    fr.map((p) => p.package_id),
    ["fr-1gb-7d", "fr-3gb-15d", "fr-5gb-30d", "fr-10gb-30d", "fr-20gb-30d", "fr-unlimited-7d"],
  );
  assert.equal(first.destinations.find((d) => d.destination_code === "FR")?.name, "France");
});

test("region members are all destinations of the default catalog", () => {
  const codes = new Set(defaultCatalog().destinations.map((d) => d.destination_code));
  for (const code of [...EUROPE_CODES, ...ASIA_CODES]) assert.ok(codes.has(code), code);
});

/** Uninhabited territories with no public mobile network: the sandbox sells no package there. */
const NO_NETWORK = ["AQ", "BV", "GS", "HM", "PN", "TF", "UM"];

test("seeding a new database writes every destination with a mobile network with at least six packages, once", async () => {
  const { pool } = await createTestDatabase();
  const before = await catalogVersion(pool);

  const outcome = await seedDefaultCatalogIfEmpty(pool, "USD");
  assert.equal(outcome.seeded, true);
  assert.equal(await catalogVersion(pool), before + 1);

  const destinations = await pool.query<{ count: number }>("select count(*)::int as count from destinations");
  assert.ok(destinations.rows[0]!.count >= 190);
  const thin = await pool.query(
    `select d.destination_code from destinations d
     left join package_destinations pd using (destination_code)
     left join packages p on p.package_id = pd.package_id and p.active
     where d.destination_code <> all($1::text[])
     group by d.destination_code having count(p.package_id) < 6`,
    [NO_NETWORK],
  );
  assert.deepEqual(thin.rows, [], "destinations with fewer than six active packages");

  const again = await seedDefaultCatalogIfEmpty(pool, "USD");
  assert.deepEqual(again, { seeded: false });
  assert.equal(await catalogVersion(pool), before + 1, "a second seed changes nothing");
});

test("a Europe package is offered under FR and DE, and every Global package under every destination with a network", async () => {
  const { pool } = await createTestDatabase();
  await seedDefaultCatalogIfEmpty(pool, "EUR");
  const europe = await pool.query<{ destination_code: string }>(
    "select destination_code from package_destinations where package_id = 'europe-5gb-30d'",
  );
  const europeCodes = europe.rows.map((r) => r.destination_code);
  assert.ok(europeCodes.includes("FR") && europeCodes.includes("DE"));
  assert.ok(!europeCodes.includes("JP"));

  const uncovered = await pool.query(
    `select p.package_id, d.destination_code
     from packages p cross join destinations d
     where p.coverage = 'global' and d.destination_code <> all($1::text[])
       and not exists (select 1 from package_destinations pd
                       where pd.package_id = p.package_id and pd.destination_code = d.destination_code)`,
    [NO_NETWORK],
  );
  assert.deepEqual(uncovered.rows, []);
  const offered = await pool.query(
    "select destination_code from package_destinations where destination_code = any($1::text[])",
    [NO_NETWORK],
  );
  assert.deepEqual(offered.rows, [], "no package where no network is");
  const currencies = await pool.query("select distinct currency from packages");
  assert.deepEqual(currencies.rows, [{ currency: "EUR" }], "prices are in the configured currency");
});

test("two processes seeding the same new database at once seed it once", async () => {
  const { url } = await createTestDatabase();
  // Two pools stand for two processes: separate connections racing for the catalog lock.
  const first = createPool(url, 2, "seed-a");
  const second = createPool(url, 2, "seed-b");
  try {
    const outcomes = await Promise.all([
      seedDefaultCatalogIfEmpty(first, "USD"),
      seedDefaultCatalogIfEmpty(second, "USD"),
    ]);
    assert.deepEqual(outcomes.map((o) => o.seeded).sort(), [false, true]);
    const packages = await first.query<{ count: number }>("select count(*)::int as count from packages");
    assert.equal(packages.rows[0]!.count, defaultCatalog().packages.length);
    assert.equal(await catalogVersion(first), 2);
  } finally {
    await Promise.all([first.end(), second.end()]);
  }
});

test("every default package names the networks of each country it covers; unlimited ones their fair use", () => {
  for (const pkg of defaultCatalog().packages) {
    const named = new Set(pkg.networks.map((n) => n.country_code));
    assert.deepEqual([...named].sort(), pkg.destination_codes, pkg.package_id);
    for (const network of pkg.networks) {
      assert.ok(network.technologies.length > 0, `${pkg.package_id} ${network.name}`);
      for (const t of network.technologies) assert.ok(["2G", "3G", "4G", "5G"].includes(t));
    }
    assert.equal(pkg.fair_use === null, pkg.data_mb !== null, pkg.package_id);
    if (pkg.coverage !== "country")
      assert.equal(
        pkg.networks.length,
        pkg.destination_codes.length,
        `${pkg.package_id}: one partner network a country`,
      );
  }
  const fr = defaultCatalog().packages.find((p) => p.package_id === "fr-5gb-30d")!;
  assert.deepEqual(
    fr.networks.map((n) => n.name),
    ["Orange", "SFR", "Bouygues Telecom", "Free Mobile"],
  );
  assert.deepEqual(fr.networks[0]!.technologies, ["4G", "5G"]);
});
