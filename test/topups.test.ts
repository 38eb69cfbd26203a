// Top-ups end to end (spec 4.4, 4.5): two real service processes over one real PostgreSQL, the
// carrier simulator as its own process. Every test buys a real eSIM first, then asserts on what
// matters: balances, ledger transfers, the carrier's records and the idempotency_keys rows.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import http from "node:http";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { luhnCheckDigit } from "../src/lib/luhn.ts";
import { canonicalJson } from "../src/topups/idempotency-key.ts";
import { purgeExpiredIdempotencyKeys } from "../src/topups/purge-idempotency-keys.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import {
  ADMIN_TOKEN,
  balance,
  call,
  createWorld,
  END_USER,
  type Json,
  newCart,
  newPartner,
  submit,
  waitFor,
} from "./support/world.ts";

const world = await createWorld({ services: 2 });
const [api, api2] = world.services.map((s) => s.url) as [string, string];
const db = createKysely<Database>(world.database.pool);

type Raw = { status: number; text: string; body: Json; headers: Headers };
type Partner = { partner_id: string; api_key: string; iccid: string; order_id: string };

/** The FR catalog prices, read once through the API. */
const prices = await (async () => {
  const probe = await newPartner(api, 0, "Price probe");
  const packages = await call(api, "GET", "/v1/esim/destination/FR/packages", { key: probe.api_key });
  const price = (id: string) =>
    packages.body.data.find((p: Json) => p.package_id === id).wholesale_price.amount_minor;
  return { esim: price("fr-1gb-7d") as number, topup: price("fr-3gb-15d") as number };
})();

