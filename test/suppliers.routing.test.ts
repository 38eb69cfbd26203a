// Purchases, top-ups, usage and refunds of a supplier's packages go to that supplier (issue 33,
// contract "Suppliers (operator side)"): the service processes are started as in other end-to-end
// tests, with Airalo and eSIM Go at the fakes' URLs (src/simulators/, in this process, on the
// world's database), packages synced from them as `catalog sync` does. Assertions read the fakes'
// own records (schemas airalo_sim, esimgo_sim) and our ledger, not only the answers.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { sql } from "kysely";
import { AiraloCarrier } from "../src/carrier/airalo/airalo-carrier.ts";
import { EsimGoCarrier } from "../src/carrier/esimgo/esimgo-carrier.ts";
import { SupplierRouter } from "../src/carrier/route-by-supplier.ts";
import type { Supplier } from "../src/carrier/supplier-package.ts";
import { parseMarkupPercent, syncSupplierCatalog } from "../src/catalog/sync-supplier-catalog.ts";
import { loadConfig } from "../src/config.ts";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { syncDueEsims } from "../src/esims/sync-esims.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { DOCUMENTED_LIMITS } from "../src/simulators/airalo/rate-limit.ts";
import { startAiralo } from "../src/simulators/airalo/server.ts";
import { startEsimGoSimulator } from "../src/simulators/esimgo/server.ts";
import { openSupplierCatalog } from "../src/suppliers/supplier-catalogs.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import {
  type Answer,
  balance,
  call,
  createWorld,
  END_USER,
  newCart,
  newPartner,
  submit,
  waitFor,
  workerContext,
  worldCarrier,
} from "./support/world.ts";

const AIRALO_ID = "routing-airalo-client";
const AIRALO_SECRET = "routing-airalo-secret-0123";
const ESIMGO_KEY = "routing-esimgo-key-0123456789";
const AIRALO_SIM = "airalo-uki-mobile-7days-1gb";
const AIRALO_TOPUP = "airalo-uki-mobile-7days-1gb-topup";
const ESIMGO_SIM = "esimgo-esim_1GB_7D_GB_V2";

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
const esimgo = await startEsimGoSimulator({
  pool,
  port: 0,
  host: "127.0.0.1",
  apiKey: ESIMGO_KEY,
  rate_limit_per_second: 100_000,
});
after(async () => {
  await airalo.close();
  await esimgo.close();
});

const SUPPLIERS_ENV = {
  AIRALO_API_URL: `${airalo.url}/v2`,
  AIRALO_CLIENT_ID: AIRALO_ID,
  AIRALO_CLIENT_SECRET: AIRALO_SECRET,
  ESIMGO_API_URL: `${esimgo.url}/v2.4`,
  ESIMGO_API_KEY: ESIMGO_KEY,
  SUPPLIER_TIMEOUT_MS: "3000",
};

