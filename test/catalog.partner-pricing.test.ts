// Prices per partner (issue 13): a partner's discount and overrides change its wholesale prices
// everywhere (discovery, top-up rows, new carts) and no one else's; carts keep their price.
import assert from "node:assert/strict";
import { test } from "node:test";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { balance, createCart, purchase, submitCart, topUpBody } from "./support/fixtures.ts";
import { bearer, type Json, request } from "./support/http.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const api = await createTestApp({ carrier_timeout_ms: 5_000 }, { database, carrier });
const target = api.app;
const admin = bearer(ADMIN_TOKEN);

function setPricing(partner_id: string, body: Json) {
  return request(target, "PUT", `/admin/partners/${partner_id}/pricing`, { headers: admin, body });
}

async function discovery(key: string): Promise<{ prices: Map<string, Json>; etag: string }> {
  const answer = await request(target, "GET", "/v1/esim/destination/FR/packages", { key });
  assert.equal(answer.status, 200);
  return {
    prices: new Map(answer.body.data.map((p: Json) => [p.package_id, p])),
    etag: String(answer.headers.get("etag")),
  };
}

/** floor((list * (100 - d) + 50) / 100): half up, never banker's rounding. */
const halfUp = (list: number, d: number) => Math.floor((list * (100 - d) + 50) / 100);

