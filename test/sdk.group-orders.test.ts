// Group orders through the SDK (packages/sdk, issue 34) against the real service process, its
// carrier simulator process and PostgreSQL: a cart of 3 with one traveller
// declined by the sandbox's magic address, narrowed on `purchase.status` as partners' code does;
// the retry by cart_key; the refusal of a group refund; every traveller declined as a typed 502.
// The `@ts-expect-error` lines are the type-level check (`npm run typecheck` compiles this file):
// a failed purchase has no eSIM, so reading one without narrowing does not compile.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ApiError,
  type CompletedPurchase,
  EsimClient,
  type FailedPurchase,
  isApiError,
  type Purchase,
  type Traveller,
} from "../packages/sdk/src/index.ts";
import { startFaultProxy } from "./support/fault-proxy.ts";
import { PACKAGE_ID } from "./support/fixtures.ts";
import { balance, createWorld, END_USER, newPartner } from "./support/world.ts";

const world = await createWorld();
const api = world.services[0]!.url;
// A proxy that forwards everything: it counts the SDK's requests (a 502 carrier_error is not retried).
const proxy = await startFaultProxy(api);

async function partnerClient(credit_minor: number) {
  const partner = await newPartner(api, credit_minor, "Group travel");
  return { ...partner, client: new EsimClient({ apiKey: partner.api_key, baseUrl: proxy.url }) };
}

function traveller(n: number, email = `sdk-traveller${n}@example.com`): Traveller {
  return { first_name: `Traveller${n}`, last_name: "Lima", email };
}

/** What a partner's code does with each entry: the eSIM when completed, nothing when failed. */
function split(purchases: Purchase[]): { made: CompletedPurchase[]; refused: FailedPurchase[] } {
  const made: CompletedPurchase[] = [];
  const refused: FailedPurchase[] = [];
  for (const purchase of purchases) {
    // @ts-expect-error: a purchase may be `failed`, which has no eSIM: narrow on status first.
    void purchase.iccid;
    if (purchase.status === "completed") made.push(purchase);
    else refused.push(purchase);
  }
  return { made, refused };
}

test("a group of 3 with one traveller declined: one order, two eSIMs charged, narrowed on status", async () => {
  const { client, api_key } = await partnerClient(100_00);
  const before = await balance(api, api_key);
  const cart = await client.carts.create({ package_id: PACKAGE_ID, quantity: 3 });
  assert.equal(cart.quantity, 3);
  const price = cart.total.amount_minor / 3;
  assert.ok(Number.isInteger(price) && price > 0, `total ${cart.total.amount_minor} is 3 x the price`);

  const travellers = [traveller(0), traveller(1, "decline@carrier.test"), traveller(2)];
  const params = { cart_key: cart.cart_key, ...END_USER, travellers };
  const order = await client.orders.submit(params);
  assert.equal(order.status, "completed");
  assert.equal(order.quantity, 3);
  assert.deepEqual(
    order.purchases.map((p) => p.status),
    ["completed", "failed", "completed"],
  );
  const { made, refused } = split(order.purchases);
  assert.equal(made.length, 2);
  assert.match(made[0]!.iccid, /^89\d{17,18}$/);
  assert.match(made[1]!.qr_code, /^LPA:1\$/);
  assert.notEqual(made[0]!.iccid, made[1]!.iccid);
  assert.deepEqual(Object.keys(refused[0]!).sort(), ["package_id", "start_date", "status"]);
  assert.equal(order.esim_iccid, made[0]!.iccid, "the group's first eSIM");
  assert.equal(order.total.amount_minor, 2 * price, "total: what was charged");
  assert.equal(await balance(api, api_key), before - 2 * price, "the declined eSIM never charged");

  // Each made eSIM is the partner's, with the install kit its purchase entry carries.
  for (const purchase of made) {
    const esim = await client.esims.get(purchase.iccid);
    assert.equal(esim.order_id, order.orderID);
    assert.equal(esim.installation.qr_code, purchase.qr_code);
  }

  // The retry by cart_key (the SDK's own, after a lost answer, is the same call): the same order.
  const again = await client.orders.submit(params);
  assert.deepEqual(again, order);
  assert.deepEqual((await client.orders.get(order.orderID)).purchases, order.purchases);
  assert.equal(await balance(api, api_key), before - 2 * price, "charged once");

  // A group order is not refunded through the API: a typed 409 with its reason, nothing credited.
  const refusal = await client.orders.refund(order.orderID).catch((error: unknown) => error);
  assert.ok(isApiError(refusal, "refund_not_allowed"), String(refusal));
  assert.equal(refusal.status, 409);
  assert.equal((refusal.raw as { reason?: string }).reason, "group_order");
  assert.equal(await balance(api, api_key), before - 2 * price);
});

test("a group whose every traveller is declined is ApiError 502 carrier_error, not retried, nothing charged", async () => {
  const { client, api_key } = await partnerClient(100_00);
  const before = await balance(api, api_key);
  const cart = await client.carts.create({ package_id: PACKAGE_ID, quantity: 2 });
  const travellers = [traveller(0, "decline@carrier.test"), traveller(1, "decline@carrier.test")];
  const sent_before = proxy.seen("POST", "/v1/orders/submit").length;
  const refused = await client.orders
    .submit({ cart_key: cart.cart_key, ...END_USER, travellers })
    .catch((error: unknown) => error);
  assert.ok(refused instanceof ApiError && isApiError(refused, "carrier_error"), String(refused));
  assert.equal(refused.status, 502);
  assert.equal(proxy.seen("POST", "/v1/orders/submit").length - sent_before, 1, "final: not retried");
  assert.equal(await balance(api, api_key), before);
  const orders = await client.orders.list().toArray();
  assert.deepEqual(
    orders.map((o) => [o.status, o.quantity, o.purchases.length]),
    [["failed", 2, 0]],
  );
});

test("travellers of another count than the cart's quantity: ApiError 400 naming travellers, no order", async () => {
  const { client } = await partnerClient(100_00);
  const cart = await client.carts.create({ package_id: PACKAGE_ID, quantity: 2 });
  const refused = await client.orders
    .submit({ cart_key: cart.cart_key, ...END_USER, travellers: [traveller(0)] })
    .catch((error: unknown) => error);
  assert.ok(isApiError(refused, "invalid_request"), String(refused));
  assert.equal(refused.errors[0]?.field, "travellers");
  assert.deepEqual(await client.orders.list().toArray(), []);
});