async function airaloControl(route: string, body: unknown): Promise<any> {
  const response = await fetch(`${airalo.url}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${AIRALO_SECRET}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  assert.ok(response.ok, `${route}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function esimgoSandbox(path: string, body: unknown): Promise<any> {
  const response = await fetch(`${esimgo.url}${path}`, {
    method: "POST",
    headers: { "x-api-key": ESIMGO_KEY, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  assert.ok(response.ok, `${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

await airaloControl("/control", {
  disarm: true,
  reset_rate_limits: true,
  rate_limits: DOCUMENTED_LIMITS,
  usage_cache_ms: 0,
});
await esimgoSandbox("/sandbox/organisation", { balance: 10_000, refundsEnabled: false });

// The catalog: the carrier's, and each supplier's GB packages as `catalog sync` imports them.
const config = loadConfig({ ...world.env, ...SUPPLIERS_ENV });
for (const supplier of ["airalo", "esimgo"] as Supplier[]) {
  const opened = await openSupplierCatalog(config, pool, supplier, () => undefined);
  try {
    await syncSupplierCatalog(pool, {
      supplier,
      markup_basis_points: parseMarkupPercent("10")!,
      destination_codes: ["GB"],
      currency: "USD",
      actor: CLI_ACTOR,
      list: opened.list,
    });
  } finally {
    await opened.close();
  }
}

const service = await world.startService(SUPPLIERS_ENV);
const url = service.url;

/** The test process as one more worker, asking the suppliers at the fakes like the service. */
function routedContext() {
  const timeout_ms = 3_000;
  const router = new SupplierRouter(
    {
      carrier: worldCarrier(world),
      airalo: new AiraloCarrier({
        pool,
        base_url: `${airalo.url}/v2`,
        client_id: AIRALO_ID,
        client_secret: AIRALO_SECRET,
        timeout_ms,
      }),
      esimgo: new EsimGoCarrier({ pool, base_url: `${esimgo.url}/v2.4`, api_key: ESIMGO_KEY, timeout_ms }),
    },
    {},
    () => undefined,
  );
  return workerContext(world, router);
}

/** Airalo's orders carrying our reference in their description. */
async function airaloOrdersOf(reference: string): Promise<{ type: string; topup_iccid: string | null }[]> {
  const result = await pool.query(
    "select type, topup_iccid from airalo_sim.orders where strpos(description, $1) > 0",
    [`[esim-ref:${reference}]`],
  );
  return result.rows;
}

/** eSIM Go's orders recorded for our reference (our intent names the order eSIM Go made). */
async function esimgoOrdersOf(reference: string): Promise<number> {
  const result = await pool.query(
    `select count(*)::int as n from esimgo_sim.orders o
     join esimgo_orders i on i.order_reference = o.reference where i.reference = $1`,
    [reference],
  );
  return result.rows[0].n;
}

async function esimgoOrderCount(): Promise<number> {
  return (await pool.query("select count(*)::int as n from esimgo_sim.orders")).rows[0].n;
}

async function airaloOrderCount(): Promise<number> {
  return (await pool.query("select count(*)::int as n from airalo_sim.orders")).rows[0].n;
}

/** The order's transfers: one posted purchase is one charge. */
async function charges(order_id: string): Promise<{ kind: string; state: string }[]> {
  const result = await sql<{ kind: string; state: string }>`
    select kind, state from ledger_transfers where reference = ${order_id} order by created_at`.execute(db);
  return result.rows;
}

async function orderRow(order_id: string): Promise<{ status: string; supplier: string }> {
  const result = await sql<{ status: string; supplier: string }>`
    select status, supplier from orders where order_id = ${order_id}`.execute(db);
  return result.rows[0]!;
}

async function buy(package_id: string, credit = 200_00) {
  const partner = await newPartner(url, credit);
  const cart = await newCart(url, partner.api_key, package_id);
  const bought = await submit(url, partner.api_key, cart.cart_key);
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  return {
    partner,
    order_id: bought.body.orderID as string,
    iccid: bought.body.purchases[0].iccid as string,
    paid: bought.body.total.amount_minor as number,
    credit,
  };
}

function topUp(api_key: string, iccid: string, package_id: string, external_package_id: string) {
  return call(url, "POST", "/v1/orders/submit-topup", {
    key: api_key,
    body: { iccid, package_id, external_package_id, ...END_USER },
  });
}

function refund(api_key: string, order_id: string): Promise<Answer> {
  return call(url, "POST", `/v1/orders/${encodeURIComponent(order_id)}/refund`, { key: api_key });
}

async function externalId(package_id: string): Promise<string> {
  const result = await sql<{ external_package_id: string }>`
    select external_package_id from packages where package_id = ${package_id}`.execute(db);
  return result.rows[0]!.external_package_id;
}

test("an Airalo package is bought from Airalo: one Airalo order tagged with our order id, one charge, the order names its supplier", async () => {
  const before = await airaloOrderCount();
  const bought = await buy(AIRALO_SIM);
  assert.deepEqual(await airaloOrdersOf(bought.order_id), [{ type: "sim", topup_iccid: null }]);
  assert.equal(await airaloOrderCount(), before + 1, "no other Airalo order");
  assert.deepEqual(await orderRow(bought.order_id), { status: "completed", supplier: "airalo" });
  assert.deepEqual(await charges(bought.order_id), [{ kind: "purchase", state: "posted" }]);
  assert.equal(await balance(url, bought.partner.api_key), bought.credit - bought.paid);
  const sim = await pool.query("select iccid from airalo_sim.sims where iccid = $1", [bought.iccid]);
  assert.equal(sim.rows.length, 1, "the eSIM is Airalo's");
});

test("an eSIM Go package is bought from eSIM Go: one eSIM Go order, its eSIM tagged with our order id, one charge", async () => {
  const before = await esimgoOrderCount();
  const bought = await buy(ESIMGO_SIM);
  assert.equal(await esimgoOrdersOf(bought.order_id), 1);
  assert.equal(await esimgoOrderCount(), before + 1, "no other eSIM Go order");
  const esim = await pool.query("select customer_ref from esimgo_sim.esims where iccid = $1", [bought.iccid]);
  assert.deepEqual(esim.rows, [{ customer_ref: bought.order_id }]);
  assert.deepEqual(await orderRow(bought.order_id), { status: "completed", supplier: "esimgo" });
  assert.deepEqual(await charges(bought.order_id), [{ kind: "purchase", state: "posted" }]);
});

test("a top-up-only package is never sold as a new eSIM: not listed for its destination, refused in a cart", async () => {
  const partner = await newPartner(url, 100_00);
  const listed = await call(url, "GET", "/v1/esim/destination/GB/packages", { key: partner.api_key });
  assert.equal(listed.status, 200);
  const ids = (listed.body.packages ?? listed.body.data).map((p: { package_id: string }) => p.package_id);
  assert.ok(ids.includes(AIRALO_SIM) && ids.includes(ESIMGO_SIM), "suppliers' packages are sold");
  assert.ok(!ids.includes(AIRALO_TOPUP), "Airalo's top-up package is not");
  const cart = await call(url, "POST", "/v1/orders/cart", {
    key: partner.api_key,
    body: { package_id: AIRALO_TOPUP },
  });
  assert.equal(cart.status, 404);
  assert.equal(cart.body.code, "package_not_found");
});

test("each eSIM is offered and topped up with its own supplier's packages only; another supplier's is refused, nothing charged", async () => {
  const onAiralo = await buy(AIRALO_SIM);
  const offer = await call(url, "GET", `/v1/orders/available-topups/${onAiralo.iccid}`, {
    key: onAiralo.partner.api_key,
  });
  const offered = offer.body.data.map((row: { package_id: string }) => row.package_id);
  assert.ok(offered.includes(AIRALO_TOPUP), JSON.stringify(offered));
  assert.ok(
    offered.every((id: string) => id.startsWith("airalo-uki-mobile-") && id.endsWith("-topup")),
    `only Airalo's top-up packages of the eSIM's operator: ${offered}`,
  );
  const europe = await sql<{ n: number }>`
    select count(*)::int as n from packages where package_id like 'airalo-eurolink-%-topup' and active`.execute(
    db,
  );
  assert.ok(europe.rows[0]!.n > 0, "Airalo's Europe top-ups cover the UK too, and are not offered");
  const refused = await topUp(
    onAiralo.partner.api_key,
    onAiralo.iccid,
    ESIMGO_SIM,
    await externalId(ESIMGO_SIM),
  );
  assert.equal(refused.status, 422, JSON.stringify(refused.body));
  assert.equal(refused.body.code, "topup_not_available");
  assert.match(refused.body.detail, /another network/);
  assert.equal(await balance(url, onAiralo.partner.api_key), onAiralo.credit - onAiralo.paid, "nothing held");

  const airaloTopUp = await topUp(
    onAiralo.partner.api_key,
    onAiralo.iccid,
    AIRALO_TOPUP,
    await externalId(AIRALO_TOPUP),
  );
  assert.equal(airaloTopUp.status, 200, JSON.stringify(airaloTopUp.body));
  const topup_id = airaloTopUp.body.orderID as string;
  assert.deepEqual(await airaloOrdersOf(topup_id), [{ type: "topup", topup_iccid: onAiralo.iccid }]);
  assert.deepEqual(await charges(topup_id), [{ kind: "purchase", state: "posted" }]);
  assert.equal((await orderRow(topup_id)).supplier, "airalo");

  const onEsimGo = await buy(ESIMGO_SIM);
  const esimgoOffer = await call(url, "GET", `/v1/orders/available-topups/${onEsimGo.iccid}`, {
    key: onEsimGo.partner.api_key,
  });
  const esimgoOffered = esimgoOffer.body.data.map((row: { package_id: string }) => row.package_id);
  assert.ok(esimgoOffered.includes(ESIMGO_SIM));
  assert.ok(
    esimgoOffered.every((id: string) => id.startsWith("esimgo-")),
    `${esimgoOffered}`,
  );
  const wrong = await topUp(
    onEsimGo.partner.api_key,
    onEsimGo.iccid,
    AIRALO_TOPUP,
    await externalId(AIRALO_TOPUP),
  );
  assert.equal(wrong.status, 422);
  const esimgoTopUp = await topUp(
    onEsimGo.partner.api_key,
    onEsimGo.iccid,
    ESIMGO_SIM,
    await externalId(ESIMGO_SIM),
  );
  assert.equal(esimgoTopUp.status, 200, JSON.stringify(esimgoTopUp.body));
  assert.equal(await esimgoOrdersOf(esimgoTopUp.body.orderID), 1);
  const assignments = await pool.query(
    "select count(*)::int as n from esimgo_sim.assignments where iccid = $1",
    [onEsimGo.iccid],
  );
  assert.equal(assignments.rows[0].n, 2, "the bundle went onto our eSIM");
  assert.deepEqual(await charges(esimgoTopUp.body.orderID), [{ kind: "purchase", state: "posted" }]);
});

test("usage is pulled from each eSIM's own supplier", async () => {
  const onAiralo = await buy(AIRALO_SIM);
  const onEsimGo = await buy(ESIMGO_SIM);
  await airaloControl(`/control/sims/${onAiralo.iccid}/usage`, { used_mb: 300 });
  await esimgoSandbox(`/sandbox/esims/${onEsimGo.iccid}/events`, { event: "use_data", bytes: 200_000_000 });
  await sql`update esims set next_sync_at = now() where iccid in (${onAiralo.iccid}, ${onEsimGo.iccid})`.execute(
    db,
  );
  const ctx = routedContext();
  await waitFor("both pulls", async () => {
    await syncDueEsims(ctx, 20);
    const rows = await sql<{ iccid: string; used: number }>`
      select iccid, sum(data_used_mb)::int as used from esim_bundles
      where iccid in (${onAiralo.iccid}, ${onEsimGo.iccid}) group by iccid`.execute(db);
    const used = new Map(rows.rows.map((row) => [row.iccid, row.used]));
    return used.get(onAiralo.iccid) === 300 && used.get(onEsimGo.iccid) === 200;
  });
  const esim = await call(url, "GET", `/v1/esims/${onAiralo.iccid}`, { key: onAiralo.partner.api_key });
  assert.equal(esim.status, 200);
  assert.equal(esim.body.data_used_mb ?? esim.body.usage?.data_used_mb, 300, JSON.stringify(esim.body));
});

test("refunds go to the supplier: eSIM Go refuses while its refunds are off (refused to the partner), then refunds; Airalo refunds once it accepts the request, no top-up sold meanwhile; an Airalo top-up alone is refused, an eSIM with one too", async () => {
  const onEsimGo = await buy(ESIMGO_SIM);
  const refused = await refund(onEsimGo.partner.api_key, onEsimGo.order_id);
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.equal(refused.body.code, "refund_not_allowed");
  assert.equal((await orderRow(onEsimGo.order_id)).status, "completed");
  assert.equal(
    await balance(url, onEsimGo.partner.api_key),
    onEsimGo.credit - onEsimGo.paid,
    "nothing credited",
  );
  await esimgoSandbox("/sandbox/organisation", { refundsEnabled: true });
  const refunded = await refund(onEsimGo.partner.api_key, onEsimGo.order_id);
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  assert.equal(refunded.body.status, "refunded");
  assert.equal(await balance(url, onEsimGo.partner.api_key), onEsimGo.credit);
  const revoked = await pool.query("select state from esimgo_sim.assignments where iccid = $1", [
    onEsimGo.iccid,
  ]);
  assert.deepEqual(revoked.rows, [{ state: "revoked" }]);

  const onAiralo = await buy(AIRALO_SIM);
  const airaloTopUp = await topUp(
    onAiralo.partner.api_key,
    onAiralo.iccid,
    AIRALO_TOPUP,
    await externalId(AIRALO_TOPUP),
  );
  assert.equal(airaloTopUp.status, 200);
  const topUpRefund = await refund(onAiralo.partner.api_key, airaloTopUp.body.orderID);
  assert.equal(topUpRefund.status, 409, "Airalo refunds whole eSIMs, not a top-up alone");
  // Airalo approves a refund by the eSIM order alone: with a top-up it is not asked at all.
  const withTopUp = await refund(onAiralo.partner.api_key, onAiralo.order_id);
  assert.equal(withTopUp.status, 409, JSON.stringify(withTopUp.body));
  assert.equal(withTopUp.body.reason, "topups_not_refunded");
  const none = await pool.query("select id from airalo_sim.refunds where $1 = any(iccids)", [onAiralo.iccid]);
  assert.equal(none.rows.length, 0, "nothing asked of Airalo");

  const alone = await buy(AIRALO_SIM);
  const requested = await refund(alone.partner.api_key, alone.order_id);
  assert.equal(requested.status, 503, "Airalo reviews the request later");
  const asked = await pool.query("select id from airalo_sim.refunds where $1 = any(iccids)", [alone.iccid]);
  assert.equal(asked.rows.length, 1, "one refund request at Airalo");
  // While Airalo reviews it (days) no top-up is offered or sold: it would be credited with the eSIM.
  const offer = await call(url, "GET", `/v1/orders/available-topups/${alone.iccid}`, {
    key: alone.partner.api_key,
  });
  assert.equal(offer.status, 200);
  assert.deepEqual(offer.body.data, [], "none offered");
  const airaloBefore = await airaloOrderCount();
  const refusedTopUp = await topUp(
    alone.partner.api_key,
    alone.iccid,
    AIRALO_TOPUP,
    await externalId(AIRALO_TOPUP),
  );
  assert.equal(refusedTopUp.status, 422, JSON.stringify(refusedTopUp.body));
  assert.equal(refusedTopUp.body.code, "topup_not_available");
  assert.match(refusedTopUp.body.detail, /refund .* is under way/);
  assert.equal(await balance(url, alone.partner.api_key), alone.credit - alone.paid, "nothing held");
  assert.equal(await airaloOrderCount(), airaloBefore, "nothing asked of Airalo");
  const topups = await sql`select 1 from orders where topup_iccid = ${alone.iccid}`.execute(db);
  assert.equal(topups.rows.length, 0, "no top-up order");
  await airaloControl(`/control/refunds/${asked.rows[0].id}/review`, { outcome: "approved" });
  const done = await waitFor("the refund once Airalo accepted it", async () => {
    const again = await refund(alone.partner.api_key, alone.order_id);
    return again.status === 200 ? again : null;
  });
  assert.equal(done.body.status, "refunded");
  assert.equal(await balance(url, alone.partner.api_key), alone.credit, "the eSIM credited");
  const requests = await pool.query(
    "select count(*)::int as n from airalo_sim.refunds where $1 = any(iccids)",
    [alone.iccid],
  );
  assert.equal(requests.rows[0].n, 1, "asked once");
  assert.deepEqual((await auditLedger(db)).breaches, []);
});

test("an eSIM Go eSIM with a completed top-up is not refunded (its cancel revokes the eSIM's own bundle only) until the top-up is refunded first; each credited once, both bundles revoked", async () => {
  await esimgoSandbox("/sandbox/organisation", { refundsEnabled: true });
  const bought = await buy(ESIMGO_SIM);
  // Another bundle than the eSIM's: of two unused assignments of one bundle eSIM Go revokes the oldest.
  const offer = await call(url, "GET", `/v1/orders/available-topups/${bought.iccid}`, {
    key: bought.partner.api_key,
  });
  const other = offer.body.data.find((row: { package_id: string }) => row.package_id !== ESIMGO_SIM);
  assert.ok(other, JSON.stringify(offer.body));
  const topped = await topUp(
    bought.partner.api_key,
    bought.iccid,
    other.package_id,
    other.external_package_id,
  );
  assert.equal(topped.status, 200, JSON.stringify(topped.body));
  const topup_id = topped.body.orderID as string;
  const paid = bought.paid + (topped.body.total.amount_minor as number);
  const refused = await refund(bought.partner.api_key, bought.order_id);
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.equal(refused.body.code, "refund_not_allowed");
  assert.equal(refused.body.reason, "topups_not_refunded");
  assert.equal(await balance(url, bought.partner.api_key), bought.credit - paid, "nothing credited");
  assert.equal((await orderRow(bought.order_id)).status, "completed");
  const states = async () =>
    (
      await pool.query("select state from esimgo_sim.assignments where iccid = $1 order by state", [
        bought.iccid,
      ])
    ).rows.map((row) => row.state);
  assert.ok(!(await states()).includes("revoked"), "nothing revoked at eSIM Go");

  const topUpRefunded = await refund(bought.partner.api_key, topup_id);
  assert.equal(topUpRefunded.status, 200, JSON.stringify(topUpRefunded.body));
  const refunded = await refund(bought.partner.api_key, bought.order_id);
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  assert.equal(await balance(url, bought.partner.api_key), bought.credit, "each credited once");
  assert.deepEqual(await states(), ["revoked", "revoked"]);
  assert.deepEqual((await auditLedger(db)).breaches, []);
});

for (const [supplier, package_id, fault] of [
  ["Airalo", AIRALO_SIM, "500 after its commit"],
  ["eSIM Go", ESIMGO_SIM, "a dropped connection after its commit"],
] as const) {
  test(`${supplier} answering ${fault}: the resolver finds the order it made, one supplier order and one charge`, async () => {
    if (supplier === "Airalo") {
      await airaloControl("/control", { arm: [{ operation: "order", kind: "commit_then_500" }] });
    } else {
      esimgo.control({ faults: [{ kind: "drop_after_commit", method: "POST", path: "/orders" }] });
    }
    const partner = await newPartner(url, 100_00);
    const cart = await newCart(url, partner.api_key, package_id);
    const lost = await submit(url, partner.api_key, cart.cart_key);
    assert.equal(lost.status, 503, JSON.stringify(lost.body));
    const order = await sql<{ order_id: string }>`
      select order_id from orders where cart_key = ${cart.cart_key}`.execute(db);
    const order_id = order.rows[0]!.order_id;
    // Nobody retries: the resolver sweep alone finishes it.
    await waitFor("the resolver", async () => (await orderRow(order_id)).status === "completed", 30_000);
    if (supplier === "Airalo") assert.equal((await airaloOrdersOf(order_id)).length, 1);
    else assert.equal(await esimgoOrdersOf(order_id), 1);
    assert.deepEqual(await charges(order_id), [{ kind: "purchase", state: "posted" }]);
    const retry = await submit(url, partner.api_key, cart.cart_key);
    assert.equal(retry.status, 200);
    assert.equal(retry.body.orderID, order_id);
  });
}

test("concurrent submits of one cart of each supplier make one supplier order and one charge", async () => {
  for (const package_id of [AIRALO_SIM, ESIMGO_SIM]) {
    const partner = await newPartner(url, 100_00);
    const cart = await newCart(url, partner.api_key, package_id);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => submit(url, partner.api_key, cart.cart_key)),
    );
    for (const answer of answers) assert.ok([200, 409].includes(answer.status), String(answer.status));
    const done = await waitFor("the order", async () => {
      const again = await submit(url, partner.api_key, cart.cart_key);
      return again.status === 200 ? again : null;
    });
    const order_id = done.body.orderID as string;
    const orders = await sql`select 1 from orders where cart_key = ${cart.cart_key}`.execute(db);
    assert.equal(orders.rows.length, 1);
    if (package_id === AIRALO_SIM) assert.equal((await airaloOrdersOf(order_id)).length, 1);
    else assert.equal(await esimgoOrdersOf(order_id), 1);
    assert.deepEqual(await charges(order_id), [{ kind: "purchase", state: "posted" }]);
  }
});

for (const [supplier, package_id] of [
  ["Airalo", AIRALO_SIM],
  ["eSIM Go", ESIMGO_SIM],
] as const) {
  test(`killed between ${supplier}'s commit and our record, restarted: one ${supplier} order and one charge`, async () => {
    const doomed = await world.startService({ ...SUPPLIERS_ENV, CRASH_AT: "after_carrier_answer" });
    const partner = await newPartner(doomed.url, 100_00);
    const cart = await newCart(doomed.url, partner.api_key, package_id);
    await assert.rejects(
      submit(doomed.url, partner.api_key, cart.cart_key),
      "the request dies with its process",
    );
    await waitFor("the process to die", async () => doomed.process.signalCode === "SIGKILL");
    const order = await sql<{ order_id: string; status: string; total_minor: number }>`
      select order_id, status, total_minor from orders where cart_key = ${cart.cart_key}`.execute(db);
    const order_id = order.rows[0]!.order_id;
    assert.equal(order.rows[0]!.status, "pending", "the supplier made it; we had not recorded it");
    const made =
      supplier === "Airalo" ? (await airaloOrdersOf(order_id)).length : await esimgoOrdersOf(order_id);
    assert.equal(made, 1, "the supplier committed before the crash");
    const restarted = await world.startService(SUPPLIERS_ENV);
    try {
      // Nobody retries: the resolver alone finishes the order, from the supplier's record.
      await waitFor("the resolver", async () => (await orderRow(order_id)).status === "completed", 30_000);
      if (supplier === "Airalo") assert.equal((await airaloOrdersOf(order_id)).length, 1);
      else assert.equal(await esimgoOrdersOf(order_id), 1);
      assert.deepEqual(await charges(order_id), [{ kind: "purchase", state: "posted" }]);
      assert.equal(
        await balance(restarted.url, partner.api_key),
        100_00 - Number(order.rows[0]!.total_minor),
      );
    } finally {
      await restarted.stop();
    }
  });
}

test("in the sandbox without suppliers' URLs, the service starts their built-in simulations at first use and buys from them", async () => {
  const sandbox = await world.startService();
  try {
    assert.doesNotMatch(sandbox.logs(), /simulation started/, "nothing started before a supplier is asked");
    for (const package_id of [AIRALO_SIM, ESIMGO_SIM]) {
      const partner = await newPartner(sandbox.url, 100_00);
      const cart = await newCart(sandbox.url, partner.api_key, package_id);
      const bought = await submit(sandbox.url, partner.api_key, cart.cart_key);
      assert.equal(bought.status, 200, JSON.stringify(bought.body));
      const order_id = bought.body.orderID as string;
      if (package_id === AIRALO_SIM) assert.equal((await airaloOrdersOf(order_id)).length, 1);
      else assert.equal(await esimgoOrdersOf(order_id), 1);
    }
    assert.match(sandbox.logs(), /sandbox Airalo simulation started/);
    assert.match(sandbox.logs(), /sandbox eSIM Go simulation started/);
  } finally {
    await sandbox.stop();
  }
});

test("a production start without suppliers' credentials serves the carrier's packages and refuses a supplier's before any order: 503, nothing charged or created", async () => {
  const production = await world.startService({
    APP_ENV: "production",
    CARRIER_CALLBACK_TOKEN: "a-long-callback-token-0123456789",
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    PUBLIC_BASE_URL: "https://console.esim.example",
    // Production wants a stale job to be far older than any carrier call.
    STALE_JOB_AFTER_MS: "60000",
  });
  try {
    const partner = await newPartner(production.url, 100_00);
    const carrierCart = await newCart(production.url, partner.api_key, "fr-1gb-7d");
    const carrierOrder = await submit(production.url, partner.api_key, carrierCart.cart_key);
    assert.equal(carrierOrder.status, 200, JSON.stringify(carrierOrder.body));
    const before = await balance(production.url, partner.api_key);
    const airaloBefore = await airaloOrderCount();
    const supplierCart = await newCart(production.url, partner.api_key, AIRALO_SIM);
    const refused = await submit(production.url, partner.api_key, supplierCart.cart_key);
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.code, "carrier_unavailable");
    assert.match(refused.body.detail, /cannot be reached now\. Nothing was charged and no order was created/);
    assert.equal(await balance(production.url, partner.api_key), before, "nothing charged");
    assert.equal(await airaloOrderCount(), airaloBefore, "nothing asked of Airalo");
    const orders = await sql`select 1 from orders where cart_key = ${supplierCart.cart_key}`.execute(db);
    assert.equal(orders.rows.length, 0, "no order created");
    const holds = await sql<{ n: number }>`
      select count(*)::int as n from ledger_transfers t join orders o on o.order_id = t.reference
      where o.partner_id = ${partner.partner_id} and o.supplier = 'airalo'`.execute(db);
    assert.equal(holds.rows[0]!.n, 0, "no hold");
  } finally {
    await production.stop();
  }
});
