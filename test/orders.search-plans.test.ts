// The support search's query plans (migration 0028): with enough rows and fresh statistics, each
// kind of `q` on orders and on eSIMs is read through the index made for it, never a sequential
// scan of orders, under the plan PostgreSQL makes for the values (a statement's first runs) and
// under the generic plan it keeps for any value once the pool has prepared the statement
// (src/db/pool.ts): the reason the prefix search is written as an explicit range.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type RawBuilder, sql } from "kysely";
import { esimPageStatement } from "../src/esims/esims.sql.ts";
import { listOrders } from "../src/orders/list-orders.ts";
import { orderPageStatement } from "../src/orders/orders.sql.ts";
import { classifySearch, MAX_ROWS_EXAMINED } from "../src/orders/search-query.ts";
import { dayWindow } from "../src/shared/day-range.ts";
import { createTestApp } from "./support/app.ts";
import { removeSeededOrders, seedOrders } from "./support/order-rows.ts";

const ROWS = 20_000;
const app = await createTestApp();
const shop = await app.createPartner("Shop");
const other = await app.createPartner("Other");
await seedOrders(app.db, { partner_id: shop.partner_id, partner_no: 1, tag: "shop", first: 1, last: ROWS });
await seedOrders(app.db, { partner_id: other.partner_id, partner_no: 2, tag: "other", first: 1, last: ROWS });
await sql`analyze orders`.execute(app.db);
await sql`analyze esims`.execute(app.db);

type PlanNode = {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Sort Key"?: string[];
  Plans?: PlanNode[];
};

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

function literal(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return `'${value.replaceAll("'", "''")}'`;
  if (value instanceof Date) return `'${value.toISOString()}'::timestamptz`;
  throw new Error(`no literal for ${typeof value}`);
}

let prepared = 0;

/** The plan's nodes, custom (the values known) or generic (planned once for any value). */
async function planOf(statement: RawBuilder<unknown>, generic: boolean): Promise<PlanNode[]> {
  const compiled = statement.compile(app.db);
  return app.db.connection().execute(async (db) => {
    let rows: Array<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>;
    if (!generic) {
      // With its values bound (the extended protocol): the plan of a statement's first runs.
      rows = (
        await db.executeQuery<(typeof rows)[number]>({
          ...compiled,
          sql: `explain (format json) ${compiled.sql}`,
        } as never)
      ).rows;
    } else {
      const name = `search_plan_${++prepared}`;
      await sql.raw(`set plan_cache_mode = force_generic_plan`).execute(db);
      await sql.raw(`prepare ${name} as ${compiled.sql}`).execute(db);
      const values = compiled.parameters.map(literal).join(", ");
      rows = (
        await sql.raw<(typeof rows)[number]>(`explain (format json) execute ${name}(${values})`).execute(db)
      ).rows;
      await sql.raw(`deallocate ${name}; reset plan_cache_mode`).execute(db);
    }
    return nodesOf(rows[0]!["QUERY PLAN"][0]!.Plan);
  });
}

function indexesOf(nodes: PlanNode[]): string[] {
  return nodes.flatMap((node) => (node["Index Name"] ? [node["Index Name"]] : []));
}

const page = { partner_id: shop.partner_id, client_reference: null, before_seq: null, limit: 21 };

/** An order of the shop whose eSIM was topped up: its ICCID, a traveller's email in capitals, prefixes of its reference and of a rare name. */
const sample = (
  await sql<{ order_id: string; iccid: string; email: string; client_reference: string; last_name: string }>`
    select order_id, iccid, email, client_reference,
           (select last_name from orders where partner_id = ${shop.partner_id} and last_name like 'Q%' limit 1) as last_name
    from orders o where partner_id = ${shop.partner_id} and type = 'esim' and status = 'completed'
      and exists (select from orders t where t.iccid = o.iccid and t.type = 'topup')
    order by seq desc offset 100 limit 1`.execute(app.db)
).rows[0]!;

const ORDER_CASES: Array<[string, string, string[]]> = [
  ["an order id", sample.order_id, ["orders_pkey"]],
  ["an ICCID", sample.iccid, ["orders_topup_iccid_idx", "esims_pkey"]],
  ["an email in other case", sample.email.toUpperCase(), ["orders_partner_email_idx"]],
  [
    "a client reference prefix",
    sample.client_reference.slice(0, -1).toLowerCase(),
    ["orders_partner_reference_lower_idx", "orders_partner_last_name_idx"],
  ],
  [
    "a rare last name prefix",
    sample.last_name.slice(0, 6).toUpperCase(),
    ["orders_partner_reference_lower_idx", "orders_partner_last_name_idx"],
  ],
];

