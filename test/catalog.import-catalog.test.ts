import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import pg from "pg";
import {
  CatalogFileError,
  type CatalogImportRow,
  importCatalog,
  importCatalogFile,
  MAX_CATALOG_ROWS,
} from "../src/catalog/import-catalog.ts";
import { seedDefaultCatalogIfEmpty } from "../src/catalog/seed-catalog.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { createTestDatabase } from "./support/db.ts";

const SAMPLE_CSV = "test/fixtures/catalog-sample.csv";
const SAMPLE_JSON = "test/fixtures/catalog-sample.json";

let scratch = "";
before(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "catalog-import-"));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

type Pool = pg.Pool;

async function seededDatabase(): Promise<{ pool: Pool; url: string }> {
  const database = await createTestDatabase();
  await seedDefaultCatalogIfEmpty(database.pool, "USD");
  return database;
}

async function catalogVersion(pool: Pool): Promise<number> {
  return (await pool.query<{ version: number }>("select version from catalog_version")).rows[0]!.version;
}

async function packageRow(pool: Pool, package_id: string) {
  const result = await pool.query(
    `select package_id, name, data_mb, wholesale_minor, retail_minor, active, coverage, region, updated_at,
            array(select destination_code from package_destinations pd
                  where pd.package_id = p.package_id order by 1) as destination_codes
     from packages p where package_id = $1`,
    [package_id],
  );
  return result.rows[0];
}

/** A cart as the carts domain writes it: a partner and a reservation of one package. */
async function insertCart(pool: Pool, package_id: string): Promise<string> {
  await pool.query("insert into partners (partner_id, name) values ('ptr_catalog_test', 'Catalog Test')");
  await pool.query(
    `insert into carts (cart_key, partner_id, package_id, external_package_id, validity_days, total_minor, currency, expires_at)
     values ('cart_catalog_test', 'ptr_catalog_test', $1, 'EXT-TEST', 7, 3400, 'USD', now() + interval '30 minutes')`,
    [package_id],
  );
  return "cart_catalog_test";
}

test("importing the sample CSV reports each bad row with its line and reason", async () => {
  const { pool } = await seededDatabase();
  const report = await importCatalogFile(pool, SAMPLE_CSV, { currency: "USD", actor: CLI_ACTOR });
  const reasons = new Map(report.rejected.map((r) => [r.line, r.reason]));
  assert.equal(report.rejected_total, 9);
  assert.match(reasons.get(8)!, /unknown destination codes: ZZ/);
  assert.match(reasons.get(9)!, /wholesale_minor must be a whole number/);
  assert.match(reasons.get(10)!, /name is missing/);
  assert.match(reasons.get(11)!, /data_mb must be a whole number.*"lots"/);
  assert.match(reasons.get(12)!, /package_id fr-1gb-7d repeats row 1/);
  assert.match(reasons.get(13)!, /retail_minor is below wholesale_minor/);
  assert.match(reasons.get(14)!, /a country package covers exactly one destination/);
  assert.match(reasons.get(15)!, /external_package_id CARRIER-BE-1GB-7D belongs to package be-1gb-7d/);
  assert.match(reasons.get(16)!, /the row has 3 fields; the header has 14/);
  assert.deepEqual(report.rejected[0], { row: 7, line: 8, reason: "unknown destination codes: ZZ" });
  assert.equal(report.imported, 1, "benelux-2gb-10d is new");
  assert.equal(report.updated, 2, "fr-1gb-7d's price and europe-5gb-30d's destinations changed");
  assert.equal(report.unchanged, 3);
});

test("an import replaces prices, fields and destinations, and adds new packages", async () => {
  const { pool } = await seededDatabase();
  await importCatalog(pool, SAMPLE_CSV, { currency: "USD", actor: CLI_ACTOR });

  const fr = await packageRow(pool, "fr-1gb-7d");
  assert.equal(fr.wholesale_minor, 300);
  assert.equal(fr.retail_minor, 450);
  const europe = await packageRow(pool, "europe-5gb-30d");
  assert.deepEqual(europe.destination_codes, ["DE", "ES", "FR", "IT"]);
  const benelux = await packageRow(pool, "benelux-2gb-10d");
  assert.equal(benelux.name, "Benelux, 2 GB 10 days");
  assert.equal(benelux.coverage, "regional", "several destinations and no coverage: regional");
  assert.deepEqual(benelux.destination_codes, ["BE", "LU", "NL"], "codes are upper-cased");
  assert.equal((await packageRow(pool, "fr-unlimited-7d")).data_mb, null, "empty data_mb: unlimited");
});

