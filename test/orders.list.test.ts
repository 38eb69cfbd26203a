// GET /v1/profile/orders and GET /v1/orders/{orderID}: newest first, filtered, paginated with a
// cursor that stays stable as new orders arrive, and blind to other partners' orders.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { newId } from "../src/shared/ids.ts";
import { createTestApp } from "./support/app.ts";

const app = await createTestApp();

/** Inserts completed orders directly: the listing is under test here, not the purchase. */
async function seedOrders(
  partner_id: string,
  count: number,
  reference: (i: number) => string | null,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const order_id = newId("order");
    ids.push(order_id);
    await sql`
      insert into orders (order_id, partner_id, type, status, package_id, external_package_id, validity_days,
                          total_minor, currency, client_reference, email, phone, first_name, last_name, iccid,
                          resolved_at)
      values (${order_id}, ${partner_id}, 'topup', 'completed', 'fr-1gb-7d', 'CARRIER-FR-1GB-7D', 7, 450, 'USD',
              ${reference(i)}, 'a@example.com', '+14155550123', 'A', 'B', '8901260000000000001', now())`.execute(
      app.db,
    );
  }
  return ids;
}

async function list(api_key: string, query: string) {
  const response = await app.app.inject({ url: `/v1/profile/orders${query}`, headers: app.auth(api_key) });
  return { status: response.statusCode, body: response.json() };
}

test("250 orders page newest first, filtered by client_reference, stable while new orders arrive", async () => {
  const partner = await app.createPartner();
  const ids = await seedOrders(partner.partner_id, 250, (i) => (i % 5 === 0 ? "group-a" : `solo-${i}`));
  const expected = ids.filter((_, i) => i % 5 === 0).reverse();
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await list(
      partner.api_key,
      `?client_reference=group-a&limit=7${cursor ? `&cursor=${cursor}` : ""}`,
    );
    assert.equal(page.status, 200);
    seen.push(...page.body.data.map((o: any) => o.orderID));
    for (const order of page.body.data) assert.equal(order.client_reference, "group-a");
    cursor = page.body.next_cursor;
    assert.equal(page.body.has_more, cursor !== null);
    if (pages === 1) await seedOrders(partner.partner_id, 3, () => "group-a"); // arrive between pages
    pages++;
  } while (cursor);
  assert.deepEqual(seen, expected, "every filtered order once, newest first, none skipped or repeated");
  assert.equal(pages, Math.ceil(50 / 7));

  const all: string[] = [];
  cursor = null;
  do {
    const page = await list(partner.api_key, `?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    all.push(...page.body.data.map((o: any) => o.orderID));
    cursor = page.body.next_cursor;
  } while (cursor);
  assert.equal(all.length, 253);
  assert.equal(new Set(all).size, 253);
});

test("limit defaults to 20 and must be 1-100; a forged cursor is 400", async () => {
  const partner = await app.createPartner();
  await seedOrders(partner.partner_id, 25, () => null);
  assert.equal((await list(partner.api_key, "")).body.data.length, 20);
  for (const query of [
    "?limit=0",
    "?limit=101",
    "?limit=abc",
    "?limit=1&limit=2",
    "?cursor=bm9wZQ",
    "?unknown=1",
  ]) {
    const answer = await list(partner.api_key, query);
    assert.equal(answer.status, 400, query);
    assert.equal(answer.body.code, "invalid_request");
  }
});

test("another partner's orders are invisible: not listed, and 404 order_not_found like an unknown one", async () => {
  const owner = await app.createPartner();
  const stranger = await app.createPartner();
  const [order_id] = await seedOrders(owner.partner_id, 1, () => "shared-ref");
  assert.equal((await list(stranger.api_key, "?client_reference=shared-ref")).body.data.length, 0);
  const foreign = await app.app.inject({
    url: `/v1/orders/${order_id}`,
    headers: app.auth(stranger.api_key),
  });
  const unknown = await app.app.inject({
    url: "/v1/orders/ord_unknown000000000000000",
    headers: app.auth(stranger.api_key),
  });
  assert.equal(foreign.statusCode, 404);
  assert.equal(foreign.json().code, "order_not_found");
  assert.equal(foreign.json().detail, unknown.json().detail);
  const own = await app.app.inject({ url: `/v1/orders/${order_id}`, headers: app.auth(owner.api_key) });
  assert.equal(own.statusCode, 200);
  assert.equal(own.json().orderID, order_id);
});