const TOPUP = { package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D", data_mb: 3 * 1024 };

/** A partner holding one FR 1 GB eSIM, with `left_minor` in the wallet after buying it. */
async function partnerWithEsim(left_minor: number): Promise<Partner> {
  const partner = await newPartner(api, prices.esim + left_minor);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  const order = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(order.status, 200, JSON.stringify(order.body));
  assert.equal(await balance(api, partner.api_key), left_minor);
  return { ...partner, iccid: order.body.purchases[0].iccid, order_id: order.body.orderID };
}

function topUpBody(iccid: string, overrides: Json = {}): Json {
  return {
    iccid,
    package_id: TOPUP.package_id,
    external_package_id: TOPUP.external_package_id,
    ...END_USER,
    ...overrides,
  };
}

/** POST /v1/orders/submit-topup, keeping the exact response text for byte-for-byte comparisons. */
async function topUp(
  url: string,
  api_key: string,
  body: Json | string,
  idempotency_key?: string,
): Promise<Raw> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${api_key}`,
    "content-type": "application/json",
  };
  if (idempotency_key !== undefined) headers["idempotency-key"] = idempotency_key;
  const response = await fetch(`${url}/v1/orders/submit-topup`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return { status: response.status, text, body: text ? JSON.parse(text) : {}, headers: response.headers };
}

function availableTopUps(url: string, api_key: string, iccid: string) {
  return call(url, "GET", `/v1/orders/available-topups/${encodeURIComponent(iccid)}`, { key: api_key });
}

async function dataTotal(iccid: string): Promise<number | null> {
  const profile = await world.simulator.profile(iccid);
  assert.ok(profile, `the simulator knows ${iccid}`);
  return profile.data_mb_total;
}

async function carrierTopUps(reference: string): Promise<number> {
  return (await world.simulator.audit()).topups.filter((t) => t.reference === reference).length;
}

async function topUpOrders(partner_id: string) {
  const result = await sql<{ order_id: string; status: string; iccid: string }>`
    select order_id, status, iccid from orders where partner_id = ${partner_id} and type = 'topup' order by seq`.execute(
    db,
  );
  return result.rows;
}

async function keyRows(partner_id: string) {
  const result = await sql<{
    idempotency_key: string;
    state: string;
    order_id: string | null;
    request_id: string;
    response_status: number | null;
    response_body: string | null;
  }>`
    select idempotency_key, state, order_id, request_id, response_status, response_body
    from idempotency_keys where partner_id = ${partner_id} order by created_at`.execute(db);
  return result.rows;
}

async function transfersOf(order_id: string) {
  const result = await sql<{ state: string; amount_minor: number }>`
    select state, amount_minor from ledger_transfers where reference = ${order_id}`.execute(db);
  return result.rows;
}

async function credit(partner_id: string, amount_minor: number, reference: string) {
  const credited = await call(api, "POST", `/admin/partners/${partner_id}/wallet/credits`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { amount_minor, reference },
  });
  assert.equal(credited.status, 201);
}

/** A 19-digit ICCID with a valid Luhn digit that the carrier never issued (its range is 8901260...). */
function unknownIccid(): string {
  const payload = `899999${String(Date.now()).slice(-12)}`;
  return payload + luhnCheckDigit(payload);
}

test("a top-up adds the package's data once, debits its price once and is an order of type topup", async () => {
  const partner = await partnerWithEsim(100_00);
  const before = await dataTotal(partner.iccid);
  assert.equal(before, 1024);
  const answer = await topUp(
    api,
    partner.api_key,
    topUpBody(partner.iccid, { client_reference: "topup-ref-1" }),
    crypto.randomUUID(),
  );
  assert.equal(answer.status, 200, answer.text);
  assert.match(answer.headers.get("content-type")!, /^application\/json/);
  const order = answer.body;
  assert.match(order.orderID, /^ord_/);
  assert.equal(order.type, "topup");
  assert.equal(order.status, "completed");
  assert.equal(order.client_reference, "topup-ref-1");
  assert.deepEqual(order.total, { amount_minor: prices.topup, currency: "USD" });
  assert.equal(order.purchases.length, 1);
  assert.equal(order.purchases[0].iccid, partner.iccid);
  assert.equal(order.purchases[0].package_id, TOPUP.package_id);
  assert.equal(answer.headers.get("idempotent-replayed"), null, "the first answer is not a replay");

  assert.equal(await dataTotal(partner.iccid), 1024 + TOPUP.data_mb);
  assert.equal(await carrierTopUps(order.orderID), 1);
  assert.equal(await balance(api, partner.api_key), 100_00 - prices.topup);
  assert.deepEqual(await transfersOf(order.orderID), [{ state: "posted", amount_minor: prices.topup }]);
  assert.deepEqual((await auditLedger(db)).breaches, []);

  const listed = await call(api2, "GET", "/v1/profile/orders?client_reference=topup-ref-1", {
    key: partner.api_key,
  });
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body.data, [order]);
  const fetched = await call(api2, "GET", `/v1/orders/${order.orderID}`, { key: partner.api_key });
  assert.deepEqual(fetched.body, order);
  const all = await call(api, "GET", "/v1/profile/orders", { key: partner.api_key });
  assert.deepEqual(
    all.body.data.map((o: Json) => o.type),
    ["topup", "esim"],
    "newest first",
  );
});

test("available top-ups of a France eSIM: France, Europe and Global metered packages, no other country", async () => {
  const partner = await partnerWithEsim(0);
  const answer = await availableTopUps(api, partner.api_key, partner.iccid);
  assert.equal(answer.status, 200);
  assert.equal(answer.body.iccid, partner.iccid);
  const ids: string[] = answer.body.data.map((row: Json) => row.package_id);
  assert.deepEqual(ids, [
    "fr-1gb-7d",
    "fr-3gb-15d",
    "fr-5gb-30d",
    "fr-10gb-30d",
    "fr-20gb-30d",
    "europe-1gb-7d",
    "europe-5gb-30d",
    "europe-10gb-30d",
    "europe-20gb-30d",
    "global-1gb-7d",
    "global-3gb-15d",
    "global-5gb-30d",
    "global-10gb-30d",
  ]);
  assert.ok(!ids.some((id) => id.startsWith("de-")), "no Germany-only package");
  assert.ok(!ids.includes("fr-unlimited-7d"), "unlimited packages are not top-ups");
  const row = answer.body.data[1];
  assert.deepEqual(Object.keys(row).slice(0, 6), [
    "package_id",
    "external_package_id",
    "name",
    "data_mb",
    "validity_days",
    "wholesale_price",
  ]);
  assert.equal(row.external_package_id, TOPUP.external_package_id);
  assert.equal(row.data_mb, TOPUP.data_mb);
  assert.deepEqual(row.wholesale_price, { amount_minor: prices.topup, currency: "USD" });

  // A retired package is no longer offered.
  await sql`update packages set active = false where package_id = 'fr-20gb-30d'`.execute(db);
  try {
    const after = await availableTopUps(api2, partner.api_key, partner.iccid);
    assert.ok(!after.body.data.some((r: Json) => r.package_id === "fr-20gb-30d"));
    assert.equal(after.body.data.length, ids.length - 1);
  } finally {
    await sql`update packages set active = true where package_id = 'fr-20gb-30d'`.execute(db);
  }
});

test("available top-ups of a Europe eSIM: only Europe-wide or wider packages", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key, "europe-1gb-7d");
  const order = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(order.status, 200);
  const answer = await availableTopUps(api, partner.api_key, order.body.purchases[0].iccid);
  const ids: string[] = answer.body.data.map((row: Json) => row.package_id);
  assert.ok(ids.length > 0);
  assert.ok(
    ids.every((id) => id.startsWith("europe-") || id.startsWith("global-")),
    ids.join(),
  );
  assert.ok(ids.includes("europe-1gb-7d") && ids.includes("global-1gb-7d"));
});

test("every malformed ICCID is 400 invalid_iccid on both endpoints, and nothing is charged or kept", async () => {
  const partner = await partnerWithEsim(100_00);
  const valid = partner.iccid;
  const withLuhn = (payload: string) => payload + luhnCheckDigit(payload);
  const lastDigit = Number(valid.at(-1));
  const cases = {
    too_short: withLuhn(valid.slice(0, 17)),
    too_long: withLuhn(`${valid}12`.slice(0, 20)),
    wrong_prefix: withLuhn(`88${valid.slice(2, -1)}`),
    luhn_failure: valid.slice(0, -1) + String((lastDigit + 1) % 10),
    non_digits: `${valid.slice(0, 8)}abc${valid.slice(11)}`,
    inner_space: `${valid.slice(0, 8)} ${valid.slice(9)}`,
    signed: `+${valid.slice(1)}`,
    hundred_digits: withLuhn(`89${"1".repeat(61)}`) + "1".repeat(36),
  };
  assert.equal(cases.too_short.length, 18);
  assert.equal(cases.too_long.length, 21);
  for (const [name, iccid] of Object.entries(cases)) {
    const listed = await availableTopUps(api, partner.api_key, iccid);
    assert.equal(listed.status, 400, `${name}: ${JSON.stringify(listed.body)}`);
    assert.equal(listed.body.code, "invalid_iccid", name);
    const submitted = await topUp(api, partner.api_key, topUpBody(iccid), `bad-iccid-${name}`);
    assert.equal(submitted.status, 400, `${name}: ${submitted.text}`);
    assert.equal(submitted.body.code, "invalid_iccid", name);
    assert.deepEqual(submitted.body.errors, [
      { field: "iccid", code: "invalid_format", message: "is not a valid ICCID" },
    ]);
  }
  const empty = await topUp(api, partner.api_key, topUpBody(""), "bad-iccid-empty");
  assert.equal(empty.body.code, "invalid_iccid");
  assert.equal(await balance(api, partner.api_key), 100_00);
  assert.deepEqual(await topUpOrders(partner.partner_id), []);
  assert.deepEqual(await keyRows(partner.partner_id), [], "a validation error leaves no key behind");
});

test("an unknown ICCID and another partner's ICCID are the same 404 esim_not_found on both endpoints", async () => {
  const owner = await partnerWithEsim(100_00);
  const stranger = await partnerWithEsim(100_00);
  const unknown = unknownIccid();
  const answers = [
    { iccid: unknown, list: await availableTopUps(api, stranger.api_key, unknown) },
    { iccid: owner.iccid, list: await availableTopUps(api, stranger.api_key, owner.iccid) },
  ];
  const submits = [
    await topUp(api, stranger.api_key, topUpBody(unknown), "k-unknown"),
    await topUp(api2, stranger.api_key, topUpBody(owner.iccid), "k-foreign"),
  ];
  for (const [i, { iccid, list }] of answers.entries()) {
    const submitted = submits[i]!;
    for (const answer of [list, submitted]) {
      assert.equal(answer.status, 404);
      assert.equal(answer.body.code, "esim_not_found");
      assert.equal(answer.body.detail.replace(iccid, "ICCID"), "No eSIM ICCID for this partner.");
    }
  }
  assert.equal(await balance(api, stranger.api_key), 100_00);
  assert.equal(await dataTotal(owner.iccid), 1024);
  assert.deepEqual(await topUpOrders(stranger.partner_id), []);
  assert.deepEqual(await keyRows(stranger.partner_id), []);
});

test("a package pair that is not a row of the offer is 422 topup_not_available, nothing charged", async () => {
  const partner = await partnerWithEsim(100_00);
  const pairs = [
    { package_id: "de-1gb-7d", external_package_id: "CARRIER-DE-1GB-7D" },
    { package_id: "fr-1gb-7d", external_package_id: "CARRIER-FR-3GB-15D" },
    { package_id: "fr-unlimited-7d", external_package_id: "CARRIER-FR-UNLIMITED-7D" },
    { package_id: "asia-1gb-7d", external_package_id: "CARRIER-ASIA-1GB-7D" },
    { package_id: "no-such-package", external_package_id: "CARRIER-NOPE" },
  ];
  for (const [i, pair] of pairs.entries()) {
    const answer = await topUp(api, partner.api_key, topUpBody(partner.iccid, pair), `pair-${i}`);
    assert.equal(answer.status, 422, answer.text);
    assert.equal(answer.body.code, "topup_not_available");
  }
  assert.equal(await balance(api, partner.api_key), 100_00);
  assert.equal(await dataTotal(partner.iccid), 1024);
  assert.deepEqual(await topUpOrders(partner.partner_id), []);
  assert.deepEqual(await keyRows(partner.partner_id), []);
});

test("a deleted or refunded (cancelled) eSIM is offered no top-up; one sent is 422, nothing charged", async () => {
  const deleted = await partnerWithEsim(100_00);
  const simulated = await call(api, "POST", `/v1/sandbox/esims/${deleted.iccid}/simulate`, {
    key: deleted.api_key,
    body: { event: "delete" },
  });
  assert.equal(simulated.status, 200, JSON.stringify(simulated.body));
  assert.equal(simulated.body.status, "deleted");
  const cancelled = await partnerWithEsim(100_00);
  const refunded = await call(api, "POST", `/v1/orders/${cancelled.order_id}/refund`, {
    key: cancelled.api_key,
  });
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  for (const [i, partner] of [deleted, cancelled].entries()) {
    const offered = await call(api, "GET", `/v1/orders/available-topups/${partner.iccid}`, {
      key: partner.api_key,
    });
    assert.equal(offered.status, 200, JSON.stringify(offered.body));
    assert.deepEqual(offered.body, { iccid: partner.iccid, data: [] });
    const before = await balance(api, partner.api_key);
    const answer = await topUp(api, partner.api_key, topUpBody(partner.iccid), `ended-${i}`);
    assert.equal(answer.status, 422, answer.text);
    assert.equal(answer.body.code, "topup_not_available");
    assert.equal(await balance(api, partner.api_key), before);
    assert.deepEqual(await topUpOrders(partner.partner_id), []);
    assert.deepEqual(await keyRows(partner.partner_id), [], "a 422 is not stored");
  }
});

test("a retry with the same key and body replays the 200 byte for byte, even reordered: one top-up, one debit", async () => {
  const partner = await partnerWithEsim(100_00);
  const key = crypto.randomUUID();
  const body = topUpBody(partner.iccid, { client_reference: "replay-1" });
  const first = await topUp(api, partner.api_key, body, key);
  assert.equal(first.status, 200, first.text);
  const reordered = `{\n  "last_name": ${JSON.stringify(body.last_name)},   "client_reference":"replay-1",
    "phone": "${body.phone}", "first_name": "${body.first_name}", "email": "${body.email}",
    "external_package_id": "${body.external_package_id}", "package_id": "${body.package_id}", "iccid": "${body.iccid}" }`;
  for (const [url, payload] of [
    [api, body],
    [api2, body],
    [api2, reordered],
  ] as const) {
    const replay = await topUp(url, partner.api_key, payload, key);
    assert.equal(replay.status, 200);
    assert.equal(replay.text, first.text, "byte for byte");
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.match(replay.headers.get("content-type")!, /^application\/json/);
  }
  assert.equal(await balance(api, partner.api_key), 100_00 - prices.topup);
  assert.equal(await carrierTopUps(first.body.orderID), 1);
  assert.equal(await dataTotal(partner.iccid), 1024 + TOPUP.data_mb);
  const [row] = await keyRows(partner.partner_id);
  assert.equal(row!.state, "completed");
  assert.equal(row!.order_id, first.body.orderID);
  assert.equal(row!.response_status, 200);
  assert.equal(row!.response_body, first.text);
});

test("a stored 200 replays even when the eSIM's read finds nothing now: the key answers first", async () => {
  // The key's claim goes out with the eSIM's read: a known key must answer before that read counts.
  const partner = await partnerWithEsim(100_00);
  const other = await partnerWithEsim(100_00);
  const key = crypto.randomUUID();
  const body = topUpBody(partner.iccid);
  const first = await topUp(api, partner.api_key, body, key);
  assert.equal(first.status, 200, first.text);
  await sql`update esims set partner_id = ${other.partner_id} where iccid = ${partner.iccid}`.execute(db);
  try {
    const gone = await topUp(api2, partner.api_key, body);
    assert.equal(gone.status, 404, "without the key, the eSIM is not this partner's now");
    const replay = await topUp(api2, partner.api_key, body, key);
    assert.equal(replay.status, 200, replay.text);
    assert.equal(replay.text, first.text, "byte for byte");
  } finally {
    await sql`update esims set partner_id = ${partner.partner_id} where iccid = ${partner.iccid}`.execute(db);
  }
  assert.equal(await carrierTopUps(first.body.orderID), 1);
});

test("the same key with a different body is 422 idempotency_key_reused and charges nothing", async () => {
  const partner = await partnerWithEsim(100_00);
  const key = crypto.randomUUID();
  const first = await topUp(api, partner.api_key, topUpBody(partner.iccid), key);
  assert.equal(first.status, 200);
  for (const overrides of [
    { package_id: "fr-1gb-7d", external_package_id: "CARRIER-FR-1GB-7D" },
    { client_reference: "another" },
    { first_name: "Bea" },
  ]) {
    const reused = await topUp(api2, partner.api_key, topUpBody(partner.iccid, overrides), key);
    assert.equal(reused.status, 422, reused.text);
    assert.equal(reused.body.code, "idempotency_key_reused");
  }
  assert.equal(await balance(api, partner.api_key), 100_00 - prices.topup);
  assert.equal((await topUpOrders(partner.partner_id)).length, 1);
  assert.equal(await dataTotal(partner.iccid), 1024 + TOPUP.data_mb);
  const rows = await keyRows(partner.partner_id);
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.response_body, first.text, "the stored outcome is untouched");
});

test("a quoted structured-field key is the same key as the bare one; a malformed header is 400", async () => {
  const partner = await partnerWithEsim(100_00);
  const body = topUpBody(partner.iccid);
  const first = await topUp(api, partner.api_key, body, 'order-7/"retry"\\1');
  assert.equal(first.status, 200);
  const quoted = await topUp(api2, partner.api_key, body, '"order-7/\\"retry\\"\\\\1"');
  assert.equal(quoted.status, 200);
  assert.equal(quoted.text, first.text);
  assert.equal(quoted.headers.get("idempotent-replayed"), "true");
  assert.equal((await keyRows(partner.partner_id))[0]!.idempotency_key, 'order-7/"retry"\\1');

  for (const header of ['"unterminated', '"bad \\q escape"', "x".repeat(256), '""', "caf\u00e9"]) {
    const malformed = await topUp(api, partner.api_key, body, header);
    assert.equal(malformed.status, 400, header);
    assert.equal(malformed.body.code, "invalid_request");
    assert.equal(malformed.body.errors[0].field, "Idempotency-Key");
  }
  assert.equal(await balance(api, partner.api_key), 100_00 - prices.topup);
  assert.equal((await keyRows(partner.partner_id)).length, 1);
});

test("30 concurrent requests with one key across two processes: one top-up, one debit, the rest replays or 409", async () => {
  const partner = await partnerWithEsim(100_00);
  const key = crypto.randomUUID();
  const body = topUpBody(partner.iccid);
  await world.simulator.control({ latency_ms: 300 });
  try {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => topUp(i % 2 === 0 ? api : api2, partner.api_key, body, key)),
    );
    const ok = answers.filter((a) => a.status === 200);
    const busy = answers.filter((a) => a.status === 409);
    assert.equal(ok.length + busy.length, 30, JSON.stringify(answers.map((a) => a.status)));
    assert.ok(ok.length >= 1);
    assert.equal(new Set(ok.map((a) => a.text)).size, 1, "every 200 is the same bytes");
    for (const a of busy) {
      assert.equal(a.body.code, "request_in_progress");
      assert.ok(Number(a.headers.get("retry-after")) >= 1);
    }
    const final = await topUp(api2, partner.api_key, body, key);
    assert.equal(final.text, ok[0]!.text);
    const orders = await topUpOrders(partner.partner_id);
    assert.equal(orders.length, 1);
    assert.equal(await carrierTopUps(orders[0]!.order_id), 1);
    assert.equal(await dataTotal(partner.iccid), 1024 + TOPUP.data_mb);
    assert.equal(await balance(api, partner.api_key), 100_00 - prices.topup);
  } finally {
    await world.simulator.control({ latency_ms: 0 });
  }
});

test("30 concurrent top-ups with distinct keys over a wallet covering 10: exactly 10, balance zero, books clean", async () => {
  const partner = await partnerWithEsim(10 * prices.topup);
  const keys = Array.from({ length: 30 }, () => crypto.randomUUID());
  const answers = await Promise.all(
    keys.map((key, i) => topUp(i % 2 ? api : api2, partner.api_key, topUpBody(partner.iccid), key)),
  );
  const statuses = answers.map((a) => a.status);
  assert.equal(statuses.filter((s) => s === 200).length, 10, JSON.stringify(statuses));
  assert.equal(statuses.filter((s) => s === 402).length, 20);
  for (const a of answers.filter((a) => a.status === 402)) assert.equal(a.body.code, "insufficient_balance");
  assert.equal(await balance(api, partner.api_key), 0);
  const orders = await topUpOrders(partner.partner_id);
  assert.equal(orders.length, 10, "a 402 leaves no order behind");
  assert.ok(orders.every((o) => o.status === "completed"));
  assert.equal(await dataTotal(partner.iccid), 1024 + 10 * TOPUP.data_mb);
  const rows = await keyRows(partner.partner_id);
  assert.equal(rows.length, 30);
  assert.ok(rows.every((r) => r.state === "completed"));
  assert.equal(rows.filter((r) => r.response_status === 402 && r.order_id === null).length, 20);
  assert.equal(rows.filter((r) => r.response_status === 200 && r.order_id !== null).length, 10);
  assert.deepEqual((await auditLedger(db)).breaches, []);
});

test("a 402 is stored and replayed byte for byte, even after the wallet is credited", async () => {
  const partner = await partnerWithEsim(0);
  const key = crypto.randomUUID();
  const body = topUpBody(partner.iccid);
  const refused = await topUp(api, partner.api_key, body, key);
  assert.equal(refused.status, 402);
  assert.equal(refused.body.code, "insufficient_balance");
  assert.match(refused.headers.get("content-type")!, /^application\/problem\+json/);
  assert.equal(refused.body.request_id, refused.headers.get("x-request-id"));
  await credit(partner.partner_id, 100_00, "after-402");
  const replay = await topUp(api2, partner.api_key, body, key);
  assert.equal(replay.status, 402);
  assert.equal(replay.text, refused.text, "the first request's bytes, request_id included");
  assert.match(replay.headers.get("content-type")!, /^application\/problem\+json/);
  assert.equal(replay.headers.get("idempotent-replayed"), "true");
  assert.equal(await balance(api, partner.api_key), 100_00);
  assert.deepEqual(await topUpOrders(partner.partner_id), []);
  assert.equal(await dataTotal(partner.iccid), 1024);
  const [row] = await keyRows(partner.partner_id);
  assert.deepEqual(
    { state: row!.state, order_id: row!.order_id, status: row!.response_status, body: row!.response_body },
    { state: "completed", order_id: null, status: 402, body: refused.text },
  );
  const fresh = await topUp(api, partner.api_key, body, crypto.randomUUID());
  assert.equal(fresh.status, 200, "a new key is a new attempt");
});

test("a carrier decline is 502 carrier_error, stored and replayed; the hold is voided", async () => {
  const partner = await partnerWithEsim(100_00);
  const key = crypto.randomUUID();
  const body = topUpBody(partner.iccid, { email: "decline@carrier.test" });
  const declined = await topUp(api, partner.api_key, body, key);
  assert.equal(declined.status, 502, declined.text);
  assert.equal(declined.body.code, "carrier_error");
  const replay = await topUp(api2, partner.api_key, body, key);
  assert.equal(replay.status, 502);
  assert.equal(replay.text, declined.text);
  assert.equal(await balance(api, partner.api_key), 100_00);
  const [order] = await topUpOrders(partner.partner_id);
  assert.equal(order!.status, "failed");
  assert.deepEqual(await transfersOf(order!.order_id), [{ state: "voided", amount_minor: prices.topup }]);
  assert.equal(await carrierTopUps(order!.order_id), 0);
  assert.equal(await dataTotal(partner.iccid), 1024);
  const [row] = await keyRows(partner.partner_id);
  assert.equal(row!.response_status, 502);
  assert.equal(row!.response_body, declined.text);
});

test("without a key, two identical requests are two top-ups", async () => {
  const partner = await partnerWithEsim(100_00);
  const body = topUpBody(partner.iccid);
  const first = await topUp(api, partner.api_key, body);
  const second = await topUp(api2, partner.api_key, body);
  assert.equal(first.status, 200);
  assert.equal(second.status, 200);
  assert.notEqual(first.body.orderID, second.body.orderID);
  assert.equal(await balance(api, partner.api_key), 100_00 - 2 * prices.topup);
  assert.equal(await dataTotal(partner.iccid), 1024 + 2 * TOPUP.data_mb);
  assert.deepEqual(await keyRows(partner.partner_id), []);
});

/** A top-up under a new key while the carrier is down: its answer, and the key and body to retry with. */
async function topUpWhileCarrierDown(
  partner: Partner,
): Promise<{ key: string; body: Json; unavailable: Raw }> {
  const key = crypto.randomUUID();
  const body = topUpBody(partner.iccid);
  await world.simulator.control({ down: true });
  try {
    return { key, body, unavailable: await topUp(api, partner.api_key, body, key) };
  } finally {
    await world.simulator.control({ down: false });
  }
}

test("a 503 is not stored: the key stays running on the pending order and a retry finishes that top-up", async () => {
  const partner = await partnerWithEsim(100_00);
  const { key, body, unavailable } = await topUpWhileCarrierDown(partner);
  assert.equal(unavailable.status, 503);
  assert.equal(unavailable.body.code, "carrier_unavailable");
  assert.ok(Number(unavailable.headers.get("retry-after")) >= 1);
  const [pending] = await topUpOrders(partner.partner_id);
  assert.equal(pending!.status, "pending");
  const [running] = await keyRows(partner.partner_id);
  assert.equal(running!.state, "running");
  assert.equal(running!.order_id, pending!.order_id);

  const retried = await waitFor("the retry to finish the top-up", async () => {
    const answer = await topUp(api2, partner.api_key, body, key);
    return answer.status === 200 ? answer : null;
  });
  assert.equal(retried.body.orderID, pending!.order_id);
  assert.equal(await carrierTopUps(pending!.order_id), 1);
  assert.equal(await balance(api, partner.api_key), 100_00 - prices.topup);
  assert.equal((await topUpOrders(partner.partner_id)).length, 1);
  assert.equal((await keyRows(partner.partner_id))[0]!.response_body, retried.text);
});

test("a key whose top-up is still pending never expires: past its 24 hours a retry still finishes that top-up", async () => {
  const partner = await partnerWithEsim(100_00);
  const { key, body, unavailable } = await topUpWhileCarrierDown(partner);
  assert.equal(unavailable.status, 503);
  assert.equal(unavailable.body.order_id, (await topUpOrders(partner.partner_id))[0]!.order_id);
  // A day passes with the outcome unknown: the key must still lead to that order, not a new one.
  await sql`update idempotency_keys set expires_at = now() - interval '1 second'
            where partner_id = ${partner.partner_id}`.execute(db);
  assert.equal((await purgeExpiredIdempotencyKeys(db)).deleted, 0, "a running key is not purged");
  const retried = await waitFor("the retry to finish the same top-up", async () => {
    const answer = await topUp(api2, partner.api_key, body, key);
    return answer.status === 200 ? answer : null;
  });
  const orders = await topUpOrders(partner.partner_id);
  assert.equal(orders.length, 1, "one top-up");
  assert.equal(retried.body.orderID, orders[0]!.order_id);
  assert.equal(await balance(api, partner.api_key), 100_00 - prices.topup, "one debit");
  const [row] = await sql<{ fresh: boolean }>`
    select expires_at > now() + interval '23 hours' as fresh from idempotency_keys
    where partner_id = ${partner.partner_id}`
    .execute(db)
    .then((r) => r.rows);
  assert.equal(row!.fresh, true, "the completed key is kept a whole retention period from its outcome");
});

async function killedMidTopUp(partner: Partner, key?: string): Promise<void> {
  const crashing = await world.startService({ CRASH_AT: "after_pending_commit" });
  const died = await topUp(crashing.url, partner.api_key, topUpBody(partner.iccid), key).then(
    () => false,
    () => true,
  );
  assert.ok(died, "the request dies with its process");
  await waitFor("the process to die", async () => crashing.process.signalCode !== null);
}

test("killed mid top-up, a retry with the same key finishes it: one carrier top-up, one debit", async () => {
  const partner = await partnerWithEsim(100_00);
  const key = crypto.randomUUID();
  await killedMidTopUp(partner, key);
  const [pending] = await topUpOrders(partner.partner_id);
  assert.ok(pending, "phase 1 committed before the crash");
  const done = await waitFor("a retry to answer 200", async () => {
    const answer = await topUp(api, partner.api_key, topUpBody(partner.iccid), key);
    if (answer.status === 409) return null;
    assert.equal(answer.status, 200, answer.text);
    return answer;
  });
  assert.equal(done.body.orderID, pending.order_id);
  assert.equal(await carrierTopUps(pending.order_id), 1);
  assert.equal(await dataTotal(partner.iccid), 1024 + TOPUP.data_mb);
  assert.equal(await balance(api, partner.api_key), 100_00 - prices.topup);
  assert.deepEqual(await transfersOf(pending.order_id), [{ state: "posted", amount_minor: prices.topup }]);
});

test("killed mid top-up without a key, the resolver finishes it exactly once", async () => {
  const partner = await partnerWithEsim(100_00);
  await killedMidTopUp(partner);
  const [pending] = await topUpOrders(partner.partner_id);
  assert.ok(pending);
  await waitFor(
    "the resolver",
    async () => (await topUpOrders(partner.partner_id))[0]!.status === "completed",
  );
  assert.equal(await carrierTopUps(pending.order_id), 1);
  assert.equal(await dataTotal(partner.iccid), 1024 + TOPUP.data_mb);
  assert.equal(await balance(api, partner.api_key), 100_00 - prices.topup);
  const fetched = await call(api2, "GET", `/v1/orders/${pending.order_id}`, { key: partner.api_key });
  assert.equal(fetched.body.status, "completed");
  assert.equal(fetched.body.purchases[0].iccid, partner.iccid);
  assert.deepEqual((await auditLedger(db)).breaches, []);
});

test("an expired key is a new key; the purge deletes expired keys in bounded batches and nothing else", async () => {
  const partner = await partnerWithEsim(100_00);
  const body = topUpBody(partner.iccid);
  const expire = (key: string) =>
    sql`update idempotency_keys set expires_at = now() - interval '1 second'
        where partner_id = ${partner.partner_id} and idempotency_key = ${key}`.execute(db);

  // Expired but not purged yet: the same request is a new top-up, not a replay.
  const first = await topUp(api, partner.api_key, body, "expiring");
  await expire("expiring");
  const again = await topUp(api2, partner.api_key, body, "expiring");
  assert.equal(again.status, 200);
  assert.notEqual(again.body.orderID, first.body.orderID);
  assert.equal(again.headers.get("idempotent-replayed"), null);

  // Purged: the row is gone, and the key starts over too.
  await expire("expiring");
  const kept = await topUp(api, partner.api_key, body, "kept");
  assert.equal(kept.status, 200);
  const purged = await purgeExpiredIdempotencyKeys(db);
  assert.ok(purged.deleted >= 1);
  assert.equal(purged.more, false);
  assert.deepEqual(
    (await keyRows(partner.partner_id)).map((r) => r.idempotency_key),
    ["kept"],
  );
  const reused = await topUp(
    api2,
    partner.api_key,
    topUpBody(partner.iccid, { first_name: "Bea" }),
    "expiring",
  );
  assert.equal(reused.status, 200, "a different body is fine: it is a new key now");
  assert.equal(await balance(api, partner.api_key), 100_00 - 4 * prices.topup);

  // Bounded: 25 expired rows, batches of 10, two batches per run.
  await sql`
    insert into idempotency_keys (partner_id, idempotency_key, fingerprint, state, request_id, response_status,
                                  response_body, expires_at)
    select ${partner.partner_id}, 'bulk-' || n, decode('00', 'hex'), 'completed', 'req', 402, '{}', now() - interval '1 hour'
    from generate_series(1, 25) as n`.execute(db);
  assert.deepEqual(await purgeExpiredIdempotencyKeys(db, { batch_size: 10, max_batches: 2 }), {
    deleted: 20,
    more: true,
  });
  assert.deepEqual(await purgeExpiredIdempotencyKeys(db, { batch_size: 10, max_batches: 2 }), {
    deleted: 5,
    more: false,
  });
  assert.equal((await keyRows(partner.partner_id)).length, 2, "unexpired keys stay");

  // The worker runs the same purge as the hourly cron job.
  await sql`
    insert into idempotency_keys (partner_id, idempotency_key, fingerprint, state, request_id, response_status,
                                  response_body, expires_at)
    values (${partner.partner_id}, 'by-the-job', decode('00', 'hex'), 'completed', 'req', 402, '{}', now())`.execute(
    db,
  );
  await sql`select graphile_worker.add_job('purge_idempotency_keys', '{}'::json)`.execute(db);
  await waitFor("the purge job", async () => (await keyRows(partner.partner_id)).length === 2);
});

test("the OpenAPI document describes both top-up operations and the Idempotency-Key header", async () => {
  const document = (await call(api, "GET", "/openapi.json")).body;
  const list = document.paths["/v1/orders/available-topups/{iccid}"].get;
  assert.equal(list.operationId, "listAvailableTopUps");
  assert.deepEqual(list.tags, ["Top-ups"]);
  assert.ok(list.responses["404"] && list.responses["400"]);
  const submitTopUp = document.paths["/v1/orders/submit-topup"].post;
  assert.equal(submitTopUp.operationId, "submitTopUp");
  assert.deepEqual(submitTopUp.tags, ["Top-ups"]);
  const header = submitTopUp.parameters.find((p: Json) => p.in === "header" && p.name === "idempotency-key");
  assert.ok(header, JSON.stringify(submitTopUp.parameters));
  assert.equal(header.required, false);
  for (const status of ["200", "402", "409", "422", "502", "503"])
    assert.ok(submitTopUp.responses[status], status);
  assert.match(submitTopUp.description, /idempotency_key_reused/);
});

/** POST /v1/orders/submit-topup over node's http client, which sends each value of an array header as a line of its own. */
function topUpWithHeaderLines(url: string, api_key: string, body: Json, keys: string[]): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/v1/orders/submit-topup`,
      {
        method: "POST",
        headers: {
          authorization: `Bearer ${api_key}`,
          "content-type": "application/json",
          "Idempotency-Key": keys,
        },
        timeout: 30_000,
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => {
          text += chunk;
        });
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            text,
            body: text ? JSON.parse(text) : {},
            headers: new Headers(response.headers as Record<string, string>),
          }),
        );
      },
    );
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
}

