// The support search: GET /v1/profile/orders and /v1/esims with `q`, `status`, `type`, `from` and
// `to`, and the operator's GET /admin/partners/{partner_id}/orders. Each kind of `q` finds exactly
// its orders, case-insensitively where the contract says so, never another partner's; filters
// combine and keep pages stable; a bad value is 400 invalid_request naming its field.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { newId } from "../src/shared/ids.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { seedOrders } from "./support/order-rows.ts";

const app = await createTestApp();
const shop = await app.createPartner("Shop");
const rival = await app.createPartner("Rival");
const ROWS = 200;
await seedOrders(app.db, { partner_id: shop.partner_id, partner_no: 1, tag: "shop", first: 1, last: ROWS });
await seedOrders(app.db, { partner_id: rival.partner_id, partner_no: 2, tag: "rival", first: 1, last: ROWS });

type Row = {
  order_id: string;
  type: string;
  status: string;
  email: string;
  last_name: string;
  client_reference: string | null;
  iccid: string | null;
};
/** Every order of the shop as stored, newest first: what each search is checked against. */
const shopRows = async () =>
  (
    await sql<Row>`select order_id, type, status, email, last_name, client_reference, iccid from orders
      where partner_id = ${shop.partner_id} order by seq desc`.execute(app.db)
  ).rows;

/** A top-up of the given partner with these traveller details, created at `created_at`. */
async function addOrder(
  partner_id: string,
  fields: { email?: string; last_name?: string; client_reference?: string | null; created_at?: string },
): Promise<string> {
  const order_id = newId("order");
  await sql`
    insert into orders (order_id, partner_id, type, status, package_id, external_package_id, validity_days,
                        total_minor, currency, client_reference, email, phone, first_name, last_name, iccid,
                        created_at, resolved_at)
    values (${order_id}, ${partner_id}, 'topup', 'completed', 'fr-1gb-7d', 'CARRIER-FR-1GB-7D', 7, 450, 'USD',
            ${fields.client_reference ?? null}, ${fields.email ?? "someone@example.com"}, '+14155550123', 'Sam',
            ${fields.last_name ?? "Doe"}, '89440990000000000018', ${fields.created_at ?? new Date().toISOString()}::timestamptz,
            ${fields.created_at ?? new Date().toISOString()}::timestamptz + interval '1 second')`.execute(
    app.db,
  );
  return order_id;
}

async function get(path: string, headers: Record<string, string>) {
  const response = await app.app.inject({ url: path, headers });
  return { status: response.statusCode, body: response.json() };
}

/** Every page of a list, following next_cursor with the same filters. */
async function allIds(path: string, headers: Record<string, string>, key = "orderID"): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const page = await get(`${path}${separator}limit=7${cursor ? `&cursor=${cursor}` : ""}`, headers);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    ids.push(...page.body.data.map((row: Record<string, string>) => row[key]));
    cursor = page.body.next_cursor;
    assert.ok(++pages <= 100, "pages end");
  } while (cursor);
  return ids;
}

const shopKey = app.auth(shop.api_key);
const orders = (query: string) => allIds(`/v1/profile/orders?${query}`, shopKey);

test("a traveller's email in other case finds exactly that traveller's orders, newest first", async () => {
  const rows = await shopRows();
  const email = rows[10]!.email;
  const expected = rows.filter((row) => row.email === email).map((row) => row.order_id);
  assert.ok(expected.length >= 1);
  assert.deepEqual(await orders(`q=${encodeURIComponent(email.toUpperCase())}`), expected);
  assert.deepEqual(
    await orders(`q=${encodeURIComponent(`  ${email}  `)}`),
    expected,
    "spaces around do not count",
  );
  // Whole address only: a part of it is no email search (it holds @ but matches no address).
  assert.deepEqual(await orders(`q=${encodeURIComponent(email.slice(1))}`), []);
});

test("an order id finds that order; an ICCID the order that bought the eSIM and its top-up", async () => {
  const rows = await shopRows();
  assert.deepEqual(await orders(`q=${rows[3]!.order_id}`), [rows[3]!.order_id]);
  const topup = rows.find((row) => row.type === "topup")!;
  const expected = rows.filter((row) => row.iccid === topup.iccid).map((row) => row.order_id);
  assert.equal(expected.length, 2);
  assert.deepEqual(await orders(`q=${topup.iccid}`), expected);
});

