// The catalog change feed (issue 34, contract "Catalog additions"): GET /v1/catalog/changes after
// a price list change (that partner only), an import and a supplier sync (every partner, one row
// per change whatever the number of partners), by cursor pages, with `since` checked. Real
// PostgreSQL, the real app over HTTP injection, the eSIM Go fake over real HTTP for the sync.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { listEsimGoCatalogue } from "../src/carrier/esimgo/list-catalogue.ts";
import { claimChangesToAnnounce } from "../src/catalog/announce-catalog-changes.ts";
import { defaultCatalog } from "../src/catalog/default-catalog.ts";
import { type CatalogImportRow, importCatalog } from "../src/catalog/import-catalog.ts";
import { recordCatalogChanges } from "../src/catalog/record-catalog-changes.ts";
import { parseMarkupPercent, syncSupplierCatalog } from "../src/catalog/sync-supplier-catalog.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { startEsimGoSimulator } from "../src/simulators/esimgo/server.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { bearer, type Json, request } from "./support/http.ts";

const api = await createTestApp();
const target = api.app;
const pool = api.database.pool;

type Page = { data: Json[]; has_more: boolean; next_cursor: string };

async function page(key: string, query: string): Promise<Page> {
  const answer = await request(target, "GET", `/v1/catalog/changes${query}`, { key });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

/** Every change after `since`, following has_more; the cursor to poll from afterwards. */
async function drain(key: string, since: string | null, limit = 100) {
  const changes: Json[] = [];
  let cursor = since;
  for (let pages = 1; ; pages++) {
    assert.ok(pages < 1_000, "the feed ends");
    const got = await page(key, `?limit=${limit}${cursor === null ? "" : `&since=${cursor}`}`);
    assert.ok(got.data.length <= limit);
    assert.equal(typeof got.next_cursor, "string", "next_cursor is never null");
    changes.push(...got.data);
    cursor = got.next_cursor;
    if (!got.has_more) return { changes, cursor, pages };
  }
}

function setPricing(partner_id: string, body: Json) {
  return request(target, "PUT", `/admin/partners/${partner_id}/pricing`, {
    headers: bearer(ADMIN_TOKEN),
    body,
  });
}

async function discoveryPackage(key: string, code: string, package_id: string): Promise<Json> {
  const answer = await request(target, "GET", `/v1/esim/destination/${code}/packages`, { key });
  assert.equal(answer.status, 200);
  return answer.body.data.find((p: Json) => p.package_id === package_id);
}

async function activePackages(): Promise<string[]> {
  const result = await pool.query<{ package_id: string }>(
    "select package_id from packages where active order by package_id",
  );
  return result.rows.map((row) => row.package_id);
}

async function changeRows(): Promise<number> {
  return (await pool.query<{ n: number }>("select count(*)::int as n from catalog_changes")).rows[0]!.n;
}

/** The default catalog as import rows: the operator's file of today. */
function catalogRows(): CatalogImportRow[] {
  return defaultCatalog().packages.map((pkg) => ({ ...pkg }));
}

function importRows(rows: CatalogImportRow[]) {
  return importCatalog(pool, rows, { currency: "USD", actor: CLI_ACTOR });
}

test("read from its start, the feed adds every offered package once, by pages, and ends with a cursor to poll from", async () => {
  const partner = await api.createPartner("Reader");
  const read = await drain(partner.api_key, null);
  assert.ok(read.pages > 1, `${read.pages} pages`);
  assert.deepEqual(new Set(read.changes.map((c) => c.kind)), new Set(["added"]));
  assert.deepEqual(read.changes.map((c) => c.package_id).sort(), await activePackages());
  assert.equal(new Set(read.changes.map((c) => c.change_id)).size, read.changes.length);
  // The package is the one discovery shows this partner.
  const fr = read.changes.find((c) => c.package_id === "fr-1gb-7d")!;
  assert.match(fr.change_id, /^chg_/);
  assert.deepEqual(fr.package, await discoveryPackage(partner.api_key, "FR", "fr-1gb-7d"));
  // At the end: nothing new, and the same position to poll from again.
  const again = await page(partner.api_key, `?since=${read.cursor}`);
  assert.deepEqual(again, { data: [], has_more: false, next_cursor: read.cursor });
  // Smaller pages list the same changes in the same order.
  const small = await drain(partner.api_key, null, 37);
  assert.deepEqual(
    small.changes.map((c) => c.change_id),
    read.changes.map((c) => c.change_id),
  );
});

test("a price list change is an `updated` change of the repriced packages for that partner only", async () => {
  const priced = await api.createPartner("Priced");
  const other = await api.createPartner("Other");
  const start = {
    priced: (await drain(priced.api_key, null)).cursor,
    other: (await drain(other.api_key, null)).cursor,
  };

  const set = await setPricing(priced.partner_id, {
    discount_percent: 0,
    overrides: [{ package_id: "fr-1gb-7d", amount_minor: 123 }],
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  const first = await drain(priced.api_key, start.priced);
  assert.deepEqual(
    first.changes.map((c) => [c.kind, c.package_id, c.package.wholesale_price.amount_minor]),
    [["updated", "fr-1gb-7d", 123]],
  );
  assert.equal(first.changes[0]!.package.list_price.amount_minor, 350);
  assert.deepEqual((await drain(other.api_key, start.other)).changes, [], "another partner sees nothing");

  // A discount reprices every package but the overridden one.
  await setPricing(priced.partner_id, {
    discount_percent: 10,
    overrides: [{ package_id: "fr-1gb-7d", amount_minor: 123 }],
  });
  const second = await drain(priced.api_key, first.cursor);
  const repriced = second.changes.map((c) => c.package_id).sort();
  assert.deepEqual(
    repriced,
    (await activePackages()).filter((id) => id !== "fr-1gb-7d"),
  );
  const fr3 = second.changes.find((c) => c.package_id === "fr-3gb-15d")!;
  assert.equal(fr3.package.wholesale_price.amount_minor, 720); // 800 less 10 %
  assert.deepEqual((await drain(other.api_key, start.other)).changes, []);

  // A refused price list (an unknown package) changes nothing, the feed included.
  const refused = await setPricing(priced.partner_id, {
    discount_percent: 50,
    overrides: [{ package_id: "no-such-package", amount_minor: 1 }],
  });
  assert.equal(refused.status, 422);
  assert.equal(refused.body.code, "package_not_found");
  assert.deepEqual((await drain(priced.api_key, second.cursor)).changes, []);

  // The same pricing again changes no price: no change.
  const rows = await changeRows();
  await setPricing(priced.partner_id, {
    discount_percent: 10,
    overrides: [{ package_id: "fr-1gb-7d", amount_minor: 123 }],
  });
  assert.equal(await changeRows(), rows);
  await setPricing(priced.partner_id, { discount_percent: 0, overrides: [] });
});

test("an import that adds, changes and removes packages is one change each, seen by every partner at its own price", async () => {
  const discounted = await api.createPartner("Discounted");
  await setPricing(discounted.partner_id, { discount_percent: 10, overrides: [] });
  const listed = await api.createPartner("List prices");
  const since = {
    discounted: (await drain(discounted.api_key, null)).cursor,
    listed: (await drain(listed.api_key, null)).cursor,
  };
  const rows = catalogRows()
    .filter((row) => row.package_id !== "fr-3gb-15d")
    .map((row) =>
      row.package_id === "fr-1gb-7d"
        ? { ...row, name: "France 1 GB 7 days (new)", wholesale_minor: 400 }
        : row,
    );
  rows.push({
    package_id: "fr-2gb-10d",
    external_package_id: "CARRIER-FR-2GB-10D",
    name: "France 2 GB 10 days",
    destination_codes: ["FR"],
    data_mb: 2048,
    validity_days: 10,
    wholesale_minor: 600,
    retail_minor: 900,
  });
  const before = await changeRows();
  const report = await importRows(rows);
  assert.deepEqual([report.imported, report.updated, report.retired], [1, 1, 1]);
  // One row per change, whatever the number of partners.
  assert.equal(await changeRows(), before + 3);

  const seen = {
    discounted: (await drain(discounted.api_key, since.discounted)).changes,
    listed: (await drain(listed.api_key, since.listed)).changes,
  };
  for (const changes of [seen.discounted, seen.listed]) {
    assert.deepEqual(changes.map((c) => [c.kind, c.package_id]).sort(), [
      ["added", "fr-2gb-10d"],
      ["removed", "fr-3gb-15d"],
      ["updated", "fr-1gb-7d"],
    ]);
    assert.equal(changes.find((c) => c.kind === "removed")!.package, null);
  }
  const price = (changes: Json[], id: string) =>
    changes.find((c) => c.package_id === id)!.package.wholesale_price.amount_minor;
  assert.equal(price(seen.listed, "fr-1gb-7d"), 400);
  assert.equal(price(seen.discounted, "fr-1gb-7d"), 360);
  assert.equal(price(seen.discounted, "fr-2gb-10d"), 540);
  assert.equal(
    seen.listed.find((c) => c.package_id === "fr-1gb-7d")!.package.name,
    "France 1 GB 7 days (new)",
  );
  // The same change is the same change_id for both partners.
  assert.deepEqual(
    seen.discounted.map((c) => c.change_id).sort(),
    seen.listed.map((c) => c.change_id).sort(),
  );

  // The same file again changes nothing; the original one restores the catalog: three more.
  await importRows(rows);
  assert.equal(await changeRows(), before + 3);
  await importRows(catalogRows());
  const restored = (await drain(listed.api_key, since.listed)).changes.slice(3);
  assert.deepEqual(restored.map((c) => [c.kind, c.package_id]).sort(), [
    ["added", "fr-3gb-15d"],
    ["removed", "fr-2gb-10d"],
    ["updated", "fr-1gb-7d"],
  ]);
  await setPricing(discounted.partner_id, { discount_percent: 0, overrides: [] });
});

test("a supplier sync's additions, price changes and removals reach every partner's feed", async () => {
  const fakes = await createTestDatabase();
  const esimgo = await startEsimGoSimulator({
    pool: fakes.pool,
    port: 0,
    host: "127.0.0.1",
    apiKey: "feed-test-key-1234",
    rate_limit_per_second: 100_000,
  });
  after(() => esimgo.close());
  const sync = (markup: string, destination_codes: string[] = []) =>
    syncSupplierCatalog(pool, {
      supplier: "esimgo",
      markup_basis_points: parseMarkupPercent(markup)!,
      destination_codes,
      currency: "USD",
      actor: CLI_ACTOR,
      list: () =>
        listEsimGoCatalogue({
          base_url: `${esimgo.url}/v2.4`,
          api_key: "feed-test-key-1234",
          timeout_ms: 5_000,
        }),
    });
  const partner = await api.createPartner("Sync watcher");
  let cursor = (await drain(partner.api_key, null)).cursor;
  const kinds = async () => {
    const read = await drain(partner.api_key, cursor);
    cursor = read.cursor;
    return read.changes;
  };

  const added = await sync("15");
  assert.ok(added.added.length > 0);
  const first = await kinds();
  assert.deepEqual(
    first.map((c) => `${c.kind} ${c.package_id}`).sort(),
    added.added.map((id) => `added ${id}`).sort(),
  );
  const fr = first.find((c) => c.package_id === "esimgo-esim_1GB_7D_FR_V2")!;
  assert.equal(fr.package.wholesale_price.amount_minor, 229);
  assert.equal("supplier" in fr.package, false, "partners never see the supplier");

  const repriced = await sync("20");
  assert.equal(repriced.changed.length, added.added.length);
  const second = await kinds();
  assert.deepEqual(new Set(second.map((c) => c.kind)), new Set(["updated"]));
  assert.equal(second.length, repriced.changed.length);
  assert.equal(
    second.find((c) => c.package_id === "esimgo-esim_1GB_7D_FR_V2")!.package.wholesale_price.amount_minor,
    239,
  );

  const narrowed = await sync("20", ["FR"]);
  assert.ok(narrowed.removed.length > 0);
  const third = await kinds();
  assert.deepEqual(
    third.map((c) => `${c.kind} ${c.package_id}`).sort(),
    narrowed.removed.map((id) => `removed ${id}`).sort(),
  );
  assert.ok(third.every((c) => c.package === null));
});

test("a `since` this API did not return is 400 invalid_request naming it, and `limit` stays within 1-100", async () => {
  const partner = await api.createPartner("Careless");
  const cursorOf = (text: string) => Buffer.from(text).toString("base64url");
  for (const since of [
    "nonsense",
    cursorOf("v1:5"), // GET /v1/events' cursor
    cursorOf("cp1:5"), // a production cursor, sent to the sandbox
    cursorOf("cs1:-1"),
    cursorOf("cs1:1234567890123456"),
    "x".repeat(201),
  ]) {
    const answer = await request(target, "GET", `/v1/catalog/changes?since=${since}`, {
      key: partner.api_key,
    });
    assert.equal(answer.status, 400, since);
    assert.equal(answer.body.code, "invalid_request");
    assert.match(JSON.stringify(answer.body), /since/);
  }
  for (const query of ["?limit=0", "?limit=101", "?limit=ten", "?cursor=abc", "?since="]) {
    const answer = await request(target, "GET", `/v1/catalog/changes${query}`, { key: partner.api_key });
    assert.equal(answer.status, 400, query);
    assert.equal(answer.body.code, "invalid_request");
  }
  const unauthenticated = await request(target, "GET", "/v1/catalog/changes");
  assert.equal(unauthenticated.status, 401);
  // A well-formed position of this environment is read from there on.
  const from = await page(partner.api_key, `?since=${cursorOf("cs1:0")}&limit=1`);
  assert.equal(from.data.length, 1);
  assert.equal(from.has_more, true);
});

test("announcing hands each (change, partner) pair out once, in bounded batches, from where the last batch stopped", async () => {
  const partners = [await api.createPartner("A"), await api.createPartner("B"), await api.createPartner("C")];
  const since = new Date(Date.now() - 1_000);
  // Everything before `since` (the seed, earlier tests) is owed to nobody.
  const subscribers = partners.map((p) => ({
    partner_id: p.partner_id,
    since: { added: since, updated: since, removed: since },
  }));
  const claimAll = async (max_events: number) => {
    const pairs: string[] = [];
    for (let calls = 0; calls < 100; calls++) {
      const claimed = await api.db.transaction().execute(async (trx) => {
        const got = await claimChangesToAnnounce(trx, async () => subscribers, max_events);
        assert.ok(got !== null);
        assert.ok(got.announcements.length <= max_events);
        await got.save();
        return got;
      });
      pairs.push(...claimed.announcements.map((a) => `${a.change.change_id} ${a.partner_id}`));
      if (!claimed.read_any) return pairs;
    }
    assert.fail("the log ends");
  };
  await claimAll(1_000); // catch up with what earlier tests changed
  const rows = catalogRows().map((row) =>
    ["de-1gb-7d", "it-1gb-7d"].includes(row.package_id)
      ? { ...row, retail_minor: Number(row.retail_minor) + 1 }
      : row,
  );
  await importRows(rows);
  const pairs = await claimAll(2);
  assert.equal(pairs.length, 6, "two changes, three partners");
  assert.equal(new Set(pairs).size, 6, "none twice");
  assert.deepEqual(await claimAll(2), [], "nothing left");
  await importRows(catalogRows());
});

test("a change committed late is never skipped: a second writer waits for the first to commit before numbering its own", async () => {
  const partner = await api.createPartner("Poller");
  const start = (await drain(partner.api_key, null)).cursor;
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let inside = () => {};
  const recorded = new Promise<void>((resolve) => {
    inside = resolve;
  });
  // A catalog writer that has recorded its change and not committed yet.
  const first = api.db.transaction().execute(async (trx) => {
    await recordCatalogChanges(trx, { added: [], updated: ["es-1gb-7d"], removed: [] });
    inside();
    await held;
  });
  await recorded;
  const second = setPricing(partner.partner_id, {
    discount_percent: 0,
    overrides: [{ package_id: "pt-1gb-7d", amount_minor: 99 }],
  });
  // The price list waits on the change log's lock: it cannot take a number, let alone commit.
  for (let probes = 0; ; probes++) {
    assert.ok(probes < 500, "the price list waits for the open writer");
    const waiting = await pool.query(
      `select 1 from pg_stat_activity
       where wait_event_type = 'Lock' and query like '%from catalog_version for no key update%'`,
    );
    if (waiting.rows.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.deepEqual((await drain(partner.api_key, start)).changes, [], "nothing is visible yet");
  release();
  await first;
  assert.equal((await second).status, 200);
  const changes = (await drain(partner.api_key, start)).changes;
  assert.deepEqual(
    changes.map((c) => c.package_id),
    ["es-1gb-7d", "pt-1gb-7d"],
    "numbered in commit order",
  );
  await setPricing(partner.partner_id, { discount_percent: 0, overrides: [] });
});

test("a supplier's top-up-only package is never offered: not in the feed, nor in a destination's count or from_price", async () => {
  const partner = await api.createPartner("Top-up watcher");
  let cursor = (await drain(partner.api_key, null)).cursor;
  const changes = async () => {
    const read = await drain(partner.api_key, cursor);
    cursor = read.cursor;
    return read.changes.map((c) => `${c.kind} ${c.package_id} ${c.package === null ? "null" : "package"}`);
  };
  const fr = async () => {
    const answer = await request(target, "GET", "/v1/esim/destinations", { key: partner.api_key });
    assert.equal(answer.status, 200);
    const row = answer.body.data.find((d: Json) => d.destination_code === "FR");
    return [row.package_count, row.from_price.amount_minor];
  };
  const before = await fr();
  // A top-up product cheaper than anything on sale: counted, it would be FR's from_price.
  const listing = (top_up_only: boolean) => async () => ({
    ok: true as const,
    packages: [
      {
        external_package_id: "fr-topup-1gb",
        name: "France top-up 1 GB",
        coverage: "country" as const,
        region: null,
        data_mb: 1024,
        validity_days: 7,
        net_minor: 1,
        retail_minor: null,
        currency: "USD",
        top_up_only,
        destination_codes: ["FR"],
      },
    ],
    dropped: [],
  });
  const sync = (top_up_only: boolean) =>
    syncSupplierCatalog(pool, {
      supplier: "airalo",
      markup_basis_points: 0,
      destination_codes: [],
      currency: "USD",
      actor: CLI_ACTOR,
      list: listing(top_up_only),
    });

  assert.deepEqual((await sync(true)).added, ["airalo-fr-topup-1gb"], "the operator's report lists it");
  assert.deepEqual(await changes(), [], "partners are not told of a package they cannot buy");
  assert.deepEqual(await fr(), before);

  // Sold as an eSIM: offered, so added; a top-up-only product again: removed for partners.
  await sync(false);
  assert.deepEqual(await changes(), ["added airalo-fr-topup-1gb package"]);
  assert.deepEqual(await fr(), [before[0] + 1, 1]);
  await sync(true);
  assert.deepEqual(await changes(), ["removed airalo-fr-topup-1gb null"]);
  assert.deepEqual(await fr(), before);
  // Retired while top-up-only: it was never offered, so nothing to remove.
  await syncSupplierCatalog(pool, {
    supplier: "airalo",
    markup_basis_points: 0,
    destination_codes: [],
    currency: "USD",
    actor: CLI_ACTOR,
    allow_removals: true,
    list: async () => ({ ok: true as const, packages: [], dropped: [] }),
  });
  assert.deepEqual(await changes(), []);
});
