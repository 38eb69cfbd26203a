// A supplier this process has no settings for (issue 33 review): nothing new is started with it, and
// what was already sent to it is never given up. Production processes (the only ones a supplier can
// be missing from) are started against the world's database, with Airalo at its fake; no process
// runs but those the test starts, so no other resolver finishes the order meanwhile.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { sql } from "kysely";
import { parseMarkupPercent, syncSupplierCatalog } from "../src/catalog/sync-supplier-catalog.ts";
import { loadConfig } from "../src/config.ts";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { startAiralo } from "../src/simulators/airalo/server.ts";
import { openSupplierCatalog } from "../src/suppliers/supplier-catalogs.ts";
import {
  balance,
  call,
  createWorld,
  END_USER,
  newCart,
  newPartner,
  submit,
  waitFor,
} from "./support/world.ts";

const AIRALO_ID = "unconfigured-airalo-client";
const AIRALO_SECRET = "unconfigured-airalo-secret-0123";
const AIRALO_SIM = "airalo-uki-mobile-7days-1gb";
const AIRALO_TOPUP = "airalo-uki-mobile-7days-1gb-topup";

const world = await createWorld({ services: 0 });
const pool = world.database.pool;
const db = createKysely<Database>(pool);
const airalo = await startAiralo({
  pool,
  port: 0,
  host: "127.0.0.1",
  client_id: AIRALO_ID,
  client_secret: AIRALO_SECRET,
});
after(() => airalo.close());

const PRODUCTION_ENV = {
  APP_ENV: "production",
  CARRIER_CALLBACK_TOKEN: "a-long-callback-token-0123456789",
  WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
  PUBLIC_BASE_URL: "https://console.esim.example",
  STALE_JOB_AFTER_MS: "60000",
};
const WITH_AIRALO = {
  ...PRODUCTION_ENV,
  AIRALO_API_URL: `${airalo.url}/v2`,
  AIRALO_CLIENT_ID: AIRALO_ID,
  AIRALO_CLIENT_SECRET: AIRALO_SECRET,
  SUPPLIER_TIMEOUT_MS: "3000",
};

