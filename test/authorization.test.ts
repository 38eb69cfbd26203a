// The authorization matrix (issue 5): every partner operation of the served OpenAPI document
// crossed with every way of presenting the wrong credentials, and with another partner's valid key
// on this partner's objects; every operator operation with no, a wrong and the right token, and
// with the operator API disabled. Expected answers are written in the tables, cell by cell; a
// route added to the document without a row here fails the coverage assertions. Two more columns
// (issue 31) follow from the method alone: the owner's read-only key (reads answer, writes 403
// insufficient_scope) and the owner's key allowlisted elsewhere (403 ip_not_allowed on every route).
//
// Real objects throughout: carts, an order and an ICCID bought from the carrier simulator (its own
// process), and a top-up stored under an Idempotency-Key.
import assert from "node:assert/strict";
import { test } from "node:test";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { luhnCheckDigit } from "../src/lib/luhn.ts";
import { generateApiKey } from "../src/partners/api-keys.ts";
import { suspensionExemption } from "../src/partners/suspension-exemptions.ts";
import { ADMIN_TOKEN, createTestApp, type TestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { END_USER } from "./support/fixtures.ts";
import { changedTables, operationsOf, snapshotTables } from "./support/fuzz.ts";
import { type Answer, bearer, type Json, request } from "./support/http.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
// Private networks allowed: the owner's webhook endpoint points at loopback (nothing is sent: no loop runs here).
const sandbox = await createTestApp(
  { carrier_timeout_ms: 5_000, webhook_allow_private_networks: true },
  { database, carrier },
);
const production = await createTestApp({ app_env: "production" }, { database, carrier });
const disabled = await createTestApp({ admin_token: null }, { database, carrier });
const doc = (await sandbox.app.inject({ url: "/openapi.json" })).json();
const operations = operationsOf(doc).filter((op) => op.documented);

const PACKAGE = "fr-1gb-7d";

/** One request to one of the apps, in-process (test/support/http.ts with the app as target). */
function call(
  app: TestApp,
  method: string,
  url: string,
  options: { headers?: Record<string, string>; payload?: Json } = {},
): Promise<Answer> {
  return request(app.app, method, url, { headers: options.headers, body: options.payload });
}

const admin = bearer(ADMIN_TOKEN);

/** A partner with a funded wallet, an open cart, a bought eSIM and a top-up under an Idempotency-Key. */
async function partnerWithObjects(name: string, credit_minor: number) {
  const partner = await sandbox.createPartner(name, credit_minor);
  const cart = async () =>
    (
      await call(sandbox, "POST", "/v1/orders/cart", {
        headers: bearer(partner.api_key),
        payload: { package_id: PACKAGE },
      })
    ).body.cart_key as string;
  const bought = await call(sandbox, "POST", "/v1/orders/submit", {
    headers: bearer(partner.api_key),
    payload: { cart_key: await cart(), ...END_USER },
  });
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  const iccid: string = bought.body.purchases[0].iccid;
  const offer = await call(sandbox, "GET", `/v1/orders/available-topups/${iccid}`, {
    headers: bearer(partner.api_key),
  });
  assert.equal(offer.status, 200, JSON.stringify(offer.body));
  const row = offer.body.data[0];
  const topup = {
    iccid,
    package_id: row.package_id,
    external_package_id: row.external_package_id,
    ...END_USER,
  };
  const idempotency_key = `authz-${name}-${Date.now()}`;
  const stored = await call(sandbox, "POST", "/v1/orders/submit-topup", {
    headers: { ...bearer(partner.api_key), "idempotency-key": idempotency_key },
    payload: topup,
  });
  assert.equal(stored.status, 200, JSON.stringify(stored.body));
  return {
    ...partner,
    cart_key: await cart(),
    order_id: bought.body.orderID as string,
    iccid,
    topup,
    idempotency_key,
    stored_topup_order: stored.body.orderID as string,
  };
}

// Different credits, so the two wallets can never answer the same balance by chance.
const owner = await partnerWithObjects("Owner", 1_000_000);
const intruder = await partnerWithObjects("Intruder", 2_000_000);
/** The owner's webhook endpoint, one test event of it and that event's delivery. */
async function webhookObjects(api_key: string) {
  const created = await call(sandbox, "POST", "/v1/webhook-endpoints", {
    headers: bearer(api_key),
    payload: { url: "http://127.0.0.1:9/owner-hook" },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const endpoint_id: string = created.body.endpoint_id;
  const tested = await call(sandbox, "POST", `/v1/webhook-endpoints/${endpoint_id}/test`, {
    headers: bearer(api_key),
  });
  assert.equal(tested.status, 202, JSON.stringify(tested.body));
  const log = await call(sandbox, "GET", `/v1/webhook-endpoints/${endpoint_id}/deliveries`, {
    headers: bearer(api_key),
  });
  return {
    endpoint_id,
    event_id: tested.body.event_id as string,
    delivery_id: log.body.data[0].delivery_id as string,
  };
}
const ownerHook = await webhookObjects(owner.api_key);
/** A feed position just before the owner's price list changed: the change after it is the owner's only. */
const beforeOwnerPrices = Buffer.from(
  `cs1:${(await database.pool.query("select max(seq)::int as seq from catalog_changes")).rows[0].seq}`,
).toString("base64url");
assert.equal(
  (
    await call(sandbox, "PUT", `/admin/partners/${owner.partner_id}/pricing`, {
      headers: admin,
      payload: { discount_percent: 0, overrides: [{ package_id: "de-5gb-30d", amount_minor: 999 }] },
    })
  ).status,
  200,
);
const revoked = (
  await call(sandbox, "POST", `/admin/partners/${owner.partner_id}/api-keys`, { headers: admin })
).body;
assert.equal(
  (await call(sandbox, "DELETE", `/admin/api-keys/${revoked.key_id}`, { headers: admin })).status,
  204,
);
/** The owner's keys restricted by issue 31: read-only, and allowed only from an address tests never use. */
const ownerKey = async (payload: Json) =>
  (await call(sandbox, "POST", `/admin/partners/${owner.partner_id}/api-keys`, { headers: admin, payload }))
    .body as { api_key: string };
const readOnly = await ownerKey({ name: "matrix read-only", scope: "read_only" });
const elsewhere = await ownerKey({ name: "matrix allowlisted", allowed_ips: ["192.0.2.0/24"] });

// ---------------------------------------------------------------------------------------------
// Partner operations

type Expected = { status: number; code?: string };
const UNAUTHORIZED: Expected = { status: 401, code: "unauthorized" };
const WRONG_ENVIRONMENT: Expected = { status: 401, code: "wrong_environment" };

type Request = { method: string; url: string; payload?: Json; headers?: Record<string, string> };

type PartnerRow = {
  /** `METHOD /path` as in the OpenAPI document. */
  operation: string;
  /** What to ask, naming the owner's objects (a valid request for the owner). */
  request: Request;
  /** Columns: how the credentials are wrong, and what must come back. */
  no_key: Expected;
  malformed_key: Expected;
  revoked_key: Expected;
  /** A prod_ key on the sandbox app. */
  production_key_on_sandbox: Expected;
  /** The owner's sandbox key on an app built with APP_ENV=production over the same database. */
  sandbox_key_on_production: Expected;
  /** The intruder's valid key on the owner's objects. */
  other_partner: Expected & { check?: (body: Json) => void };
};

const ownerOrderIds = async () =>
  (
    await call(sandbox, "GET", "/v1/profile/orders?limit=100", { headers: bearer(owner.api_key) })
  ).body.data.map((order: Json) => order.orderID);

/** A partner row whose other-partner answer is a 404 with `code`, like an unknown object's. */
function hiddenRow(operation: string, request: Request, code: string): PartnerRow {
  return {
    operation,
    request,
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: { status: 404, code },
  };
}

/** A partner row that names nothing of the owner's: the intruder gets its own, checked by `check`. */
function ownRow(
  operation: string,
  request: Request,
  status: number,
  check: (body: Json) => void,
): PartnerRow {
  return { ...hiddenRow(operation, request, ""), other_partner: { status, check } };
}

const hook = `/v1/webhook-endpoints/${ownerHook.endpoint_id}`;
const NOT_FOUND_HOOK = "webhook_endpoint_not_found";
const WEBHOOK_ROWS: PartnerRow[] = [
  ownRow(
    "POST /v1/webhook-endpoints",
    { method: "POST", url: "/v1/webhook-endpoints", payload: { url: "http://127.0.0.1:9/intruder" } },
    201,
    (body) => assert.notEqual(body.endpoint_id, ownerHook.endpoint_id),
  ),
  ownRow("GET /v1/webhook-endpoints", { method: "GET", url: "/v1/webhook-endpoints" }, 200, (body) =>
    assert.ok(!JSON.stringify(body).includes(ownerHook.endpoint_id), "none of the owner's endpoints"),
  ),
  hiddenRow("GET /v1/webhook-endpoints/{endpoint_id}", { method: "GET", url: hook }, NOT_FOUND_HOOK),
  hiddenRow(
    "PATCH /v1/webhook-endpoints/{endpoint_id}",
    { method: "PATCH", url: hook, payload: { description: "mine now" } },
    NOT_FOUND_HOOK,
  ),
  hiddenRow("DELETE /v1/webhook-endpoints/{endpoint_id}", { method: "DELETE", url: hook }, NOT_FOUND_HOOK),
  hiddenRow(
    "POST /v1/webhook-endpoints/{endpoint_id}/rotate-secret",
    { method: "POST", url: `${hook}/rotate-secret` },
    NOT_FOUND_HOOK,
  ),
  hiddenRow(
    "POST /v1/webhook-endpoints/{endpoint_id}/test",
    { method: "POST", url: `${hook}/test` },
    NOT_FOUND_HOOK,
  ),
  hiddenRow(
    "GET /v1/webhook-endpoints/{endpoint_id}/deliveries",
    { method: "GET", url: `${hook}/deliveries` },
    NOT_FOUND_HOOK,
  ),
  hiddenRow(
    "POST /v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry",
    { method: "POST", url: `${hook}/deliveries/${ownerHook.delivery_id}/retry` },
    NOT_FOUND_HOOK,
  ),
  ownRow("GET /v1/events", { method: "GET", url: "/v1/events?limit=100" }, 200, (body) =>
    assert.ok(!JSON.stringify(body).includes(ownerHook.event_id), "none of the owner's events"),
  ),
  hiddenRow(
    "GET /v1/events/{event_id}",
    { method: "GET", url: `/v1/events/${ownerHook.event_id}` },
    "event_not_found",
  ),
  // The owner's endpoint was created with its key: an entry of the owner's log, never the intruder's.
  ownRow("GET /v1/audit-log", { method: "GET", url: "/v1/audit-log?limit=100" }, 200, (body) =>
    assert.ok(!JSON.stringify(body).includes(ownerHook.endpoint_id), "none of the owner's entries"),
  ),
];

const PARTNER_ROWS: PartnerRow[] = [
  ...WEBHOOK_ROWS,
  {
    operation: "GET /v1/compatible-devices",
    request: { method: "GET", url: "/v1/compatible-devices?q=pixel" },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    // The list is the service's, the same for every partner.
    other_partner: { status: 200, check: (body) => assert.ok(body.data.length > 0) },
  },
  {
    operation: "GET /v1/esim/destinations",
    request: { method: "GET", url: "/v1/esim/destinations" },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    // The list is the catalog's, at the caller's own prices: nothing of another partner's.
    other_partner: { status: 200, check: (body) => assert.ok(body.data.length > 0) },
  },
  {
    operation: "GET /v1/esim/destination/{destination_code}/packages",
    request: { method: "GET", url: "/v1/esim/destination/FR/packages" },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    // The catalog belongs to nobody: the same answer for every partner.
    other_partner: { status: 200, check: (body) => assert.equal(body.destination_code, "FR") },
  },
  {
    operation: "GET /v1/catalog/changes",
    request: { method: "GET", url: `/v1/catalog/changes?since=${beforeOwnerPrices}` },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    // The owner's price list is the owner's change: the intruder's feed has nothing after it.
    other_partner: { status: 200, check: (body) => assert.deepEqual(body.data, []) },
  },
  {
    operation: "POST /v1/orders/cart",
    request: { method: "POST", url: "/v1/orders/cart", payload: { package_id: PACKAGE } },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    // Nothing of the owner's is named: the intruder gets a cart of its own.
    other_partner: { status: 201, check: (body) => assert.notEqual(body.cart_key, owner.cart_key) },
  },
  {
    operation: "POST /v1/orders/submit",
    request: { method: "POST", url: "/v1/orders/submit", payload: { cart_key: owner.cart_key, ...END_USER } },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: { status: 404, code: "cart_not_found" },
  },
  {
    operation: "GET /v1/orders/{orderID}",
    request: { method: "GET", url: `/v1/orders/${owner.order_id}` },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: { status: 404, code: "order_not_found" },
  },
  {
    // The intruder's refund of the owner's order, under the owner's own key string: never refunded.
    operation: "POST /v1/orders/{orderID}/refund",
    request: {
      method: "POST",
      url: `/v1/orders/${owner.order_id}/refund`,
      headers: { "idempotency-key": owner.idempotency_key },
    },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: { status: 404, code: "order_not_found" },
  },
  {
    // The intruder's resend of the owner's order: nothing queued, nothing sent.
    operation: "POST /v1/orders/{orderID}/resend-email",
    request: { method: "POST", url: `/v1/orders/${owner.order_id}/resend-email`, payload: {} },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: { status: 404, code: "order_not_found" },
  },
  {
    operation: "GET /v1/orders/{orderID}/emails",
    request: { method: "GET", url: `/v1/orders/${owner.order_id}/emails` },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: { status: 404, code: "order_not_found" },
  },
  {
    operation: "GET /v1/orders/{orderID}/events",
    request: { method: "GET", url: `/v1/orders/${owner.order_id}/events` },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: { status: 404, code: "order_not_found" },
  },
  {
    operation: "GET /v1/orders/available-topups/{iccid}",
    request: { method: "GET", url: `/v1/orders/available-topups/${owner.iccid}` },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: { status: 404, code: "esim_not_found" },
  },
  {
    operation: "POST /v1/orders/submit-topup",
    // The owner's exact stored request, its Idempotency-Key included: the intruder must not get
    // the owner's stored 200 back, only what its own request deserves (the ICCID is not its own).
    request: {
      method: "POST",
      url: "/v1/orders/submit-topup",
      payload: owner.topup,
      headers: { "idempotency-key": owner.idempotency_key },
    },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: { status: 404, code: "esim_not_found" },
  },
  {
    operation: "GET /v1/profile/orders",
    request: { method: "GET", url: "/v1/profile/orders?limit=100" },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: {
      status: 200,
      check: (body) => {
        const ids = body.data.map((order: Json) => order.orderID);
        assert.ok(ids.length > 0 && !ids.includes(owner.order_id), "only the intruder's own orders");
      },
    },
  },
  {
    operation: "GET /v1/esims",
    request: { method: "GET", url: "/v1/esims?limit=100" },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: {
      status: 200,
      check: (body) => {
        const iccids = body.data.map((esim: Json) => esim.iccid);
        assert.ok(
          iccids.includes(intruder.iccid) && !iccids.includes(owner.iccid),
          "only the intruder's own",
        );
      },
    },
  },
  {
    operation: "GET /v1/esims/{iccid}",
    request: { method: "GET", url: `/v1/esims/${owner.iccid}` },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: { status: 404, code: "esim_not_found" },
  },
  {
    operation: "GET /v1/esims/{iccid}/qr.png",
    request: { method: "GET", url: `/v1/esims/${owner.iccid}/qr.png` },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: { status: 404, code: "esim_not_found" },
  },
  {
    operation: "POST /v1/sandbox/esims/{iccid}/simulate",
    request: {
      method: "POST",
      url: `/v1/sandbox/esims/${owner.iccid}/simulate`,
      payload: { event: "install" },
    },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    // Sandbox only: production has no such route at all.
    sandbox_key_on_production: { status: 404, code: "not_found" },
    other_partner: { status: 404, code: "esim_not_found" },
  },
  {
    operation: "GET /v1/profile/wallet",
    request: { method: "GET", url: "/v1/profile/wallet" },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: {
      status: 200,
      check: (body) => assert.ok(body.balance.amount_minor > 1_000_000, "the intruder's own balance"),
    },
  },
  {
    operation: "GET /v1/profile/wallet/transactions",
    request: { method: "GET", url: "/v1/profile/wallet/transactions?limit=100" },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    other_partner: {
      status: 200,
      check: (body) => {
        const orders = body.data.map((row: Json) => row.order_id);
        assert.ok(body.data.length > 0, "the intruder's own statement");
        assert.ok(!orders.includes(owner.order_id), "none of the owner's transactions");
      },
    },
  },
  {
    operation: "GET /v1/profile/wallet/statements/{month}",
    request: { method: "GET", url: `/v1/profile/wallet/statements/${new Date().toISOString().slice(0, 7)}` },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    // Nothing of the owner's is named: the intruder reads its own month.
    other_partner: {
      status: 200,
      check: (body) => assert.ok(body.closing_balance.amount_minor > 1_000_000, "the intruder's own wallet"),
    },
  },
  {
    operation: "PUT /v1/profile/wallet/low-balance-alert",
    request: {
      method: "PUT",
      url: "/v1/profile/wallet/low-balance-alert",
      payload: { threshold_minor: null },
    },
    no_key: UNAUTHORIZED,
    malformed_key: UNAUTHORIZED,
    revoked_key: UNAUTHORIZED,
    production_key_on_sandbox: WRONG_ENVIRONMENT,
    sandbox_key_on_production: WRONG_ENVIRONMENT,
    // Nothing of the owner's is named: the intruder sets its own wallet's alert.
    other_partner: {
      status: 200,
      check: (body) => assert.ok(body.balance.amount_minor > 1_000_000, "the intruder's own wallet"),
    },
  },
  ...(["branding", "notifications"] as const).flatMap((setting): PartnerRow[] => {
    const payload = setting === "branding" ? { display_name: "Intruder" } : { confirmation_email: true };
    const wrong = {
      no_key: UNAUTHORIZED,
      malformed_key: UNAUTHORIZED,
      revoked_key: UNAUTHORIZED,
      production_key_on_sandbox: WRONG_ENVIRONMENT,
      sandbox_key_on_production: WRONG_ENVIRONMENT,
    };
    // Nothing of the owner's is named: the intruder reads and sets its own.
    const own = {
      status: 200,
      check: (body: Json) =>
        assert.ok(body !== null && typeof body === "object", "the intruder's own settings"),
    };
    return [
      {
        operation: `GET /v1/profile/${setting}`,
        request: { method: "GET", url: `/v1/profile/${setting}` },
        ...wrong,
        other_partner: own,
      },
      {
        operation: `PUT /v1/profile/${setting}`,
        request: { method: "PUT", url: `/v1/profile/${setting}`, payload },
        ...wrong,
        other_partner: own,
      },
    ];
  }),
];

type Column = Exclude<keyof PartnerRow, "operation" | "request">;

const COLUMNS: Array<{ column: Column; app: TestApp; headers: Record<string, string> }> = [
  { column: "no_key", app: sandbox, headers: {} },
  { column: "malformed_key", app: sandbox, headers: { authorization: "Bearer sand_not-a-key" } },
  { column: "revoked_key", app: sandbox, headers: bearer(revoked.api_key) },
  {
    column: "production_key_on_sandbox",
    app: sandbox,
    headers: bearer(generateApiKey("production").api_key),
  },
  { column: "sandbox_key_on_production", app: production, headers: bearer(owner.api_key) },
  { column: "other_partner", app: sandbox, headers: bearer(intruder.api_key) },
];

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Columns whose answer follows from the row's method: the owner's own, restricted keys (issue 31). */
const RESTRICTED_COLUMNS: Array<{
  column: string;
  headers: Record<string, string>;
  expected: (row: PartnerRow) => Expected;
}> = [
  {
    column: "read_only_key",
    headers: bearer(readOnly.api_key),
    expected: (row) =>
      READS.has(row.request.method) ? { status: 200 } : { status: 403, code: "insufficient_scope" },
  },
  {
    // The sandbox app sees every injected request from 127.0.0.1, outside 192.0.2.0/24.
    column: "key_from_outside_its_allowed_ips",
    headers: bearer(elsewhere.api_key),
    expected: () => ({ status: 403, code: "ip_not_allowed" }),
  },
];

function assertAnswer(answer: Answer, expected: Expected, cell: string): void {
  assert.equal(answer.status, expected.status, `${cell}: ${JSON.stringify(answer.body)}`);
  if (expected.code) {
    assert.match(String(answer.headers.get("content-type")), /^application\/problem\+json/, cell);
    assert.equal(answer.body.code, expected.code, cell);
  }
}

test("the partner table covers every /v1 operation of the OpenAPI document", () => {
  const documented = operations
    .filter((op) => op.area === "partner")
    .map((op) => op.id)
    .sort();
  const rows = PARTNER_ROWS.map((row) => row.operation).sort();
  assert.deepEqual(rows, documented, "add a row to PARTNER_ROWS for every partner operation");
});

test("every partner operation refuses missing, malformed, revoked and other-environment keys, a read-only key's writes and a key from outside its allowed IPs, and hides other partners' objects", async () => {
  const columns = [
    ...COLUMNS.map((c) => ({ ...c, expected: (row: PartnerRow): Expected => row[c.column] })),
    ...RESTRICTED_COLUMNS.map((c) => ({ ...c, app: sandbox })),
  ];
  for (const row of PARTNER_ROWS) {
    for (const { column, app, headers, expected: expectedOf } of columns) {
      const cell = `${row.operation} × ${column}`;
      const before = await snapshotTables(sandbox.db);
      const answer = await call(app, row.request.method, row.request.url, {
        headers: { ...headers, ...row.request.headers },
        payload: row.request.payload,
      });
      const expected = expectedOf(row);
      assertAnswer(answer, expected, cell);
      if (expected.status >= 400) {
        assert.deepEqual(
          changedTables(before, await snapshotTables(sandbox.db)),
          [],
          `${cell} changed nothing`,
        );
        // Another partner's object answers exactly as an unknown one: no owner id, ICCID or key in it.
        const text = JSON.stringify(answer.body);
        for (const secret of [owner.order_id, owner.cart_key, owner.partner_id, owner.api_key]) {
          assert.ok(!text.includes(secret), `${cell} leaks ${secret}`);
        }
      }
      if (column === "other_partner" && "check" in expected) row.other_partner.check?.(answer.body);
      if (column === "key_from_outside_its_allowed_ips") {
        assert.ok(!JSON.stringify(answer.body).includes("192.0.2."), `${cell} does not tell the allowlist`);
      }
    }
  }
  // The owner's objects are all still the owner's, untouched.
  const ownerWallet = await call(sandbox, "GET", "/v1/profile/wallet", { headers: bearer(owner.api_key) });
  assert.ok(ownerWallet.body.balance.amount_minor < 1_000_000);
  assert.ok((await ownerOrderIds()).includes(owner.order_id));
});

/** A write a suspended partner may still make (src/partners/suspension-exemptions.ts): it only takes access away. */
function exemptWhileSuspended(method: string, path: string): boolean {
  return suspensionExemption(method, path.replace(/\{(\w+)\}/g, ":$1")) === true;
}

test("every partner operation documents 403 ip_not_allowed, and every write 403 insufficient_scope and, but those exempt while suspended, partner_suspended", () => {
  let exempt = 0;
  for (const op of operations.filter((o) => o.area === "partner")) {
    const problem = (op.responses as Record<string, Json>)["403"]?.content?.["application/problem+json"];
    const codes: string[] = problem?.schema?.["x-error-codes"] ?? [];
    assert.ok(codes.includes("ip_not_allowed"), `${op.id} lists ip_not_allowed`);
    assert.equal(codes.includes("insufficient_scope"), !READS.has(op.method), `${op.id}: insufficient_scope`);
    const refusedWhileSuspended = !READS.has(op.method) && !exemptWhileSuspended(op.method, op.path);
    if (exemptWhileSuspended(op.method, op.path)) exempt++;
    assert.equal(codes.includes("partner_suspended"), refusedWhileSuspended, `${op.id}: partner_suspended`);
  }
  assert.equal(exempt, 1, "DELETE /v1/webhook-endpoints/{endpoint_id} is the API's one exempt write");
});

test("the owner suspended: every partner operation reads as before and every write answers 403 partner_suspended, changing nothing, but those that only take access away", async () => {
  const suspend = await call(sandbox, "PATCH", `/admin/partners/${owner.partner_id}`, {
    headers: admin,
    payload: { status: "suspended", reason: "matrix" },
  });
  assert.equal(suspend.status, 200, JSON.stringify(suspend.body));
  sandbox.authenticator.onPartnerStatusChanged(owner.partner_id);
  try {
    for (const row of PARTNER_ROWS) {
      const cell = `${row.operation} × suspended partner's own key`;
      const [method = "", path = ""] = row.operation.split(" ");
      if (exemptWhileSuspended(method, path)) {
        // Not refused: past the suspension, on an unknown endpoint (the owner's is kept for the rows
        // after this one; partners.suspend.test.ts deletes one).
        const unknown = await call(sandbox, method, "/v1/webhook-endpoints/we_AAAAAAAAAAAAAAAAAAAAAA", {
          headers: bearer(owner.api_key),
        });
        assertAnswer(unknown, { status: 404, code: NOT_FOUND_HOOK }, cell);
        continue;
      }
      const before = await snapshotTables(sandbox.db);
      const answer = await call(sandbox, row.request.method, row.request.url, {
        headers: { ...bearer(owner.api_key), ...row.request.headers },
        payload: row.request.payload,
      });
      if (READS.has(row.request.method)) {
        assert.equal(answer.status, 200, `${cell}: ${JSON.stringify(answer.body)}`);
        continue;
      }
      assertAnswer(answer, { status: 403, code: "partner_suspended" }, cell);
      assert.deepEqual(
        changedTables(before, await snapshotTables(sandbox.db)),
        [],
        `${cell} changed nothing`,
      );
    }
  } finally {
    const reactivate = await call(sandbox, "PATCH", `/admin/partners/${owner.partner_id}`, {
      headers: admin,
      payload: { status: "active", reason: "matrix done" },
    });
    assert.equal(reactivate.status, 200);
    sandbox.authenticator.onPartnerStatusChanged(owner.partner_id);
  }
});

test("unknown objects answer exactly as other partners' objects do", async () => {
  // Same status, code and detail: nothing tells a guessed id of another partner from a missing one.
  const unknownOrder = "ord_AAAAAAAAAAAAAAAAAAAAAA";
  const unknownIccid = `890126099999999999${luhnCheckDigit("890126099999999999")}`;
  const unknownHook = "we_AAAAAAAAAAAAAAAAAAAAAA";
  const unknownEvent = "evt_AAAAAAAAAAAAAAAAAAAAAA";
  const pairs: Array<[string, string, string, string]> = [
    [hook, ownerHook.endpoint_id, `/v1/webhook-endpoints/${unknownHook}`, unknownHook],
    [`/v1/events/${ownerHook.event_id}`, ownerHook.event_id, `/v1/events/${unknownEvent}`, unknownEvent],
    [`/v1/orders/${owner.order_id}`, owner.order_id, `/v1/orders/${unknownOrder}`, unknownOrder],
    [
      `/v1/orders/available-topups/${owner.iccid}`,
      owner.iccid,
      `/v1/orders/available-topups/${unknownIccid}`,
      unknownIccid,
    ],
  ];
  for (const [foreignUrl, foreignId, unknownUrl, unknownId] of pairs) {
    const foreign = await call(sandbox, "GET", foreignUrl, { headers: bearer(intruder.api_key) });
    const unknown = await call(sandbox, "GET", unknownUrl, { headers: bearer(intruder.api_key) });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.status, unknown.status);
    assert.equal(foreign.body.code, unknown.body.code);
    assert.equal(
      foreign.body.detail.replaceAll(foreignId, "ID"),
      unknown.body.detail.replaceAll(unknownId, "ID"),
    );
  }
  const foreignCart = await call(sandbox, "POST", "/v1/orders/submit", {
    headers: bearer(intruder.api_key),
    payload: { cart_key: owner.cart_key, ...END_USER },
  });
  const unknownCart = await call(sandbox, "POST", "/v1/orders/submit", {
    headers: bearer(intruder.api_key),
    payload: { cart_key: "cart_AAAAAAAAAAAAAAAAAAAAAA", ...END_USER },
  });
  assert.deepEqual(
    [foreignCart.status, foreignCart.body.code, foreignCart.body.detail],
    [unknownCart.status, unknownCart.body.code, unknownCart.body.detail],
  );
});

test("an Idempotency-Key is per partner: the same key string gets the other partner its own outcome", async () => {
  // The intruder sends the owner's key with a top-up of its own eSIM: a new top-up of its own,
  // never the owner's stored order.
  const own = await call(sandbox, "POST", "/v1/orders/submit-topup", {
    headers: { ...bearer(intruder.api_key), "idempotency-key": owner.idempotency_key },
    payload: intruder.topup,
  });
  assert.equal(own.status, 200, JSON.stringify(own.body));
  assert.notEqual(own.body.orderID, owner.stored_topup_order);
  assert.equal(own.headers.get("idempotent-replayed"), null);
  assert.equal(own.body.purchases[0].iccid, intruder.iccid);
  // Its key now holds its own outcome; the owner's still replays the owner's.
  const intruderReplay = await call(sandbox, "POST", "/v1/orders/submit-topup", {
    headers: { ...bearer(intruder.api_key), "idempotency-key": owner.idempotency_key },
    payload: intruder.topup,
  });
  assert.equal(intruderReplay.body.orderID, own.body.orderID);
  const ownerReplay = await call(sandbox, "POST", "/v1/orders/submit-topup", {
    headers: { ...bearer(owner.api_key), "idempotency-key": owner.idempotency_key },
    payload: owner.topup,
  });
  assert.equal(ownerReplay.status, 200);
  assert.equal(ownerReplay.body.orderID, owner.stored_topup_order);
  assert.equal(ownerReplay.headers.get("idempotent-replayed"), "true");
});

// ---------------------------------------------------------------------------------------------
// Operator operations

type AdminRow = {
  operation: string;
  /** A fresh valid request (some are consumed: a revoked key cannot be revoked for the first time twice). */
  request: () => Promise<Request>;
  no_token: Expected;
  wrong_token: Expected;
  partner_key: Expected;
  right_token: Expected;
  /** Any token, on an app without ADMIN_TOKEN: the operator API does not exist. */
  disabled: Expected;
};

const NOT_FOUND: Expected = { status: 404, code: "not_found" };

const ADMIN_ROWS: AdminRow[] = [
  {
    operation: "GET /admin/audit-log",
    request: async () => ({ method: "GET", url: `/admin/audit-log?partner_id=${owner.partner_id}` }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 200 },
    disabled: NOT_FOUND,
  },
  {
    operation: "GET /admin/partners/{partner_id}/pricing",
    request: async () => ({ method: "GET", url: `/admin/partners/${owner.partner_id}/pricing` }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 200 },
    disabled: NOT_FOUND,
  },
  {
    operation: "GET /admin/partners/{partner_id}/orders",
    request: async () => ({
      method: "GET",
      url: `/admin/partners/${owner.partner_id}/orders?status=refunded`,
    }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 200 },
    disabled: NOT_FOUND,
  },
  {
    operation: "PUT /admin/partners/{partner_id}/pricing",
    // List prices again (discount 0, no overrides): the other tests here keep their prices.
    request: async () => ({
      method: "PUT",
      url: `/admin/partners/${owner.partner_id}/pricing`,
      payload: { discount_percent: 0, overrides: [] },
    }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 200 },
    disabled: NOT_FOUND,
  },
  {
    operation: "POST /admin/partners",
    request: async () => ({ method: "POST", url: "/admin/partners", payload: { name: "Matrix Travel" } }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 201 },
    disabled: NOT_FOUND,
  },
  {
    operation: "POST /admin/partners/{partner_id}/api-keys",
    request: async () => ({ method: "POST", url: `/admin/partners/${owner.partner_id}/api-keys` }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 201 },
    disabled: NOT_FOUND,
  },
  {
    operation: "DELETE /admin/api-keys/{key_id}",
    request: async () => {
      const spare = await call(sandbox, "POST", `/admin/partners/${intruder.partner_id}/api-keys`, {
        headers: admin,
      });
      return { method: "DELETE", url: `/admin/api-keys/${spare.body.key_id}` };
    },
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 204 },
    disabled: NOT_FOUND,
  },
  {
    operation: "POST /admin/partners/{partner_id}/wallet/credits",
    request: async () => ({
      method: "POST",
      url: `/admin/partners/${owner.partner_id}/wallet/credits`,
      payload: { amount_minor: 100, reference: `matrix-${Math.random().toString(36).slice(2)}` },
    }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 201 },
    disabled: NOT_FOUND,
  },
  {
    operation: "POST /admin/partners/{partner_id}/wallet/adjustments",
    request: async () => ({
      method: "POST",
      url: `/admin/partners/${owner.partner_id}/wallet/adjustments`,
      payload: {
        amount_minor: 1,
        reason: "matrix",
        reference: `matrix-${Math.random().toString(36).slice(2)}`,
      },
    }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 201 },
    disabled: NOT_FOUND,
  },
  {
    operation: "GET /admin/partners/{partner_id}/wallet/statements/{month}",
    request: async () => ({
      method: "GET",
      url: `/admin/partners/${owner.partner_id}/wallet/statements/${new Date().toISOString().slice(0, 7)}`,
    }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 200 },
    disabled: NOT_FOUND,
  },
  {
    operation: "POST /admin/partners/{partner_id}/users",
    request: async () => ({
      method: "POST",
      url: `/admin/partners/${owner.partner_id}/users`,
      payload: { email: `matrix-${Math.random().toString(36).slice(2)}@team.test`, role: "viewer" },
    }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 201 },
    disabled: NOT_FOUND,
  },
  {
    operation: "GET /admin/partners/{partner_id}/users",
    request: async () => ({ method: "GET", url: `/admin/partners/${owner.partner_id}/users` }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 200 },
    disabled: NOT_FOUND,
  },
  {
    // An unknown order: the owner's order stays completed for the other rows (audit.log.test.ts refunds one).
    operation: "POST /admin/orders/{orderID}/refund",
    request: async () => ({
      method: "POST",
      url: "/admin/orders/ord_AAAAAAAAAAAAAAAAAAAAAA/refund",
      payload: { reason: "matrix" },
    }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 404, code: "order_not_found" },
    disabled: NOT_FOUND,
  },
  {
    // No refund of this order is held (orders.es2plus.processes.test.ts settles held ones).
    operation: "POST /admin/orders/{orderID}/refund/settle",
    request: async () => ({
      method: "POST",
      url: "/admin/orders/ord_AAAAAAAAAAAAAAAAAAAAAA/refund/settle",
      payload: { outcome: "cancelled" },
    }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 404, code: "order_not_found" },
    disabled: NOT_FOUND,
  },
  {
    operation: "GET /admin/partners",
    request: async () => ({ method: "GET", url: "/admin/partners?q=owner&status=active" }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 200 },
    disabled: NOT_FOUND,
  },
  {
    operation: "GET /admin/partners/{partner_id}",
    request: async () => ({ method: "GET", url: `/admin/partners/${owner.partner_id}` }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 200 },
    disabled: NOT_FOUND,
  },
  {
    // The intruder's name as it is: a no-op that answers 200 and leaves the owner alone.
    operation: "PATCH /admin/partners/{partner_id}",
    request: async () => ({
      method: "PATCH",
      url: `/admin/partners/${intruder.partner_id}`,
      payload: { status: "active" },
    }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 200 },
    disabled: NOT_FOUND,
  },
  {
    // An unknown order: the owner's order stays completed for the other rows.
    operation: "POST /admin/orders/{orderID}/settle",
    request: async () => ({
      method: "POST",
      url: "/admin/orders/ord_AAAAAAAAAAAAAAAAAAAAAA/settle",
      payload: { outcome: "failed", reason: "matrix" },
    }),
    no_token: UNAUTHORIZED,
    wrong_token: UNAUTHORIZED,
    partner_key: UNAUTHORIZED,
    right_token: { status: 404, code: "order_not_found" },
    disabled: NOT_FOUND,
  },
];

test("the operator table covers every /admin operation of the OpenAPI document", () => {
  const documented = operations
    .filter((op) => op.area === "admin")
    .map((op) => op.id)
    .sort();
  assert.deepEqual(ADMIN_ROWS.map((row) => row.operation).sort(), documented);
});

test("every operator operation needs the right ADMIN_TOKEN, and none exists without one", async () => {
  const columns: Array<{
    column: Exclude<keyof AdminRow, "operation" | "request">;
    app: TestApp;
    headers: Record<string, string>;
  }> = [
    { column: "no_token", app: sandbox, headers: {} },
    { column: "wrong_token", app: sandbox, headers: bearer("not-the-admin-token-0123456789") },
    { column: "partner_key", app: sandbox, headers: bearer(owner.api_key) },
    { column: "disabled", app: disabled, headers: admin },
    { column: "right_token", app: sandbox, headers: admin },
  ];
  for (const row of ADMIN_ROWS) {
    for (const { column, app, headers } of columns) {
      const cell = `${row.operation} × ${column}`;
      const request = await row.request();
      const before = await snapshotTables(sandbox.db);
      const answer = await call(app, request.method, request.url, { headers, payload: request.payload });
      assertAnswer(answer, row[column], cell);
      if (answer.status >= 400) {
        assert.deepEqual(
          changedTables(before, await snapshotTables(sandbox.db)),
          [],
          `${cell} changed nothing`,
        );
      }
    }
  }
  // Disabled means absent, even without any token: the same 404 as an unknown route.
  for (const op of operations.filter((o) => o.area === "admin")) {
    const url = op.path.replace(/\{[^}]+\}/g, "ptr_AAAAAAAAAAAAAAAAAAAAAA");
    const answer = await call(disabled, op.method, url, {});
    assertAnswer(answer, NOT_FOUND, `${op.id} on an app without ADMIN_TOKEN`);
  }
});