test("two Idempotency-Key header lines are 400 invalid_request, so a retry with one of them cannot buy a second top-up", async () => {
  const partner = await partnerWithEsim(100_00);
  const body = topUpBody(partner.iccid);
  const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
  const twice = await topUpWithHeaderLines(api, partner.api_key, body, [a, b]);
  assert.equal(twice.status, 400, twice.text);
  assert.equal(twice.body.code, "invalid_request");
  assert.equal(twice.body.errors[0].field, "Idempotency-Key");
  const single = await topUpWithHeaderLines(api, partner.api_key, body, [a]);
  assert.equal(single.status, 200, "one line is one key");
  const retry = await topUp(api2, partner.api_key, body, a);
  assert.equal(retry.status, 200);
  assert.equal(retry.headers.get("idempotent-replayed"), "true");
  assert.equal(await balance(api, partner.api_key), 100_00 - prices.topup, "one top-up paid");
  assert.equal((await topUpOrders(partner.partner_id)).length, 1);
  assert.deepEqual(
    (await keyRows(partner.partner_id)).map((row) => row.idempotency_key),
    [a],
  );
});

test("client_reference null or absent, and names padded with the spaces the service trims, are one request under one key", async () => {
  const partner = await partnerWithEsim(100_00);
  const key = crypto.randomUUID();
  const first = await topUp(api, partner.api_key, topUpBody(partner.iccid), key);
  assert.equal(first.status, 200, first.text);
  for (const overrides of [
    { client_reference: null },
    { first_name: ` ${END_USER.first_name}  ` },
    { last_name: `\u00a0${END_USER.last_name}`, client_reference: null },
  ]) {
    const retry = await topUp(api2, partner.api_key, topUpBody(partner.iccid, overrides), key);
    assert.equal(retry.status, 200, `${JSON.stringify(overrides)}: ${retry.text}`);
    assert.equal(retry.text, first.text, "the stored outcome, byte for byte");
    assert.equal(retry.headers.get("idempotent-replayed"), "true");
  }
  assert.equal(await balance(api, partner.api_key), 100_00 - prices.topup, "one top-up paid");
  assert.equal((await topUpOrders(partner.partner_id)).length, 1);
});

test("a key stored before the fingerprint was normalised still replays its request after the upgrade", async () => {
  const partner = await partnerWithEsim(100_00);
  const key = crypto.randomUUID();
  const body = topUpBody(partner.iccid, { client_reference: null, first_name: " Ana " });
  const first = await topUp(api, partner.api_key, body, key);
  assert.equal(first.status, 200, first.text);
  // What the previous release stored: the hash of the parsed body as it was sent, untagged.
  const stored = createHash("sha256")
    .update(`POST\n/v1/orders/submit-topup\n${canonicalJson(body)}`)
    .digest();
  await sql`
    update idempotency_keys set fingerprint = ${stored}
    where partner_id = ${partner.partner_id} and idempotency_key = ${key}`.execute(db);
  const retry = await topUp(api2, partner.api_key, body, key);
  assert.equal(retry.status, 200, retry.text);
  assert.equal(retry.text, first.text);
  const other = await topUp(api2, partner.api_key, topUpBody(partner.iccid, { client_reference: "x" }), key);
  assert.equal(other.status, 422, "another request is still another request");
  assert.equal((await topUpOrders(partner.partner_id)).length, 1);
});
