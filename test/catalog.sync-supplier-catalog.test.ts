// The catalog sync (src/catalog/sync-supplier-catalog.ts) against the Airalo and eSIM Go fakes
// (src/simulators/), in-process over real HTTP, each test on a database of its own. The fakes keep
// their own rows in a database of their own. Assertions read the packages table and the partners'
// discovery answer, not only the report.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import type pg from "pg";
import { listAiraloPackages } from "../src/carrier/airalo/list-packages.ts";
import { listEsimGoCatalogue } from "../src/carrier/esimgo/list-catalogue.ts";
import { decimalToMinor, type Supplier, supplierPackageId } from "../src/carrier/supplier-package.ts";
import { importCatalog } from "../src/catalog/import-catalog.ts";
import { destinationPackagesBody } from "../src/catalog/list-destination-packages.ts";
import { repeatSupplierSyncs } from "../src/catalog/repeat-supplier-syncs.ts";
import {
  parseMarkupPercent,
  priceWithMarkup,
  SupplierSyncError,
  syncSupplierCatalog,
} from "../src/catalog/sync-supplier-catalog.ts";
import { loadConfig } from "../src/config.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { startAiralo } from "../src/simulators/airalo/server.ts";
import { startEsimGoSimulator } from "../src/simulators/esimgo/server.ts";
import {
  openSupplierCatalog,
  SupplierNotConfigured,
  SYNC_NOT_IN_PRODUCTION,
} from "../src/suppliers/supplier-catalogs.ts";
import { runCli } from "./support/cli.ts";
import { createTestDatabase } from "./support/db.ts";

const CLIENT_ID = "sync-test-client";
const CLIENT_SECRET = "sync-test-secret-0123456789";
const API_KEY = "sync-test-key-1234";

const fakes = await createTestDatabase();
const airalo = await startAiralo({
  pool: fakes.pool,
  port: 0,
  host: "127.0.0.1",
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
});
const esimgo = await startEsimGoSimulator({
  pool: fakes.pool,
  port: 0,
  host: "127.0.0.1",
  apiKey: API_KEY,
  rate_limit_per_second: 100_000,
});
after(async () => {
  await airalo.close();
  await esimgo.close();
});

/** Supplier ids a test has the supplier stop selling: dropped from the fakes' answers on the way. */
const withdrawn = new Set<string>();
const withdrawingFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const path = new URL(String(input)).pathname;
  if (withdrawn.size === 0 || !/\/(packages|catalogue)$/.test(path)) return response;
  const body = (await response.json()) as any;
  if (Array.isArray(body.bundles)) body.bundles = body.bundles.filter((b: any) => !withdrawn.has(b.name));
  for (const entry of Array.isArray(body.data) ? body.data : []) {
    for (const operator of entry.operators ?? []) {
      operator.packages = operator.packages.filter((p: any) => !withdrawn.has(p.id));
    }
  }
  return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
};

function listerOf(pool: pg.Pool, supplier: Supplier) {
  return supplier === "airalo"
    ? () =>
        listAiraloPackages({
          pool,
          base_url: `${airalo.url}/v2`,
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          timeout_ms: 5_000,
          fetch: withdrawingFetch,
        })
    : () =>
        listEsimGoCatalogue({
          base_url: `${esimgo.url}/v2.4`,
          api_key: API_KEY,
          timeout_ms: 5_000,
          fetch: withdrawingFetch,
        });
}