for (const generic of [false, true]) {
  const which = generic ? "the generic plan" : "the plan for the values";
  for (const [kind, q, expected] of ORDER_CASES) {
    test(`orders by ${kind}: ${which} reads ${expected.join(" and ")}, no sequential scan`, async () => {
      const nodes = await planOf(orderPageStatement({ ...page, search: classifySearch(q) }), generic);
      assert.deepEqual(
        nodes.filter((node) => node["Node Type"] === "Seq Scan").map((node) => node["Relation Name"]),
        [],
      );
      for (const index of expected)
        assert.ok(indexesOf(nodes).includes(index), `${index} in ${indexesOf(nodes)}`);
    });
  }

  test(`orders by exact client_reference: ${which} reads the folded reference index`, async () => {
    const nodes = await planOf(
      orderPageStatement({ ...page, client_reference: sample.client_reference }),
      generic,
    );
    assert.deepEqual(indexesOf(nodes), ["orders_partner_reference_lower_idx"]);
  });

  test(`eSIMs by exact client_reference: ${which} reads the folded reference index, no sequential scan`, async () => {
    const nodes = await planOf(
      esimPageStatement({ ...page, status: null, client_reference: sample.client_reference }),
      generic,
    );
    assert.deepEqual(
      nodes.filter((node) => node["Node Type"] === "Seq Scan"),
      [],
    );
    assert.ok(indexesOf(nodes).includes("orders_partner_reference_lower_idx"), `${indexesOf(nodes)}`);
  });

  const ESIM_CASES: Array<[string, string, string[]]> = [
    ["an ICCID", sample.iccid, ["esims_pkey"]],
    ["an order id", sample.order_id, ["esims_order_id_idx"]],
    ["an email in other case", sample.email.toUpperCase(), ["orders_partner_email_idx"]],
    [
      "a rare last name prefix",
      sample.last_name.slice(0, 6).toLowerCase(),
      ["orders_partner_reference_lower_idx", "orders_partner_last_name_idx"],
    ],
  ];
  for (const [kind, q, expected] of ESIM_CASES) {
    test(`eSIMs by ${kind}: ${which} reads ${expected.join(" and ")}, no sequential scan`, async () => {
      const nodes = await planOf(
        esimPageStatement({ ...page, status: null, search: classifySearch(q) }),
        generic,
      );
      assert.deepEqual(
        nodes.filter((node) => node["Node Type"] === "Seq Scan").map((node) => node["Relation Name"]),
        [],
      );
      for (const index of expected)
        assert.ok(indexesOf(nodes).includes(index), `${index} in ${indexesOf(nodes)}`);
    });
  }
}

/** A UTC day before every seeded order (they span the last ROWS minutes). */
const BEFORE_ALL = new Date(Date.now() - (ROWS + 3 * 24 * 60) * 60_000).toISOString().slice(0, 10);

/**
 * Filters no index narrows, each of which alone would walk the partner's whole index if it found
 * few rows or none: no refunded top-up exists (seeded top-ups are every fifth order, refunds every
 * twentieth second), and no order is older than BEFORE_ALL.
 */
const UNINDEXED_CASES: Array<[string, Partial<Parameters<typeof orderPageStatement>[0]>]> = [
  ["to a day before every order", { window: dayWindow({ from: null, to: BEFORE_ALL }) }],
  ["from a day, to a day", { window: dayWindow({ from: BEFORE_ALL, to: BEFORE_ALL }) }],
  ["type topup and status refunded", { type: "topup", status: "refunded" }],
  ["a one-letter prefix", { search: classifySearch("s") }],
  ["a two-letter prefix and a status", { search: classifySearch("q1"), status: "failed" }],
];

for (const generic of [false, true]) {
  const which = generic ? "the generic plan" : "the plan for the values";
  for (const [kind, filters] of UNINDEXED_CASES) {
    test(`orders by ${kind}: ${which} reads at most ${MAX_ROWS_EXAMINED} rows of the partner's newest-first index`, async () => {
      const nodes = await planOf(orderPageStatement({ ...page, ...filters }), generic);
      assert.deepEqual(
        nodes.map((node) => node["Node Type"]),
        ["Limit", "Subquery Scan", "Limit", "WindowAgg", "Index Scan"],
      );
      assert.deepEqual(indexesOf(nodes), ["orders_partner_page_idx"]);
    });
  }
  const ESIM_UNINDEXED: Array<[string, Partial<Parameters<typeof esimPageStatement>[0]>, string]> = [
    [
      "to a day before every eSIM",
      { window: dayWindow({ from: null, to: BEFORE_ALL }) },
      "esims_partner_page_idx",
    ],
    [
      "a status and a day",
      { status: "installed", window: dayWindow({ from: BEFORE_ALL, to: BEFORE_ALL }) },
      "esims_partner_status_idx",
    ],
    ["a one-letter prefix", { search: classifySearch("M") }, "esims_partner_page_idx"],
  ];
  for (const [kind, filters, index] of ESIM_UNINDEXED) {
    test(`eSIMs by ${kind}: ${which} reads at most ${MAX_ROWS_EXAMINED} rows of ${index}, no sequential scan`, async () => {
      const nodes = await planOf(esimPageStatement({ ...page, status: null, ...filters }), generic);
      assert.deepEqual(
        nodes.filter((node) => node["Node Type"] === "Seq Scan").map((node) => node["Relation Name"]),
        [],
      );
      // No sort of the rows examined: the only one a plan may hold is of each eSIM's few bundles
      // (json_agg), which PostgreSQL 15 plans without one.
      assert.deepEqual(
        nodes.flatMap((node) =>
          node["Node Type"] === "Sort" && JSON.stringify(node["Sort Key"]) !== '["b.\\"position\\""]'
            ? [node["Sort Key"]]
            : [],
        ),
        [],
      );
      const scan = nodes.findIndex((node) => node["Index Name"] === index);
      assert.ok(scan > 0, `${index} in ${indexesOf(nodes)}`);
      assert.equal(nodes[scan - 1]!["Node Type"], "WindowAgg");
      assert.equal(nodes[scan - 2]!["Node Type"], "Limit");
    });
  }
}

