// An order whose supplier outcome stays unknown (issue 33 review, item 6): two top-ups at Airalo
// whose answers were lost, and which Airalo made without our description ("Topup (<iccid>)", as in
// its docs), cannot be told apart. The adapter's lookUpOutcome answers `unavailable` (never
// `not_found`: that would let them be re-posted or taken for "nothing made"), so they stay pending,
// listed for the operator, and the operator settles them through POST /admin/orders/{id}/settle:
// `completed` is refused while the supplier cannot say what it made, `failed` voids the hold, owes a
// later look at the supplier, and nothing is posted to Airalo again.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { AiraloCarrier } from "../src/carrier/airalo/airalo-carrier.ts";
import { listAiraloPackages } from "../src/carrier/airalo/list-packages.ts";
import { syncSupplierCatalog } from "../src/catalog/sync-supplier-catalog.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { startAiralo } from "../src/simulators/airalo/server.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { END_USER, purchase } from "./support/fixtures.ts";

const CLIENT_ID = "settle-test-client";
const CLIENT_SECRET = "settle-test-secret-0123456789";
const TOPUP = "uki-mobile-7days-1gb-topup";

const database = await createTestDatabase({ catalog: true });
const fake = await startAiralo({
  pool: database.pool,
  port: 0,
  host: "127.0.0.1",
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
  log: () => undefined,
});
after(() => fake.close());
const base_url = `${fake.url}/v2`;
let topUpPosts = 0;
/** Airalo replacing our description on top-ups (docs/suppliers/airalo.md §4), counted on the way. */
const airaloAsDocumented: typeof fetch = (input, init) => {
  if (String(input).endsWith("/orders/topups") && init?.body instanceof FormData) {
    topUpPosts++;
    const form = new FormData();
    for (const [name, value] of init.body.entries()) if (name !== "description") form.append(name, value);
    return fetch(input, { ...init, body: form });
  }
  return fetch(input, init);
};
const carrier = new AiraloCarrier({
  pool: database.pool,
  base_url,
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
  timeout_ms: 5_000,
  fetch: airaloAsDocumented,
  in_flight_ms: 0,
});
const service = await createTestApp({}, { carrier, database });
await service.app.listen({ port: 0, host: "127.0.0.1" });
const api = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function control(body: unknown): Promise<void> {
  const response = await fetch(`${fake.url}/control`, {
    method: "POST",
    headers: { authorization: `Bearer ${CLIENT_SECRET}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.ok(response.ok);
}

async function submitTopUp(api_key: string, iccid: string, key: string) {
  const response = await fetch(`${api}/v1/orders/submit-topup`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${api_key}`,
      "content-type": "application/json",
      "idempotency-key": key,
    },
    body: JSON.stringify({ iccid, package_id: `airalo-${TOPUP}`, external_package_id: TOPUP, ...END_USER }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

test("two lost, untagged top-ups stay pending for the operator, who can fail them but not complete them; Airalo is never asked twice", async () => {
  await control({ disarm: true, reset_rate_limits: true });
  await fetch(`${fake.url}/control/account`, {
    method: "POST",
    headers: { authorization: `Bearer ${CLIENT_SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ credit_usd: 100_000 }),
  });
  await syncSupplierCatalog(database.pool, {
    supplier: "airalo",
    markup_basis_points: 0,
    destination_codes: ["GB"],
    currency: "USD",
    actor: CLI_ACTOR,
    list: () =>
      listAiraloPackages({
        pool: database.pool,
        base_url,
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        timeout_ms: 5_000,
      }),
  });
  const partner = await service.createPartner("Settle Travel", 100_000);
  const bought = await purchase(api, partner.api_key, "airalo-uki-mobile-7days-1gb");
  const iccid: string = bought.esim_iccid;

  await control({ arm: [{ operation: "topup", kind: "commit_then_500", times: 2 }] });
  const first = await submitTopUp(partner.api_key, iccid, "settle-first");
  const second = await submitTopUp(partner.api_key, iccid, "settle-second");
  const orders = [first.body.order_id, second.body.order_id] as string[];
  assert.deepEqual([first.status, second.status], [503, 503]);
  assert.ok(
    orders.every((id) => typeof id === "string"),
    JSON.stringify([first, second]),
  );
  assert.equal(topUpPosts, 2);

  for (const order_id of orders) {
    const looked = await carrier.lookUpOutcome(order_id);
    assert.equal(looked.kind, "unavailable", JSON.stringify(looked));
    assert.match((looked as { reason: string }).reason, /an operator must match them/);
  }
  // Findable: both are pending in the operator's order list.
  const pending = await service.app.inject({
    url: `/admin/partners/${partner.partner_id}/orders?status=pending`,
    headers: admin,
  });
  const listed = JSON.stringify(pending.json());
  for (const order_id of orders) assert.ok(listed.includes(order_id), `${order_id} listed as pending`);

  const completing = await service.app.inject({
    method: "POST",
    url: `/admin/orders/${orders[0]}/settle`,
    headers: admin,
    payload: { outcome: "completed", reason: "Airalo order 1234 is ours" },
  });
  assert.equal(completing.statusCode, 503, completing.body);
  assert.equal(completing.json().code, "carrier_unavailable");

  for (const order_id of orders) {
    const failing = await service.app.inject({
      method: "POST",
      url: `/admin/orders/${order_id}/settle`,
      headers: admin,
      payload: { outcome: "failed", reason: "Airalo ticket: two top-ups, matched by hand" },
    });
    assert.equal(failing.statusCode, 200, failing.body);
    const order = await service.app.inject({
      url: `/v1/orders/${order_id}`,
      headers: service.auth(partner.api_key),
    });
    assert.equal(order.json().status, "failed");
  }
  const wallet = await service.app.inject({
    url: "/v1/profile/wallet",
    headers: service.auth(partner.api_key),
  });
  assert.equal(wallet.json().pending.amount_minor, 0, "the holds are voided");
  const owed = await database.pool.query(
    "select count(*)::int as n from orders where order_id = any($1::text[]) and carrier_check = 'due'",
    [orders],
  );
  assert.equal(owed.rows[0].n, 2, "a later look at Airalo is owed for each");
  // Nothing was posted to Airalo again, whatever was asked meanwhile.
  for (const order_id of orders) assert.equal((await carrier.lookUpOutcome(order_id)).kind, "unavailable");
  assert.equal(topUpPosts, 2);
});