/** Each test's database asks the fake for a token of its own: Airalo allows 3 a minute. */
async function resetAiraloRateLimits(): Promise<void> {
  const response = await fetch(`${airalo.url}/control`, {
    method: "POST",
    headers: { authorization: `Bearer ${CLIENT_SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ reset_rate_limits: true }),
  });
  assert.equal(response.status, 200);
}

async function sync(
  pool: pg.Pool,
  supplier: Supplier,
  markup: string,
  destinations: string[] = [],
  currency = "USD",
) {
  if (supplier === "airalo") await resetAiraloRateLimits();
  return await syncSupplierCatalog(pool, {
    supplier,
    markup_basis_points: parseMarkupPercent(markup)!,
    destination_codes: destinations,
    currency,
    actor: CLI_ACTOR,
    list: listerOf(pool, supplier),
  });
}

async function pkg(pool: pg.Pool, package_id: string) {
  const result = await pool.query(
    `select package_id, external_package_id, wholesale_minor, retail_minor, supplier, supplier_net_minor,
            supplier_currency, top_up_only, active, data_mb, coverage
     from packages where package_id = $1`,
    [package_id],
  );
  return result.rows[0];
}

test("the markup is applied in integers and rounded up to the minor unit", () => {
  assert.equal(priceWithMarkup(310, parseMarkupPercent("15")!), 357); // 3.10 x 1.15 = 3.565
  assert.equal(priceWithMarkup(100, parseMarkupPercent("10")!), 110); // 1.00 x 1.1 is 1.1000000000000001 in floats
  assert.equal(priceWithMarkup(288, parseMarkupPercent("15")!), 332); // 331.2
  assert.equal(priceWithMarkup(199, 0), 199);
  assert.equal(priceWithMarkup(333, parseMarkupPercent("12.5")!), 375); // 374.625
  assert.equal(parseMarkupPercent("1.234"), null);
  assert.equal(parseMarkupPercent("-5"), null);
  assert.equal(decimalToMinor(2.88, "USD"), 288);
  assert.equal(decimalToMinor("2.881", "USD"), 289);
  assert.equal(decimalToMinor(1.5, "JPY"), 2);
  assert.equal(supplierPackageId("esimgo", "esim_1GB_7D_FR_V2"), "esimgo-esim_1GB_7D_FR_V2");
  assert.match(supplierPackageId("airalo", "a b/c"), /^airalo-a-b-c-[0-9a-f]{12}$/);
});

test("an Airalo sync adds its packages and top-ups at net plus markup, rounded up; a second reports nothing", async () => {
  const { pool } = await createTestDatabase({ catalog: true });
  const carrierBefore = await pool.query("select count(*)::int as n from packages where active");
  const first = await sync(pool, "airalo", "15");
  assert.ok(first.added.length > 50, `added ${first.added.length}`);
  assert.deepEqual(first.changed, []);
  assert.deepEqual(first.removed, []);
  // France's 1 GB: net 2.88 USD; 2.88 x 1.15 = 3.312 -> 3.32. Airalo's retail 4.05 stays above it.
  assert.deepEqual(await pkg(pool, "airalo-bonbon-mobile-7days-1gb"), {
    package_id: "airalo-bonbon-mobile-7days-1gb",
    external_package_id: "bonbon-mobile-7days-1gb",
    wholesale_minor: 332,
    retail_minor: 405,
    supplier: "airalo",
    supplier_net_minor: 288,
    supplier_currency: "USD",
    top_up_only: false,
    active: true,
    data_mb: 1024,
    coverage: "country",
  });
  const topup = await pkg(pool, "airalo-bonbon-mobile-7days-1gb-topup");
  assert.equal(topup.wholesale_minor, 332);
  assert.equal(topup.top_up_only, true);
  assert.equal((await pkg(pool, "airalo-moshi-moshi-7days-unlimited")).data_mb, null);
  assert.equal((await pkg(pool, "airalo-discover-global-7days-1gb")).coverage, "global");
  assert.equal((await pkg(pool, "airalo-eurolink-7days-1gb")).coverage, "regional");
  // The carrier's packages are untouched.
  const carrierAfter = await pool.query(
    "select count(*)::int as n from packages where active and supplier = 'carrier'",
  );
  assert.equal(carrierAfter.rows[0].n, carrierBefore.rows[0].n);

  const version = (await pool.query("select version from catalog_version")).rows[0].version;
  const second = await sync(pool, "airalo", "15");
  assert.deepEqual([second.added, second.changed, second.removed, second.version], [[], [], [], null]);
  assert.equal((await pool.query("select version from catalog_version")).rows[0].version, version);

  // A new markup changes every price.
  const third = await sync(pool, "airalo", "20");
  assert.equal(third.changed.length, first.added.length);
  assert.equal((await pkg(pool, "airalo-bonbon-mobile-7days-1gb")).wholesale_minor, 346); // 345.6
});

test("an eSIM Go sync adds its bundles at net plus markup; partners see no supplier in the package JSON", async () => {
  const { pool } = await createTestDatabase({ catalog: true });
  const report = await sync(pool, "esimgo", "15");
  assert.ok(report.added.includes("esimgo-esim_1GB_7D_FR_V2"));
  // 1.99 x 1.15 = 2.2885 -> 2.29; eSIM Go gives no retail price, so retail is ours.
  const fr = await pkg(pool, "esimgo-esim_1GB_7D_FR_V2");
  assert.equal(fr.wholesale_minor, 229);
  assert.equal(fr.retail_minor, 229);
  assert.equal(fr.supplier, "esimgo");
  assert.equal(fr.top_up_only, false);
  assert.equal((await pkg(pool, "esimgo-esim_3GB_30D_RGLOBAL_V2")).coverage, "global");
  assert.equal((await pkg(pool, "esimgo-esim_5GB_30D_REUP_V2")).coverage, "regional");
  const again = await sync(pool, "esimgo", "15");
  assert.deepEqual([again.added, again.changed, again.removed], [[], [], []]);

  const answer = JSON.parse((await destinationPackagesBody(pool, "FR")).body.toString("utf8"));
  const synced = answer.data.find((p: any) => p.package_id === "esimgo-esim_1GB_7D_FR_V2");
  assert.ok(synced, "the synced package is offered to partners");
  assert.equal(synced.external_package_id, "esim_1GB_7D_FR_V2");
  const carrier = answer.data.find((p: any) => !String(p.package_id).startsWith("esimgo-"));
  // Same keys for the carrier's package and the supplier's: nothing tells them apart.
  assert.deepEqual(Object.keys(synced).sort(), Object.keys(carrier).sort());
  assert.ok(!JSON.stringify(answer).includes("supplier"));
  assert.ok(!JSON.stringify(answer).includes('esimgo"'));
});

test("a package the supplier stopped selling is removed, no longer offered, and a cart keeps its terms", async () => {
  const { pool } = await createTestDatabase({ catalog: true });
  await sync(pool, "airalo", "15");
  await pool.query("insert into partners (partner_id, name) values ('ptr_sync_test', 'Sync Test')");
  await pool.query(
    `insert into carts (cart_key, partner_id, package_id, external_package_id, validity_days, total_minor, currency, expires_at)
     values ('cart_sync_test', 'ptr_sync_test', 'airalo-bonbon-mobile-7days-1gb', 'bonbon-mobile-7days-1gb', 7, 332, 'USD',
             now() + interval '30 minutes')`,
  );
  withdrawn.add("bonbon-mobile-7days-1gb");
  try {
    const report = await sync(pool, "airalo", "15");
    assert.deepEqual(
      [report.added, report.changed, report.removed],
      [[], [], ["airalo-bonbon-mobile-7days-1gb"]],
    );
  } finally {
    withdrawn.clear();
  }
  assert.equal((await pkg(pool, "airalo-bonbon-mobile-7days-1gb")).active, false);
  const answer = JSON.parse((await destinationPackagesBody(pool, "FR")).body.toString("utf8"));
  assert.ok(!answer.data.some((p: any) => p.package_id === "airalo-bonbon-mobile-7days-1gb"));
  const cart = await pool.query(
    "select package_id, total_minor from carts where cart_key = 'cart_sync_test'",
  );
  assert.deepEqual(cart.rows, [{ package_id: "airalo-bonbon-mobile-7days-1gb", total_minor: 332 }]);
  // Sold again: offered again, reported added.
  const back = await sync(pool, "airalo", "15");
  assert.deepEqual(back.added, ["airalo-bonbon-mobile-7days-1gb"]);
});

test("--destinations keeps packages covering those countries, regional and global ones included", async () => {
  const { pool } = await createTestDatabase({ catalog: true });
  const report = await sync(pool, "esimgo", "10", ["FR"]);
  assert.deepEqual(report.added, [
    "esimgo-esim_10GB_30D_FR_V2",
    "esimgo-esim_10GB_30D_RGLOBAL_V2",
    "esimgo-esim_1GB_7D_FR_V2",
    "esimgo-esim_20GB_30D_REUP_V2",
    "esimgo-esim_3GB_30D_FR_V2",
    "esimgo-esim_3GB_30D_RGLOBAL_V2",
    "esimgo-esim_5GB_30D_FR_V2",
    "esimgo-esim_5GB_30D_REUP_V2",
  ]);
  // Widening to Japan adds Japan's and Asia's; narrowing back removes them.
  const wider = await sync(pool, "esimgo", "10", ["FR", "JP"]);
  assert.equal(wider.added.length, 5);
  const narrower = await sync(pool, "esimgo", "10", ["FR"]);
  assert.deepEqual(narrower.removed.sort(), wider.added.sort());
  // Another supplier's sync leaves eSIM Go's packages alone.
  await sync(pool, "airalo", "10", ["DE"]);
  const active = await pool.query(
    "select count(*)::int as n from packages where active and supplier = 'esimgo'",
  );
  assert.equal(active.rows[0].n, 8);
});

test("a supplier pricing in another currency than the catalog's is refused, nothing written", async () => {
  const { pool } = await createTestDatabase({ catalog: true });
  await assert.rejects(sync(pool, "airalo", "15", [], "EUR"), (error: Error) => {
    assert.ok(error instanceof SupplierSyncError);
    assert.match(
      error.message,
      /airalo prices in USD and the catalog is in EUR; currencies are not converted/,
    );
    return true;
  });
  await assert.rejects(sync(pool, "esimgo", "15", [], "EUR"), SupplierSyncError);
  const count = await pool.query("select count(*)::int as n from packages where supplier <> 'carrier'");
  assert.equal(count.rows[0].n, 0);
  const runs = await pool.query(
    "select supplier, last_outcome from supplier_catalog_syncs order by supplier",
  );
  assert.equal(runs.rows.length, 2);
  assert.match(runs.rows[0].last_outcome, /currencies are not converted/);
});

test("the CLI syncs from the sandbox's built-in eSIM Go fake and answers the contract's --json shape", async () => {
  const db = await createTestDatabase({ catalog: true });
  const env = { DATABASE_URL: db.url, APP_ENV: "sandbox", CURRENCY: "USD" };
  const args = ["catalog", "sync", "esimgo", "--markup-percent", "15", "--destinations", "fr,de"];
  const first = await runCli([...args, "--json"], env);
  assert.equal(first.code, 0, first.stderr);
  const report = JSON.parse(first.stdout);
  assert.deepEqual(Object.keys(report), ["added", "changed", "removed"]);
  assert.ok(report.added.includes("esimgo-esim_1GB_7D_FR_V2"));
  assert.ok(report.added.includes("esimgo-esim_1GB_7D_DE_V2"));
  assert.ok(!report.added.includes("esimgo-esim_1GB_7D_JP_V2"));
  assert.equal((await pkg(db.pool, "esimgo-esim_1GB_7D_FR_V2")).wholesale_minor, 229);
  const second = await runCli([...args, "--json"], env);
  assert.deepEqual(JSON.parse(second.stdout), { added: [], changed: [], removed: [] });
  const human = await runCli(args, env);
  assert.match(human.stdout, /Catalog synced from esimgo\./);
  const run = await db.pool.query(
    "select markup_basis_points, destination_codes, last_outcome from supplier_catalog_syncs",
  );
  assert.deepEqual(run.rows, [
    { markup_basis_points: 1500, destination_codes: ["DE", "FR"], last_outcome: "ok" },
  ]);

  const badMarkup = await runCli(["catalog", "sync", "esimgo", "--markup-percent", "1.234", "--json"], env);
  assert.notEqual(badMarkup.code, 0);
  assert.match(badMarkup.stdout + badMarkup.stderr, /--markup-percent N/);
  const badSupplier = await runCli(["catalog", "sync", "acme", "--markup-percent", "5"], env);
  assert.notEqual(badSupplier.code, 0);
  assert.match(badSupplier.stdout + badSupplier.stderr, /the supplier is one of airalo, esimgo/);
  const foreign = await runCli(["catalog", "sync", "airalo", "--markup-percent", "5", "--json"], {
    ...env,
    CURRENCY: "EUR",
  });
  assert.equal(foreign.code, 1);
  assert.match(foreign.stdout + foreign.stderr, /supplier_sync_refused/);
  assert.match(foreign.stdout + foreign.stderr, /currencies are not converted/);
});

test("the periodic job re-runs a supplier's last sync once SUPPLIER_SYNC_MINUTES have passed, and only then", async () => {
  const db = await createTestDatabase({ catalog: true });
  await sync(db.pool, "esimgo", "15", ["FR"]);
  const config = { ...loadConfig({ APP_ENV: "sandbox", CURRENCY: "USD" }), supplier_sync_minutes: 60 };
  const deps = { pool: db.pool, config, log: () => undefined };
  const soon = await repeatSupplierSyncs(deps, Date.now() + 59 * 60_000);
  assert.equal(soon.size, 0);
  // A price changed meanwhile: past the hour the job sets it back to the supplier's net plus the
  // markup (through the built-in fake, as the sandbox does; the test's fake is the same catalogue).
  await db.pool.query(
    "update packages set wholesale_minor = 1, retail_minor = 1 where package_id = 'esimgo-esim_1GB_7D_FR_V2'",
  );
  const due = await repeatSupplierSyncs(deps, Date.now() + 61 * 60_000);
  const report = due.get("esimgo");
  assert.ok(report && !(report instanceof Error), String(report));
  assert.deepEqual([report.added, report.changed, report.removed], [[], ["esimgo-esim_1GB_7D_FR_V2"], []]);
  assert.equal((await pkg(db.pool, "esimgo-esim_1GB_7D_FR_V2")).wholesale_minor, 229);
  const run = await db.pool.query(
    "select markup_basis_points, destination_codes, changed from supplier_catalog_syncs",
  );
  assert.deepEqual(run.rows, [{ markup_basis_points: 1500, destination_codes: ["FR"], changed: 1 }]);
  // Two ticks at once (a slow sync overlapping the next minute, or two processes): one runs it.
  const later = Date.now() + 122 * 60_000;
  const ticks = await Promise.all([repeatSupplierSyncs(deps, later), repeatSupplierSyncs(deps, later)]);
  assert.deepEqual(ticks.map((tick) => tick.size).sort(), [0, 1]);
});

test("a catalog file import names suppliers in an optional column, retires only the carrier's packages and never moves a package to another supplier", async () => {
  const { pool } = await createTestDatabase({ catalog: true });
  await sync(pool, "esimgo", "15", ["FR"]);
  const row = {
    external_package_id: "EXT-FILE-1",
    name: "File package",
    destination_codes: "FR",
    data_mb: 1024,
    validity_days: 7,
    wholesale_minor: 300,
    retail_minor: 400,
  };
  const report = await importCatalog(
    pool,
    [
      { ...row, package_id: "file-fr-1gb" },
      { ...row, package_id: "file-fr-airalo", external_package_id: "EXT-FILE-2", supplier: "airalo" },
      // A synced eSIM Go package named without its supplier: the row is refused, the package kept.
      { ...row, package_id: "esimgo-esim_1GB_7D_FR_V2", external_package_id: "esim_1GB_7D_FR_V2" },
      { ...row, package_id: "file-bad", external_package_id: "EXT-FILE-3", supplier: "acme" },
    ],
    { currency: "USD", actor: CLI_ACTOR },
  );
  assert.deepEqual(
    report.rejected.map((r) => r.reason),
    [
      "package_id esimgo-esim_1GB_7D_FR_V2 is a esimgo package; its supplier does not change",
      "supplier must be one of carrier, airalo, esimgo",
    ],
  );
  assert.equal((await pkg(pool, "file-fr-1gb")).supplier, "carrier");
  assert.equal((await pkg(pool, "file-fr-airalo")).supplier, "airalo");
  const active = await pool.query<{ supplier: string; n: number }>(
    "select supplier, count(*)::int as n from packages where active group by supplier order by supplier",
  );
  // The seeded carrier packages are retired; eSIM Go's 8 stay, their prices untouched.
  assert.deepEqual(active.rows, [
    { supplier: "airalo", n: 1 },
    { supplier: "carrier", n: 1 },
    { supplier: "esimgo", n: 8 },
  ]);
  assert.equal((await pkg(pool, "esimgo-esim_1GB_7D_FR_V2")).wholesale_minor, 229);
});

test("each adapter follows every page of its supplier's catalogue", async () => {
  const { pool } = await createTestDatabase();
  const pages: string[] = [];
  const recording: typeof fetch = (input, init) => {
    const url = new URL(String(input));
    if (/\/(packages|catalogue)$/.test(url.pathname)) pages.push(url.search);
    return fetch(input, init);
  };
  await resetAiraloRateLimits();
  const base = { pool, base_url: `${airalo.url}/v2`, client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
  const whole = await listAiraloPackages({ ...base, timeout_ms: 5_000 });
  const paged = await listAiraloPackages({ ...base, timeout_ms: 5_000, fetch: recording, page_size: 3 });
  assert.ok(whole.ok && paged.ok);
  assert.equal(paged.packages.length, whole.packages.length);
  // 10 countries in pages of 3, then 3 regional and global entries in one.
  assert.equal(pages.length, 5, pages.join(" "));
  pages.length = 0;
  const esimgoBase = { base_url: `${esimgo.url}/v2.4`, api_key: API_KEY, timeout_ms: 5_000 };
  const bundles = await listEsimGoCatalogue(esimgoBase);
  const pagedBundles = await listEsimGoCatalogue({ ...esimgoBase, fetch: recording, page_size: 10 });
  assert.ok(bundles.ok && pagedBundles.ok);
  assert.equal(pagedBundles.packages.length, bundles.packages.length);
  assert.equal(pages.length, Math.ceil(bundles.packages.length / 10));
});

test("a catalogue that cannot be read whole changes nothing: no package is removed", async () => {
  const { pool } = await createTestDatabase({ catalog: true });
  await sync(pool, "esimgo", "15");
  const failingSecondPage: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    if (url.pathname.endsWith("/catalogue") && url.searchParams.get("page") === "2")
      return new Response(JSON.stringify({ message: "Internal Server Error" }), { status: 500 });
    return fetch(input, init);
  };
  await assert.rejects(
    syncSupplierCatalog(pool, {
      supplier: "esimgo",
      markup_basis_points: 1500,
      destination_codes: [],
      currency: "USD",
      actor: CLI_ACTOR,
      list: () =>
        listEsimGoCatalogue({
          base_url: `${esimgo.url}/v2.4`,
          api_key: API_KEY,
          timeout_ms: 5_000,
          fetch: failingSecondPage,
          page_size: 10,
        }),
    }),
    /esimgo: eSIM Go GET \/catalogue: .*500/,
  );
  const active = await pool.query(
    "select count(*)::int as n from packages where active and supplier = 'esimgo'",
  );
  assert.ok(active.rows[0].n > 10);
  const run = await pool.query("select last_outcome from supplier_catalog_syncs");
  assert.match(run.rows[0].last_outcome, /500/);
});

test("a regional package listing a territory we have no destination for is offered for the others; one with none is skipped", async () => {
  const { pool } = await createTestDatabase({ catalog: true });
  const item = {
    name: "Balkans 1 GB",
    coverage: "regional" as const,
    region: "Balkans",
    data_mb: 1024,
    validity_days: 7,
    net_minor: 500,
    retail_minor: null,
    currency: "USD",
    top_up_only: false,
  };
  const report = await syncSupplierCatalog(pool, {
    supplier: "airalo",
    markup_basis_points: 0,
    destination_codes: [],
    currency: "USD",
    actor: CLI_ACTOR,
    list: async () => ({
      ok: true,
      packages: [
        { ...item, external_package_id: "balkans-1gb", destination_codes: ["AL", "RS", "ZZ"] },
        { ...item, external_package_id: "nowhere-1gb", destination_codes: ["ZZ"] },
      ],
    }),
  });
  assert.deepEqual(report.added, ["airalo-balkans-1gb"]);
  assert.deepEqual(
    report.skipped.map((s) => s.external_package_id),
    ["nowhere-1gb"],
  );
  const codes = await pool.query(
    "select destination_code from package_destinations where package_id = 'airalo-balkans-1gb' order by 1",
  );
  assert.deepEqual(
    codes.rows.map((r) => r.destination_code),
    ["AL", "RS"],
  );
});

test("in production the sync refuses, saying why, and changes nothing: purchases of a supplier's packages are not routed to it yet", async () => {
  // A production configuration with eSIM Go's credentials (the rest of production's settings play no part).
  const sandbox = loadConfig({ APP_ENV: "sandbox", CURRENCY: "USD" });
  const config = { ...sandbox, app_env: "production" as const, esimgo_api_key: "production-key-0123456789" };
  const db = await createTestDatabase({ catalog: true });
  const before = await db.pool.query("select count(*)::int as n from packages");
  await assert.rejects(
    openSupplierCatalog(config, db.pool, "esimgo", () => undefined),
    (error: Error) => error instanceof SupplierNotConfigured && error.message === SYNC_NOT_IN_PRODUCTION,
  );
  const after_ = await db.pool.query("select count(*)::int as n from packages");
  assert.equal(after_.rows[0].n, before.rows[0].n);
});
