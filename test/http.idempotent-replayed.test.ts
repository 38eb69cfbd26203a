// Issue 36, "idempotency visible": every route that is idempotent (by cart_key, Idempotency-Key or
// reference) says `Idempotent-Replayed: true` on a replay, and only then; and nothing happens
// twice. A real service process, the carrier simulator and a real SMTP server.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { bearer } from "./support/http.ts";
import {
  ADMIN_TOKEN,
  balance,
  buyEsim,
  call,
  createWorld,
  END_USER,
  newCart,
  newPartner,
} from "./support/world.ts";

const world = await createWorld();
const api = world.services[0]!.url;
const db = createKysely<Database>(world.database.pool);
const REPLAYED = "idempotent-replayed";

async function ordersOfCart(cart_key: string): Promise<number> {
  const rows = await sql<{
    n: number;
  }>`select count(*)::int as n from orders where cart_key = ${cart_key}`.execute(db);
  return rows.rows[0]!.n;
}

test("a submit replayed by cart_key says Idempotent-Replayed, the same bytes or another body, one charge", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key);
  const body = { cart_key: cart.cart_key, ...END_USER };
  const first = await call(api, "POST", "/v1/orders/submit", { key: partner.api_key, body });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.headers.get(REPLAYED), null, "the first answer is no replay");
  const after_first = await balance(api, partner.api_key);

  // The same bytes (answered from memory before any parse), then a body that differs only in how
  // the phone is typed (parsed, checked, then answered from memory).
  const same = await call(api, "POST", "/v1/orders/submit", { key: partner.api_key, body });
  const typed = await call(api, "POST", "/v1/orders/submit", {
    key: partner.api_key,
    body: { ...body, phone: "+1 (415) 555-0123" },
  });
  for (const replay of [same, typed]) {
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get(REPLAYED), "true");
    assert.equal(replay.body.orderID, first.body.orderID);
  }
  assert.equal(await balance(api, partner.api_key), after_first, "charged once");
  assert.equal(await ordersOfCart(cart.cart_key), 1);
});

test("a submit replayed on another process (nothing in its memory) says Idempotent-Replayed too", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key);
  const first = await call(api, "POST", "/v1/orders/submit", {
    key: partner.api_key,
    body: { cart_key: cart.cart_key, ...END_USER },
  });
  assert.equal(first.status, 200);
  const other = await world.startService();
  const replay = await call(other.url, "POST", "/v1/orders/submit", {
    key: partner.api_key,
    body: { cart_key: cart.cart_key, ...END_USER },
  });
  assert.equal(replay.status, 200, JSON.stringify(replay.body));
  assert.equal(replay.headers.get(REPLAYED), "true");
  assert.equal(replay.body.orderID, first.body.orderID);
  assert.equal(await ordersOfCart(cart.cart_key), 1);
});

test("a carrier refusal replayed by cart_key (502, stored) says Idempotent-Replayed", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key);
  const body = { cart_key: cart.cart_key, ...END_USER, email: "decline@carrier.test" };
  const first = await call(api, "POST", "/v1/orders/submit", { key: partner.api_key, body });
  assert.equal(first.status, 502, JSON.stringify(first.body));
  assert.equal(first.headers.get(REPLAYED), null);
  const replay = await call(api, "POST", "/v1/orders/submit", { key: partner.api_key, body });
  assert.equal(replay.status, 502);
  assert.equal(replay.headers.get(REPLAYED), "true");
  assert.equal(await balance(api, partner.api_key), 100_00, "nothing charged");
});

test("a top-up replayed by Idempotency-Key says Idempotent-Replayed", async () => {
  const { partner, iccid } = await buyEsim(api, 100_00);
  const offers = await call(api, "GET", `/v1/orders/available-topups/${iccid}`, { key: partner.api_key });
  const offer = offers.body.data[0];
  const body = {
    iccid,
    package_id: offer.package_id,
    external_package_id: offer.external_package_id,
    ...END_USER,
  };
  const headers = { "idempotency-key": "topup-replay-1" };
  const first = await call(api, "POST", "/v1/orders/submit-topup", { key: partner.api_key, body, headers });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.headers.get(REPLAYED), null);
  const after_first = await balance(api, partner.api_key);
  const replay = await call(api, "POST", "/v1/orders/submit-topup", { key: partner.api_key, body, headers });
  assert.equal(replay.headers.get(REPLAYED), "true");
  assert.equal(replay.body.orderID, first.body.orderID);
  assert.equal(await balance(api, partner.api_key), after_first, "charged once");
});

test("a refund and a resend replayed by Idempotency-Key say Idempotent-Replayed, and act once", async () => {
  const { partner, order_id } = await buyEsim(api, 100_00);
  const resend = { "idempotency-key": "resend-replay-1" };
  const sent = await call(api, "POST", `/v1/orders/${order_id}/resend-email`, {
    key: partner.api_key,
    headers: resend,
  });
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  assert.equal(sent.headers.get(REPLAYED), null);
  const resent = await call(api, "POST", `/v1/orders/${order_id}/resend-email`, {
    key: partner.api_key,
    headers: resend,
  });
  assert.equal(resent.status, 202);
  assert.equal(resent.headers.get(REPLAYED), "true");
  assert.equal(resent.body.email_id, sent.body.email_id, "one resend queued");

  const refund = { "idempotency-key": "refund-replay-1" };
  const refunded = await call(api, "POST", `/v1/orders/${order_id}/refund`, {
    key: partner.api_key,
    headers: refund,
  });
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  assert.equal(refunded.headers.get(REPLAYED), null);
  const again = await call(api, "POST", `/v1/orders/${order_id}/refund`, {
    key: partner.api_key,
    headers: refund,
  });
  assert.equal(again.status, 200);
  assert.equal(again.headers.get(REPLAYED), "true");
  assert.equal(await balance(api, partner.api_key), 100_00, "refunded once, to the full credit");
});

test("an operator's credit and adjustment replayed by reference say Idempotent-Replayed, and move money once", async () => {
  const partner = await newPartner(api, 0);
  const path = `/admin/partners/${partner.partner_id}/wallet`;
  const admin = bearer(ADMIN_TOKEN);
  const credit = { amount_minor: 5_000, reference: "wire-replay-1" };
  const credited = await call(api, "POST", `${path}/credits`, { headers: admin, body: credit });
  assert.equal(credited.status, 201, JSON.stringify(credited.body));
  assert.equal(credited.headers.get(REPLAYED), null);
  const recredited = await call(api, "POST", `${path}/credits`, { headers: admin, body: credit });
  assert.equal(recredited.status, 201);
  assert.equal(recredited.headers.get(REPLAYED), "true");
  assert.equal(recredited.body.credited, false);

  const adjustment = { amount_minor: -1_000, reference: "adj-replay-1", reason: "Duplicate transfer" };
  const adjusted = await call(api, "POST", `${path}/adjustments`, { headers: admin, body: adjustment });
  assert.equal(adjusted.status, 201, JSON.stringify(adjusted.body));
  assert.equal(adjusted.headers.get(REPLAYED), null);
  const readjusted = await call(api, "POST", `${path}/adjustments`, { headers: admin, body: adjustment });
  assert.equal(readjusted.status, 201);
  assert.equal(readjusted.headers.get(REPLAYED), "true");
  assert.equal(await balance(api, partner.api_key), 4_000, "credited once, adjusted once");
});