async function airaloControl(body: unknown): Promise<void> {
  const response = await fetch(`${airalo.url}/control`, {
    method: "POST",
    headers: { authorization: `Bearer ${AIRALO_SECRET}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.ok(response.ok, `control: ${response.status}`);
}

async function airaloOrdersOf(order_id: string): Promise<number> {
  const made = await pool.query("select 1 from airalo_sim.orders where strpos(description, $1) > 0", [
    `[esim-ref:${order_id}]`,
  ]);
  return made.rows.length;
}

await airaloControl({ disarm: true, reset_rate_limits: true, usage_cache_ms: 0 });
const opened = await openSupplierCatalog(
  loadConfig({ ...world.env, ...WITH_AIRALO }),
  pool,
  "airalo",
  () => {},
);
try {
  await syncSupplierCatalog(pool, {
    supplier: "airalo",
    markup_basis_points: parseMarkupPercent("10")!,
    destination_codes: ["GB"],
    currency: "USD",
    actor: CLI_ACTOR,
    list: opened.list,
  });
} finally {
  await opened.close();
}

async function airaloOrderCount(): Promise<number> {
  return (await pool.query("select count(*)::int as n from airalo_sim.orders")).rows[0].n;
}

async function orderState(order_id: string) {
  const result = await sql<{ status: string; lease_token: string | null; refund_requested_at: Date | null }>`
    select status, lease_token, refund_requested_at from orders where order_id = ${order_id}`.execute(db);
  return result.rows[0]!;
}

async function externalId(package_id: string): Promise<string> {
  const result = await sql<{ external_package_id: string }>`
    select external_package_id from packages where package_id = ${package_id}`.execute(db);
  return result.rows[0]!.external_package_id;
}

async function charges(order_id: string): Promise<{ kind: string; state: string }[]> {
  const result = await sql<{ kind: string; state: string }>`
    select kind, state from ledger_transfers where reference = ${order_id} order by created_at`.execute(db);
  return result.rows;
}

test("a process restarted without Airalo's settings: a pending Airalo order stays pending, held, never failed; new purchases, top-ups and refunds are refused before anything is created; with the settings back the order completes", async () => {
  // An Airalo eSIM bought while Airalo was configured, and an order Airalo made whose answer was lost
  // (its resolver far off, so this process does not finish it before it stops).
  const configured = await world.startService({ ...WITH_AIRALO, RESOLVE_AFTER_MS: "600000" });
  const partner = await newPartner(configured.url, 100_00);
  const firstCart = await newCart(configured.url, partner.api_key, AIRALO_SIM);
  const bought = await submit(configured.url, partner.api_key, firstCart.cart_key);
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  const esim_order = bought.body.orderID as string;
  const iccid = bought.body.purchases[0].iccid as string;
  await airaloControl({ arm: [{ operation: "order", kind: "commit_then_500" }] });
  const cart = await newCart(configured.url, partner.api_key, AIRALO_SIM);
  const lost = await submit(configured.url, partner.api_key, cart.cart_key);
  assert.equal(lost.status, 503, JSON.stringify(lost.body));
  await configured.stop();
  const order_id = lost.body.order_id as string;
  assert.equal((await orderState(order_id)).status, "pending", "Airalo made it; we had not recorded it");
  assert.equal(await airaloOrdersOf(order_id), 1);

  const bare = await world.startService(PRODUCTION_ENV);
  try {
    // The resolver re-drives the order, now due: Airalo cannot be asked here.
    await sql`update orders set next_resolve_at = now() where order_id = ${order_id}`.execute(db);
    await waitFor(
      "the resolver's attempt",
      async () => bare.logs().includes(`provisioning of ${order_id} not sent`),
      30_000,
    );
    await waitFor("the attempt recorded", async () => {
      const now = await orderState(order_id);
      return now.status !== "pending" || now.lease_token === null;
    });
    assert.equal((await orderState(order_id)).status, "pending", "never failed: Airalo may have made it");
    assert.deepEqual(await charges(order_id), [{ kind: "purchase", state: "pending" }], "still held");

    const credit = await balance(bare.url, partner.api_key);
    const airaloBefore = await airaloOrderCount();
    const newCartKey = (await newCart(bare.url, partner.api_key, AIRALO_SIM)).cart_key;
    const refused = await submit(bare.url, partner.api_key, newCartKey);
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.code, "carrier_unavailable");
    const none = await sql`select 1 from orders where cart_key = ${newCartKey}`.execute(db);
    assert.equal(none.rows.length, 0, "no order created");

    const topup = await call(bare.url, "POST", "/v1/orders/submit-topup", {
      key: partner.api_key,
      body: {
        iccid,
        package_id: AIRALO_TOPUP,
        external_package_id: await externalId(AIRALO_TOPUP),
        ...END_USER,
      },
    });
    assert.equal(topup.status, 503, JSON.stringify(topup.body));
    assert.equal(topup.body.code, "carrier_unavailable");
    const topups = await sql`select 1 from orders where topup_iccid = ${iccid}`.execute(db);
    assert.equal(topups.rows.length, 0, "no top-up order");

    const refund = await call(bare.url, "POST", `/v1/orders/${esim_order}/refund`, { key: partner.api_key });
    assert.equal(refund.status, 503, JSON.stringify(refund.body));
    assert.equal(refund.body.code, "carrier_unavailable");
    assert.match(refund.body.detail, /Nothing was credited and no refund was started/);
    const esim = await orderState(esim_order);
    assert.equal(esim.status, "completed");
    assert.equal(esim.refund_requested_at, null, "no refund under way");
    const intents = await sql`select 1 from order_refunds where order_id = ${esim_order}`.execute(db);
    assert.equal(intents.rows.length, 0, "no refund intent");

    assert.equal(await balance(bare.url, partner.api_key), credit, "nothing charged or credited");
    assert.equal(await airaloOrderCount(), airaloBefore, "nothing asked of Airalo");
  } finally {
    await bare.stop();
  }

  const restored = await world.startService(WITH_AIRALO);
  try {
    await waitFor("the resolver", async () => (await orderState(order_id)).status === "completed", 30_000);
    assert.equal(await airaloOrdersOf(order_id), 1, "one Airalo order");
    assert.deepEqual(await charges(order_id), [{ kind: "purchase", state: "posted" }]);
  } finally {
    await restored.stop();
  }
});
