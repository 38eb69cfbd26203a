// POST /v1/orders/cart: reserving a package, and every way of getting it wrong.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createTestApp } from "./support/app.ts";

const app = await createTestApp();
const partner = await app.createPartner();

function day(offset: number): string {
  const date = new Date();
  date.setUTCDate(date.getUTCDate() + offset);
  return date.toISOString().slice(0, 10);
}

async function cart(payload: unknown) {
  const response = await app.app.inject({
    method: "POST",
    url: "/v1/orders/cart",
    headers: app.auth(partner.api_key),
    payload: payload as object,
  });
  return { status: response.statusCode, body: response.json() };
}

test("a cart reserves the package at today's wholesale price for 30 minutes, start date optional", async () => {
  const packages = await app.app.inject({
    url: "/v1/esim/destination/FR/packages",
    headers: app.auth(partner.api_key),
  });
  const pkg = packages.json().data.find((p: any) => p.package_id === "fr-3gb-15d");
  for (const start_date of [undefined, null, day(0), day(180)]) {
    const created = await cart({
      package_id: "fr-3gb-15d",
      ...(start_date === undefined ? {} : { start_date }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.total, pkg.wholesale_price);
    assert.equal(created.body.start_date, start_date ?? null);
    const ttl = Date.parse(created.body.expires_at) - Date.now();
    assert.ok(ttl > 29 * 60_000 && ttl <= 30 * 60_000 + 1_000);
  }
  const keys = await sql<{
    cart_key: string;
  }>`select cart_key from carts where partner_id = ${partner.partner_id}`.execute(app.db);
  assert.equal(new Set(keys.rows.map((r) => r.cart_key)).size, 4);
});

test("start dates in the past or beyond 180 days are 422 invalid_start_date", async () => {
  for (const start_date of [day(-1), day(181), "2020-01-01"]) {
    const refused = await cart({ package_id: "fr-1gb-7d", start_date });
    assert.equal(refused.status, 422, start_date);
    assert.equal(refused.body.code, "invalid_start_date");
  }
});

test("an unknown package is 404 package_not_found; malformed bodies are 400 invalid_request", async () => {
  const unknown = await cart({ package_id: "zz-1gb-1d" });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.code, "package_not_found");
  for (const payload of [
    {},
    { package_id: 12 },
    { package_id: "fr-1gb-7d", start_date: "tomorrow" },
    { package_id: "fr-1gb-7d", start_date: "2026-02-30" },
    { package_id: "fr-1gb-7d", extra: 1 },
    [],
  ]) {
    const refused = await cart(payload);
    assert.equal(refused.status, 400, JSON.stringify(payload));
    assert.equal(refused.body.code, "invalid_request");
  }
  const count = await sql<{
    n: number;
  }>`select count(*)::int as n from carts where package_id = 'zz-1gb-1d'`.execute(app.db);
  assert.equal(count.rows[0]!.n, 0);
});

test("a retired package cannot be put in a new cart, but an existing cart keeps its price", async () => {
  const existing = await cart({ package_id: "de-5gb-30d" });
  await sql`update packages set active = false, wholesale_minor = wholesale_minor * 2 where package_id = 'de-5gb-30d'`.execute(
    app.db,
  );
  const refused = await cart({ package_id: "de-5gb-30d" });
  assert.equal(refused.status, 404);
  const row = await sql<{
    total_minor: number;
  }>`select total_minor from carts where cart_key = ${existing.body.cart_key}`.execute(app.db);
  assert.equal(row.rows[0]!.total_minor, existing.body.total.amount_minor);
  await sql`update packages set active = true, wholesale_minor = wholesale_minor / 2 where package_id = 'de-5gb-30d'`.execute(
    app.db,
  );
});

test("lapsed carts are purged a day after expiry; carts with an order and fresh ones stay", async () => {
  const { purgeExpiredCarts } = await import("../src/carts/purge-expired-carts.ts");
  const { cartHasOrder } = await import("../src/orders/cart-has-order.ts");
  const lapsed = await cart({ package_id: "fr-1gb-7d" });
  const fresh = await cart({ package_id: "fr-1gb-7d" });
  await sql`update carts set expires_at = now() - interval '2 days' where cart_key = ${lapsed.body.cart_key}`.execute(
    app.db,
  );
  assert.ok((await purgeExpiredCarts(app.db, cartHasOrder)) >= 1);
  const left = await sql<{ cart_key: string }>`
    select cart_key from carts where cart_key in (${lapsed.body.cart_key}, ${fresh.body.cart_key})`.execute(
    app.db,
  );
  assert.deepEqual(
    left.rows.map((r) => r.cart_key),
    [fresh.body.cart_key],
  );
});

test("a cart purged after expiry answers 410 cart_expired, not 404; a never-issued key stays 404", async () => {
  const { purgeExpiredCarts } = await import("../src/carts/purge-expired-carts.ts");
  const { cartHasOrder } = await import("../src/orders/cart-has-order.ts");
  const lapsed = await cart({ package_id: "fr-1gb-7d" });
  await sql`update carts set expires_at = now() - interval '2 days' where cart_key = ${lapsed.body.cart_key}`.execute(
    app.db,
  );
  assert.ok((await purgeExpiredCarts(app.db, cartHasOrder)) >= 1);
  const gone = await sql<{ n: number }>`
    select count(*)::int as n from carts where cart_key = ${lapsed.body.cart_key}`.execute(app.db);
  assert.equal(gone.rows[0]!.n, 0, "the lapsed cart itself is purged");
  const other = await app.createPartner("Other Travel", 10_000);
  const submit = (cart_key: string, api_key: string) =>
    app.app.inject({
      method: "POST",
      url: "/v1/orders/submit",
      headers: app.auth(api_key),
      payload: { cart_key, email: "ana@example.com", phone: "+14155550123", first_name: "A", last_name: "L" },
    });

  const expired = await submit(lapsed.body.cart_key, partner.api_key);
  assert.equal(expired.statusCode, 410, expired.body);
  assert.equal(expired.json().code, "cart_expired");
  for (const [cart_key, api_key] of [
    ["cart_neverIssued0000000000", partner.api_key],
    [lapsed.body.cart_key, other.api_key],
  ] as const) {
    const unknown = await submit(cart_key, api_key);
    assert.equal(unknown.statusCode, 404, `${cart_key}: ${unknown.body}`);
    assert.equal(unknown.json().code, "cart_not_found");
  }
});