test("a package absent from the file is retired, and the cart referencing it still stands", async () => {
  const { pool } = await seededDatabase();
  const cart_key = await insertCart(pool, "fr-20gb-30d");
  const activeBefore = (await pool.query("select package_id from packages where active")).rowCount!;

  const report = await importCatalog(pool, SAMPLE_CSV, { currency: "USD", actor: CLI_ACTOR });

  const retired = await packageRow(pool, "fr-20gb-30d");
  assert.equal(retired.active, false);
  const cart = await pool.query(
    "select c.cart_key, p.package_id from carts c join packages p using (package_id) where cart_key = $1",
    [cart_key],
  );
  assert.deepEqual(cart.rows, [{ cart_key, package_id: "fr-20gb-30d" }]);
  // Rows named in the file stay active even when rejected: a typo must not withdraw a package.
  for (const kept of ["es-1gb-7d", "it-1gb-7d", "pt-1gb-7d", "gr-1gb-7d", "nl-1gb-7d", "pl-1gb-7d"]) {
    assert.equal((await packageRow(pool, kept)).active, true, kept);
  }
  const activeAfter = (await pool.query("select package_id from packages where active")).rowCount!;
  assert.equal(activeAfter, activeBefore - report.retired + report.imported);
  assert.equal(activeAfter, 6 + 6, "six valid rows and six rejected rows naming existing packages");
});

test("importing the same file twice changes nothing the second time and keeps the version", async () => {
  const { pool } = await seededDatabase();
  const first = await importCatalog(pool, SAMPLE_CSV, { currency: "USD", actor: CLI_ACTOR });
  const version = await catalogVersion(pool);
  assert.equal(first.version, version);
  const before = await packageRow(pool, "fr-1gb-7d");

  const second = await importCatalog(pool, SAMPLE_CSV, { currency: "USD", actor: CLI_ACTOR });

  assert.equal(second.imported, 0);
  assert.equal(second.updated, 0);
  assert.equal(second.retired, 0);
  assert.equal(second.unchanged, 6);
  assert.equal(second.rejected_total, first.rejected_total);
  assert.equal(second.version, null);
  assert.equal(await catalogVersion(pool), version);
  assert.deepEqual(await packageRow(pool, "fr-1gb-7d"), before, "not even updated_at moved");
});