test("the start of a client reference or a last name, case-insensitive, over several pages", async () => {
  const rows = await shopRows();
  // SHOP-00000100 .. SHOP-00000199: a hundred orders, fifteen pages of seven.
  const by_reference = rows
    .filter((row) => row.client_reference?.startsWith("SHOP-000001"))
    .map((r) => r.order_id);
  assert.equal(by_reference.length, 100);
  assert.deepEqual(await orders("q=shop-000001"), by_reference);
  const by_name = rows
    .filter((row) => row.last_name.toLowerCase().startsWith("sch"))
    .map((row) => row.order_id);
  assert.ok(by_name.length > 0);
  assert.deepEqual(await orders("q=sCH"), by_name);
});

test("`%`, `_` and `\\` in a prefix are plain characters; non-ASCII names compare case-insensitively", async () => {
  const literal = await addOrder(shop.partner_id, { client_reference: "50%_OFF\\1" });
  await addOrder(shop.partner_id, { client_reference: "50xxOFF\\1" });
  const umlaut = await addOrder(shop.partner_id, { last_name: "Ørsted-Müller" });
  assert.deepEqual(await orders(`q=${encodeURIComponent("50%_off\\")}`), [literal]);
  assert.deepEqual(await orders(`q=${encodeURIComponent("ØRSTED-MÜ")}`), [umlaut]);
});

test("another partner's orders are never found, whatever the kind of q", async () => {
  const theirs = (
    await sql<Row>`select order_id, email, iccid, client_reference from orders where partner_id = ${rival.partner_id}
      and iccid is not null order by seq desc limit 1`.execute(app.db)
  ).rows[0]!;
  for (const q of [
    theirs.order_id,
    theirs.iccid!,
    theirs.email.toUpperCase(),
    theirs.client_reference!,
    "rival-",
  ]) {
    assert.deepEqual(await orders(`q=${encodeURIComponent(q)}`), [], q);
  }
  // The same address at both partners: each sees its own order only.
  const mine = await addOrder(shop.partner_id, { email: "twice@example.com" });
  await addOrder(rival.partner_id, { email: "twice@example.com" });
  assert.deepEqual(await orders("q=TWICE%40example.com"), [mine]);
});

test("status (refunded included) and type filter, alone and with q", async () => {
  const rows = await shopRows();
  const refunded = rows.filter((row) => row.status === "refunded").map((row) => row.order_id);
  assert.ok(refunded.length >= 5);
  assert.deepEqual(await orders("status=refunded"), refunded);
  const topups = rows.filter((row) => row.type === "topup").map((row) => row.order_id);
  assert.deepEqual(await orders("type=topup"), topups);
  const failed_esims = rows
    .filter((row) => row.type === "esim" && row.status === "failed")
    .map((r) => r.order_id);
  assert.deepEqual(await orders("type=esim&status=failed"), failed_esims);
  const refunded_by_reference = rows
    .filter((row) => row.status === "refunded" && row.client_reference?.startsWith("SHOP-000001"))
    .map((row) => row.order_id);
  assert.deepEqual(await orders("q=Shop-000001&status=refunded"), refunded_by_reference);
});

test("from and to are UTC days, both included", async () => {
  const partner = await app.createPartner("Dates");
  const key = app.auth(partner.api_key);
  const before = await addOrder(partner.partner_id, { created_at: "2026-03-01T23:59:59.999Z" });
  const first = await addOrder(partner.partner_id, { created_at: "2026-03-02T00:00:00Z" });
  const last = await addOrder(partner.partner_id, { created_at: "2026-03-03T23:59:59.999Z" });
  const after = await addOrder(partner.partner_id, { created_at: "2026-03-04T00:00:00Z" });
  const list = (query: string) => allIds(`/v1/profile/orders?${query}`, key);
  assert.deepEqual(await list("from=2026-03-02&to=2026-03-03"), [last, first]);
  assert.deepEqual(await list("from=2026-03-02&to=2026-03-02"), [first]);
  assert.deepEqual(await list("from=2026-03-04"), [after]);
  assert.deepEqual(await list("to=2026-03-01"), [before]);
});

test("bad values are 400 invalid_request naming the field, and nothing else", async () => {
  const cases: Array<[string, string]> = [
    ["q=", "q"],
    [`q=${"a".repeat(255)}`, "q"],
    ["q=%20%20", "q"],
    ["q=a%01b", "q"],
    ["status=lost", "status"],
    ["type=bundle", "type"],
    ["from=2026-02-30", "from"],
    ["to=yesterday", "to"],
    ["from=2026-03-02&to=2026-03-01", "from"],
  ];
  for (const [query, field] of cases) {
    for (const path of ["/v1/profile/orders", "/v1/esims"]) {
      if (path === "/v1/esims" && (field === "type" || field === "status")) continue;
      const answer = await get(`${path}?${query}`, shopKey);
      assert.equal(answer.status, 400, `${path}?${query}`);
      assert.equal(answer.body.code, "invalid_request");
      assert.ok(
        answer.body.errors.some((error: { field: string }) =>
          error.field.replace(/^query\.?/, "").includes(field),
        ),
        `${path}?${query}: ${JSON.stringify(answer.body.errors)}`,
      );
    }
  }
});