test("a discount and overrides change one partner's prices only, rounded half up, overrides first", async () => {
  const priced = await api.createPartner("Discounted", 100_000);
  const other = await api.createPartner("List price", 100_000);
  const before = await discovery(other.api_key);
  const fr1 = before.prices.get("fr-1gb-7d")!;
  assert.equal(fr1.list_price.amount_minor, fr1.wholesale_price.amount_minor, "no pricing: list prices");
  const list = fr1.list_price.amount_minor as number; // 350: 1% off is 346.5
  assert.equal((list * 99) % 100, 50, "the case where half up and half even differ");
  const set = await setPricing(priced.partner_id, {
    discount_percent: 1,
    overrides: [{ package_id: "fr-3gb-15d", amount_minor: 123 }],
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.deepEqual(set.body, {
    discount_percent: 1,
    overrides: [{ package_id: "fr-3gb-15d", amount_minor: 123 }],
  });
  const got = await request(target, "GET", `/admin/partners/${priced.partner_id}/pricing`, {
    headers: admin,
  });
  assert.deepEqual(got.body, set.body);

  const mine = await discovery(priced.api_key);
  assert.equal(mine.prices.get("fr-1gb-7d")!.wholesale_price.amount_minor, halfUp(list, 1));
  assert.equal(mine.prices.get("fr-1gb-7d")!.wholesale_price.amount_minor, 347);
  assert.equal(mine.prices.get("fr-1gb-7d")!.list_price.amount_minor, list);
  assert.equal(mine.prices.get("fr-3gb-15d")!.wholesale_price.amount_minor, 123, "the override wins");
  for (const [id, pkg] of mine.prices) {
    if (id === "fr-3gb-15d") continue;
    assert.equal(pkg.wholesale_price.amount_minor, halfUp(pkg.list_price.amount_minor, 1), id);
  }
  const theirs = await discovery(other.api_key);
  assert.deepEqual(theirs, before, "another partner sees list prices, the same bytes");

  // Identical pricing shares the cached body: the same bytes, the same ETag.
  const twin = await api.createPartner("Twin", 0);
  await setPricing(twin.partner_id, {
    discount_percent: 1,
    overrides: [{ package_id: "fr-3gb-15d", amount_minor: 123 }],
  });
  assert.equal((await discovery(twin.api_key)).etag, (await discovery(priced.api_key)).etag);

  // A cart and a top-up row at the partner's price; the wallet is debited exactly that.
  const bought = await purchase(target, priced.api_key);
  assert.equal(await balance(target, priced.api_key), 100_000 - 347);
  const iccid = bought.purchases[0].iccid;
  const offer = await request(target, "GET", `/v1/orders/available-topups/${iccid}`, { key: priced.api_key });
  const row = offer.body.data.find((r: Json) => r.package_id === "fr-3gb-15d");
  assert.deepEqual(
    [row.wholesale_price.amount_minor, row.list_price.amount_minor],
    [123, mine.prices.get("fr-3gb-15d")!.list_price.amount_minor],
  );
  // The submits read a package and its price terms in one statement: the override for its own
  // package only, the discount for the others, as the lists above show them.
  const topped = await request(target, "POST", "/v1/orders/submit-topup", {
    key: priced.api_key,
    body: topUpBody(iccid, row),
  });
  assert.equal(topped.status, 200, JSON.stringify(topped.body));
  assert.equal(topped.body.total.amount_minor, 123);
  assert.equal(await balance(target, priced.api_key), 100_000 - 347 - 123);
  const discounted = offer.body.data.find((r: Json) => r.package_id !== "fr-3gb-15d");
  const topped_too = await request(target, "POST", "/v1/orders/submit-topup", {
    key: priced.api_key,
    body: topUpBody(iccid, discounted),
  });
  assert.equal(topped_too.status, 200, JSON.stringify(topped_too.body));
  assert.equal(topped_too.body.total.amount_minor, halfUp(discounted.list_price.amount_minor, 1));
  assert.equal((await createCart(target, priced.api_key, "fr-3gb-15d")).total.amount_minor, 123);
  assert.equal(
    (await createCart(target, other.api_key, "fr-3gb-15d")).total.amount_minor,
    row.list_price.amount_minor,
  );
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
});

test("a cart made before a price change is charged its own price; a new cart the new one", async () => {
  const partner = await api.createPartner("Repriced", 100_000);
  const old_cart = await createCart(target, partner.api_key, "fr-1gb-7d");
  assert.equal(old_cart.total.amount_minor, 350);
  await setPricing(partner.partner_id, { discount_percent: 50, overrides: [] });
  const new_cart = await createCart(target, partner.api_key, "fr-1gb-7d");
  assert.equal(new_cart.total.amount_minor, 175);
  const paid_old = await submitCart(target, partner.api_key, old_cart.cart_key);
  assert.equal(paid_old.status, 200, JSON.stringify(paid_old.body));
  assert.equal(await balance(target, partner.api_key), 100_000 - 350, "the old cart's own price");
  const paid_new = await submitCart(target, partner.api_key, new_cart.cart_key);
  assert.equal(paid_new.status, 200);
  assert.equal(await balance(target, partner.api_key), 100_000 - 350 - 175);
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
});

test("an unknown package in overrides is 422 package_not_found and changes nothing; bad bodies are 400", async () => {
  const partner = await api.createPartner("Strict", 0);
  const unknown = await setPricing(partner.partner_id, {
    discount_percent: 10,
    overrides: [{ package_id: "no-such-package", amount_minor: 100 }],
  });
  assert.equal(unknown.status, 422);
  assert.equal(unknown.body.code, "package_not_found");
  const got = await request(target, "GET", `/admin/partners/${partner.partner_id}/pricing`, {
    headers: admin,
  });
  assert.deepEqual(got.body, { discount_percent: 0, overrides: [] });
  for (const body of [
    { discount_percent: 91, overrides: [] },
    { discount_percent: -1, overrides: [] },
    { discount_percent: 10 },
    { discount_percent: 10, overrides: [{ package_id: "fr-1gb-7d", amount_minor: 0 }] },
    {
      discount_percent: 10,
      overrides: [
        { package_id: "fr-1gb-7d", amount_minor: 5 },
        { package_id: "fr-1gb-7d", amount_minor: 6 },
      ],
    },
  ]) {
    const answer = await setPricing(partner.partner_id, body);
    assert.equal(answer.status, 400, JSON.stringify(body));
  }
  const nobody = await setPricing("ptr_AAAAAAAAAAAAAAAAAAAAAA", { discount_percent: 1, overrides: [] });
  assert.equal(nobody.status, 404);
  assert.equal(nobody.body.code, "partner_not_found");
});