test("an import bumps the catalog version and notifies catalog_changed with it, in the same commit", async () => {
  const { pool, url } = await seededDatabase();
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  try {
    const heard: string[] = [];
    listener.on("notification", (message) => heard.push(`${message.channel}:${message.payload}`));
    await listener.query("listen catalog_changed");
    const before = await catalogVersion(pool);

    const report = await importCatalog(pool, SAMPLE_CSV, { currency: "USD", actor: CLI_ACTOR });

    assert.equal(report.version, before + 1);
    assert.equal(await catalogVersion(pool), before + 1);
    const deadline = Date.now() + 2_000;
    while (heard.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(heard, [`catalog_changed:${before + 1}`]);
  } finally {
    await listener.end();
  }
});

test("a JSON file imports too: arrays or strings of codes, numbers as strings, bad rows reported", async () => {
  const { pool } = await seededDatabase();
  const progress: Array<[number, number]> = [];
  const report = await importCatalog(pool, SAMPLE_JSON, {
    currency: "USD",
    actor: CLI_ACTOR,
    onProgress: (done, total) => progress.push([done, total]),
  });
  assert.equal(report.imported, 1);
  assert.equal(report.updated, 1);
  assert.deepEqual(
    report.rejected.map((r) => [r.row, r.line, r.reason]),
    [
      [3, undefined, 'wholesale_minor must be a whole number from 1 to 1000000000, got "2.5"'],
      [4, undefined, "the row is not an object"],
    ],
  );
  assert.deepEqual((await packageRow(pool, "alps-3gb-15d")).destination_codes, ["AT", "CH", "LI"]);
  assert.equal((await packageRow(pool, "de-unlimited-7d")).active, true, "its rejected row keeps it");
  assert.deepEqual(progress.at(-1), [4, 4], "progress ends at the row count");
});

test("a retired package named again in a later import is active again", async () => {
  const { pool } = await seededDatabase();
  await importCatalog(pool, SAMPLE_CSV, { currency: "USD", actor: CLI_ACTOR });
  assert.equal((await packageRow(pool, "fr-20gb-30d")).active, false);
  const row: CatalogImportRow = {
    package_id: "fr-20gb-30d",
    external_package_id: "CARRIER-FR-20GB-30D",
    name: "France 20 GB 30 days",
    destination_codes: ["FR"],
    data_mb: 20480,
    validity_days: 30,
    wholesale_minor: 3400,
    retail_minor: 4760,
  };
  const report = await importCatalog(pool, [row], { currency: "USD", actor: CLI_ACTOR });
  assert.equal(report.updated, 1);
  assert.equal((await packageRow(pool, "fr-20gb-30d")).active, true);
});

test("a file without one valid row changes nothing rather than retiring the whole catalog", async () => {
  const { pool } = await seededDatabase();
  const version = await catalogVersion(pool);
  const file = path.join(scratch, "all-bad.csv");
  await writeFile(
    file,
    "package_id,external_package_id,name,destination_codes,data_mb,validity_days,wholesale_minor,retail_minor\n" +
      "x-1,X-1,Bad,QQ,1,1,1,1\n",
  );
  const report = await importCatalog(pool, file, { currency: "USD", actor: CLI_ACTOR });
  assert.equal(report.rejected_total, 1);
  assert.equal(report.retired, 0);
  assert.equal(await catalogVersion(pool), version);
  const active = await pool.query("select 1 from packages where not active");
  assert.equal(active.rowCount, 0);
});

test("a file with an unknown column is refused as a whole, before anything is written", async () => {
  const { pool } = await seededDatabase();
  const file = path.join(scratch, "typo.csv");
  await writeFile(
    file,
    "package_id,external_package_id,name,destination_codes,data_mb,validity_days,wholesale,retail_minor\n",
  );
  await assert.rejects(importCatalog(pool, file, { currency: "USD", actor: CLI_ACTOR }), (error: Error) => {
    assert.ok(error instanceof CatalogFileError);
    assert.match(error.message, /unknown columns: wholesale/);
    return true;
  });
});

test("files and row lists over the limits are refused", async () => {
  const { pool } = await seededDatabase();
  const tooMany = Array.from({ length: MAX_CATALOG_ROWS + 1 }, () => ({}) as CatalogImportRow);
  await assert.rejects(importCatalog(pool, tooMany, { currency: "USD", actor: CLI_ACTOR }), CatalogFileError);
  const json = path.join(scratch, "too-many.json");
  await writeFile(json, JSON.stringify(tooMany));
  await assert.rejects(importCatalog(pool, json, { currency: "USD", actor: CLI_ACTOR }), /at most 100000/);
  const big = path.join(scratch, "big.csv");
  await writeFile(big, Buffer.alloc(20 * 1024 * 1024 + 1, 0x41));
  await assert.rejects(
    importCatalog(pool, big, { currency: "USD", actor: CLI_ACTOR }),
    /larger than 20971520 bytes/,
  );
  const broken = path.join(scratch, "broken.json");
  await writeFile(broken, "[{");
  await assert.rejects(importCatalog(pool, broken, { currency: "USD", actor: CLI_ACTOR }), /not valid JSON/);
});

test("an import does not wait on an open purchase of a package it leaves unchanged", async () => {
  const { pool } = await seededDatabase();
  await pool.query("insert into partners (partner_id, name) values ('ptr_lock_test', 'Lock Test')");
  const purchase = await pool.connect();
  try {
    // A cart being created holds a key-share lock on its package until it commits.
    await purchase.query("begin");
    await purchase.query(
      `insert into carts (cart_key, partner_id, package_id, external_package_id, validity_days, total_minor, currency, expires_at)
       values ('cart_lock_test', 'ptr_lock_test', 'fr-3gb-15d', 'CARRIER-FR-3GB-15D', 15, 800, 'USD', now() + interval '30 minutes')`,
    );
    const timeout = new Promise<"waited">((resolve) => setTimeout(() => resolve("waited"), 5_000).unref());
    const outcome = await Promise.race([
      importCatalog(pool, SAMPLE_CSV, { currency: "USD", actor: CLI_ACTOR }),
      timeout,
    ]);
    assert.notEqual(outcome, "waited");
  } finally {
    await purchase.query("rollback");
    purchase.release();
  }
});

test("an import into a database that was never seeded brings the destinations it needs", async () => {
  // Production does not seed the default catalog: its first catalog is the operator's import.
  const { pool } = await createTestDatabase();
  const report = await importCatalog(pool, SAMPLE_CSV, { currency: "USD", actor: CLI_ACTOR });
  // Seven: nl-1gb-7d's external id is nobody's here, unlike in a seeded catalog.
  assert.equal(report.imported, 7);
  assert.equal(report.retired, 0);
  assert.equal(report.version, 2);
  const destinations = await pool.query("select name from destinations where destination_code = 'DE'");
  assert.deepEqual(destinations.rows, [{ name: "Germany" }]);
  const again = await importCatalog(pool, SAMPLE_CSV, { currency: "USD", actor: CLI_ACTOR });
  assert.equal(again.version, null, "destinations already there: nothing changed");
});