test("eSIMs: by ICCID, order id, email in other case, name prefix and dates; never another partner's", async () => {
  const esims = (query: string) => allIds(`/v1/esims?${query}`, shopKey, "iccid");
  const mine = (
    await sql<{ iccid: string; order_id: string; email: string; last_name: string; seq: number }>`
      select e.iccid, e.order_id, o.email, o.last_name, e.seq from esims e join orders o using (order_id)
      where e.partner_id = ${shop.partner_id} order by e.seq desc`.execute(app.db)
  ).rows;
  const one = mine[5]!;
  assert.deepEqual(await esims(`q=${one.iccid}`), [one.iccid]);
  assert.deepEqual(await esims(`q=${one.order_id}`), [one.iccid]);
  const by_email = mine.filter((row) => row.email === one.email).map((row) => row.iccid);
  assert.deepEqual(await esims(`q=${encodeURIComponent(one.email.toUpperCase())}`), by_email);
  const by_name = mine.filter((row) => row.last_name.startsWith("Tak")).map((row) => row.iccid);
  assert.ok(by_name.length > 0);
  assert.deepEqual(await esims("q=TAK"), by_name);
  const today = new Date().toISOString().slice(0, 10);
  assert.deepEqual(await esims("to=2020-01-01"), []);
  assert.ok(
    (await esims(`from=${today}&to=${today}`)).every((iccid) => mine.some((row) => row.iccid === iccid)),
  );
  const theirs = (
    await sql<{
      iccid: string;
    }>`select iccid from esims where partner_id = ${rival.partner_id} limit 1`.execute(app.db)
  ).rows[0]!;
  assert.deepEqual(await esims(`q=${theirs.iccid}`), []);
});

test("the operator's GET /admin/partners/{partner_id}/orders: the partner's list and filters; unknown partner 404", async () => {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const rows = await shopRows();
  const email = rows[20]!.email;
  const expected = rows.filter((row) => row.email === email).map((row) => row.order_id);
  assert.deepEqual(
    await allIds(
      `/admin/partners/${shop.partner_id}/orders?q=${encodeURIComponent(email.toUpperCase())}`,
      admin,
    ),
    expected,
  );
  const refunded = rows.filter((row) => row.status === "refunded").map((row) => row.order_id);
  assert.deepEqual(
    await allIds(`/admin/partners/${shop.partner_id}/orders?status=refunded`, admin),
    refunded,
  );
  // The same page as the partner's own, cursor included.
  const partner_page = await get("/v1/profile/orders?limit=5&type=topup", shopKey);
  const operator_page = await get(`/admin/partners/${shop.partner_id}/orders?limit=5&type=topup`, admin);
  assert.deepEqual(operator_page, partner_page);
  const unknown = await get("/admin/partners/ptr_unknown0000000000000000/orders", admin);
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.code, "partner_not_found");
  const bad = await get(`/admin/partners/${shop.partner_id}/orders?from=2026-03-02&to=2026-03-01`, admin);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.code, "invalid_request");
});

test("a searched list's pages stay stable while matching orders arrive between them", async () => {
  const partner = await app.createPartner("Arrivals");
  const key = app.auth(partner.api_key);
  const older: string[] = [];
  for (let n = 0; n < 5; n++)
    older.unshift(await addOrder(partner.partner_id, { email: "Same@Example.com" }));
  const first = await get("/v1/profile/orders?q=same%40example.com&limit=2", key);
  assert.deepEqual(
    first.body.data.map((order: { orderID: string }) => order.orderID),
    older.slice(0, 2),
  );
  await addOrder(partner.partner_id, { email: "same@example.com" }); // newer: on no page already walked
  const seen = [...first.body.data.map((order: { orderID: string }) => order.orderID)];
  let cursor: string | null = first.body.next_cursor;
  while (cursor) {
    const page = await get(`/v1/profile/orders?q=same%40example.com&limit=2&cursor=${cursor}`, key);
    seen.push(...page.body.data.map((order: { orderID: string }) => order.orderID));
    cursor = page.body.next_cursor;
  }
  assert.deepEqual(seen, older, "each older order once, in order, none skipped or repeated");
});