/** What the statement's scans read when run: rows out of each index scan. */
async function rowsRead(statement: RawBuilder<unknown>): Promise<Record<string, number>> {
  const compiled = statement.compile(app.db);
  const result = await app.db.executeQuery<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>({
    ...compiled,
    sql: `explain (analyze, format json) ${compiled.sql}`,
  } as never);
  const nodes = nodesOf(result.rows[0]!["QUERY PLAN"][0]!.Plan) as Array<
    PlanNode & { "Actual Rows": number }
  >;
  return Object.fromEntries(
    nodes.flatMap((node) => (node["Index Name"] ? [[node["Index Name"], node["Actual Rows"]]] : [])),
  );
}

test(`a page that finds nothing examines ${MAX_ROWS_EXAMINED} orders, comes back empty with a cursor, and the pages end`, async () => {
  assert.ok(ROWS > MAX_ROWS_EXAMINED);
  // The window function above the scan reads one row ahead on PostgreSQL 15 and 14.
  const read = await rowsRead(orderPageStatement({ ...page, type: "topup", status: "refunded" }));
  assert.deepEqual(Object.keys(read), ["orders_partner_page_idx"]);
  assert.ok(
    [MAX_ROWS_EXAMINED, MAX_ROWS_EXAMINED + 1].includes(read.orders_partner_page_idx!),
    JSON.stringify(read),
  );
  for (const filters of [{ type: "topup" as const, status: "refunded" as const }, { to: BEFORE_ALL }]) {
    const pages = [];
    let cursor: string | null = null;
    do {
      const answer: Awaited<ReturnType<typeof listOrders>> = await listOrders(app.db, {
        partner_id: shop.partner_id,
        client_reference: null,
        ...filters,
        limit: 20,
        cursor,
      });
      pages.push(answer.data.length);
      cursor = answer.next_cursor;
      assert.equal(answer.has_more, cursor !== null);
    } while (cursor !== null && pages.length < 10);
    assert.deepEqual(
      pages,
      [0, 0, 0],
      `${JSON.stringify(filters)}: two capped pages, then the last ${ROWS - 2 * MAX_ROWS_EXAMINED} rows`,
    );
  }
});

test("a one-letter prefix pages newest first through the rows examined, each order once, as the unfiltered list", async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 3; pages++) {
    const answer: Awaited<ReturnType<typeof listOrders>> = await listOrders(app.db, {
      partner_id: shop.partner_id,
      client_reference: null,
      q: "s",
      limit: 100,
      cursor,
    });
    assert.equal(answer.data.length, 100, "a common letter fills its pages");
    seen.push(...answer.data.map((order) => order.orderID));
    cursor = answer.next_cursor;
  }
  const expected = await sql<{ order_id: string }>`
    select order_id from orders
    where partner_id = ${shop.partner_id} and (lower(last_name) like 's%' or lower(client_reference) like 's%')
    order by seq desc limit 300`.execute(app.db);
  assert.deepEqual(
    seen,
    expected.rows.map((row) => row.order_id),
  );
});

test("the searches' answers: the ICCID finds the eSIM's order and its top-up, the email its traveller's orders", async () => {
  const run = async (q: string) =>
    (await orderPageStatement({ ...page, search: classifySearch(q) }).execute(app.db)).rows.map(
      (row) => row.order_id,
    );
  assert.equal((await run(sample.iccid)).length, 2, "the order that bought it and the top-up after it");
  const by_email = await run(sample.email.toUpperCase());
  assert.ok(by_email.includes(sample.order_id));
  assert.ok(by_email.length >= 1 && by_email.length <= 2, "travellers repeat every two orders");
});

test("removeSeededOrders (the bench's clean-up) removes every seeded row and no other", async () => {
  const kept = await app.createPartner("Kept");
  const cart_key = `cart_${kept.partner_id}`;
  await sql`insert into carts (cart_key, partner_id, package_id, external_package_id, validity_days, total_minor, currency, expires_at)
    values (${cart_key}, ${kept.partner_id}, 'fr-1gb-7d', 'CARRIER-FR-1GB-7D', 7, 450, 'USD', now() + interval '1 hour')`.execute(
    app.db,
  );
  assert.equal(await removeSeededOrders(app.db), 2 * ROWS);
  const left = await sql<{ orders: number; esims: number; carts: number }>`
    select (select count(*)::int from orders) as orders, (select count(*)::int from esims) as esims,
           (select count(*)::int from carts) as carts`.execute(app.db);
  assert.deepEqual(left.rows[0], { orders: 0, esims: 0, carts: 1 });
});
