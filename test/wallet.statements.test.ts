// Wallet statements and low-balance alerts (issue 13): the statement is derived from the ledger in
// posted order, so its balance_after chain must end at the settled balance whatever raced; the CSV
// must be the JSON pages; pages must not shift while purchases post; balance_low fires per crossing.

import assert from "node:assert/strict";
import { test } from "node:test";
import { parse } from "csv-parse/sync";
import { sql } from "kysely";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { walletOf } from "../src/ledger/accounts.ts";
import { resolvePendingPurchase } from "../src/ledger/ledger.sql.ts";
import { holdFunds } from "../src/ledger/transfers.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { creditWallet as creditWalletInProcess } from "../src/wallet/credit-wallet.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import {
  balance,
  createCart,
  creditWallet,
  inParallel,
  PACKAGE_ID,
  purchase,
  submitCart,
  topUpBody,
} from "./support/fixtures.ts";
import { type Json, request } from "./support/http.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const api = await createTestApp({ carrier_timeout_ms: 5_000 }, { database, carrier });
const target = api.app;

async function price(key: string, package_id: string): Promise<number> {
  const answer = await request(target, "GET", "/v1/esim/destination/FR/packages", { key });
  return answer.body.data.find((p: Json) => p.package_id === package_id).wholesale_price.amount_minor;
}

/** Every page of the statement, newest first, following next_cursor. */
async function allPages(key: string, query = "", limit = 7): Promise<Json[]> {
  const rows: Json[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1_000; pages++) {
    const sep = query ? "&" : "";
    const url = `/v1/profile/wallet/transactions?${query}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`;
    const page = await request(target, "GET", url, { key });
    assert.equal(page.status, 200, JSON.stringify(page.body));
    rows.push(...page.body.data);
    assert.equal(page.body.has_more, page.body.next_cursor !== null);
    if (!page.body.has_more) return rows;
    cursor = page.body.next_cursor;
  }
  throw new Error("too many pages");
}

/** The chain: each row's balance_after is the older row's plus its amount; the oldest starts at 0. */
function assertChain(rows: Json[]): void {
  for (const [i, row] of rows.entries()) {
    const older = rows[i + 1]?.balance_after.amount_minor ?? 0;
    assert.equal(row.balance_after.amount_minor, older + row.amount.amount_minor, row.transaction_id);
  }
}

async function csvOf(key: string, query = ""): Promise<{ status: number; text: string; type: string }> {
  const response = await target.inject({
    method: "GET",
    url: `/v1/profile/wallet/transactions${query ? `?${query}` : ""}`,
    headers: { authorization: `Bearer ${key}`, accept: "text/csv" },
  });
  return { status: response.statusCode, text: response.body, type: String(response.headers["content-type"]) };
}

function csvRowsAsJson(text: string): Json[] {
  const records: Record<string, string>[] = parse(text, { columns: true });
  return records.map((r) => ({
    transaction_id: r.transaction_id,
    type: r.type,
    amount: { amount_minor: Number(r.amount_minor), currency: r.currency },
    balance_after: { amount_minor: Number(r.balance_after_minor), currency: r.currency },
    order_id: r.order_id || null,
    reference: r.reference || null,
    description: r.description || null,
    created_at: r.created_at,
  }));
}

/** Refunds the order until a final answer (a racing twin gets 409 request_in_progress meanwhile). */
async function refundUntilDone(key: string, order_id: string): Promise<Json> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const answer = await request(target, "POST", `/v1/orders/${order_id}/refund`, { key });
    if (answer.status === 200) return answer.body;
    assert.equal(answer.body.code, "request_in_progress", JSON.stringify(answer.body));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`refund of ${order_id} never finished`);
}

test("after 50 concurrent credits, purchases, top-ups and refunds the statement chains to the settled balance, and its CSV is its pages", async () => {
  const partner = await api.createPartner("Statements", 200_000);
  const esim_price = await price(partner.api_key, PACKAGE_ID);
  const bought = await purchase(target, partner.api_key);
  const iccid = bought.purchases[0].iccid;
  const offer = await request(target, "GET", `/v1/orders/available-topups/${iccid}`, {
    key: partner.api_key,
  });
  const row = offer.body.data[0];
  // Five eSIMs refunded during the mix, each asked twice at once: one credit each.
  const refundable = await inParallel(5, 5, async () => (await purchase(target, partner.api_key)).orderID);
  const refunds = inParallel(10, 4, (i) => refundUntilDone(partner.api_key, refundable[i % 5]!));
  const outcomes = await inParallel(50, 16, async (i) => {
    if (i % 3 === 0) {
      await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 1_000 + i, `wire-${i},"q"`);
      return "credit";
    }
    if (i % 3 === 1) return (await purchase(target, partner.api_key, PACKAGE_ID, {}, [200, 402])).orderID;
    const topup = await request(target, "POST", "/v1/orders/submit-topup", {
      key: partner.api_key,
      headers: { "idempotency-key": `statement-${i}` },
      body: topUpBody(iccid, row),
    });
    assert.ok([200, 402].includes(topup.status), JSON.stringify(topup.body));
    return topup.body.orderID;
  });
  assert.ok(outcomes.length === 50);
  assert.ok((await refunds).every((order) => order.status === "refunded"));

  const rows = await allPages(partner.api_key);
  assertChain(rows);
  const wallet = await walletOf(api.db, partner.partner_id);
  const settled = wallet!.posted_credits_minor - wallet!.posted_debits_minor;
  assert.equal(rows[0]!.balance_after.amount_minor, settled, "the newest row ends at the settled balance");
  assert.equal(
    rows.reduce((sum, r) => sum + r.amount.amount_minor, 0),
    settled,
    "the rows sum to the settled balance",
  );
  const counts = Map.groupBy(rows, (r) => r.type);
  assert.equal(counts.get("credit")!.length, 1 + 17, "the seed credit and every concurrent credit");
  assert.ok(counts.get("purchase")!.length >= 2 && counts.get("topup")!.length >= 1);
  for (const r of counts.get("purchase")!) assert.ok(r.amount.amount_minor === -esim_price && r.order_id);
  for (const r of counts.get("credit")!) assert.ok(r.amount.amount_minor > 0 && r.reference && !r.order_id);
  assert.deepEqual(
    counts
      .get("refund")!
      .map((r) => r.order_id)
      .sort(),
    [...refundable].sort(),
    "one refund row per refunded order",
  );
  for (const r of counts.get("refund")!) assert.ok(r.amount.amount_minor === esim_price && !r.reference);
  assert.equal(new Set(rows.map((r) => r.transaction_id)).size, rows.length, "no row twice");
  const times = rows.map((r) => Date.parse(r.created_at));
  assert.deepEqual(
    times,
    [...times].sort((a, b) => b - a),
    "newest first",
  );

  const csv = await csvOf(partner.api_key);
  assert.equal(csv.status, 200, csv.text);
  assert.match(csv.type, /^text\/csv/);
  assert.ok(
    csv.text.startsWith(
      "transaction_id,type,amount,amount_minor,currency,balance_after_minor,order_id,reference," +
        "client_reference,iccid,package_id,description,created_at\r\n",
    ),
  );
  assert.deepEqual(
    csvRowsAsJson(csv.text),
    [...rows].reverse(),
    "the CSV holds exactly the JSON pages' rows, oldest first",
  );
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
});

test("pages stay stable while purchases post: walking down meets every older row once, with the same balance_after", async () => {
  const partner = await api.createPartner("Pager", 500_000);
  for (let i = 0; i < 6; i++) await purchase(target, partner.api_key);
  const first = await request(target, "GET", "/v1/profile/wallet/transactions?limit=3", {
    key: partner.api_key,
  });
  const walked: Json[] = [...first.body.data];
  let cursor: string | null = first.body.next_cursor;
  const racing = inParallel(8, 4, () => purchase(target, partner.api_key));
  while (cursor) {
    const page = await request(target, "GET", `/v1/profile/wallet/transactions?limit=2&cursor=${cursor}`, {
      key: partner.api_key,
    });
    walked.push(...page.body.data);
    cursor = page.body.next_cursor;
  }
  await racing;
  const now = await allPages(partner.api_key, "", 100);
  assert.equal(now.length, 1 + 6 + 8);
  // What was walked is exactly the oldest part of today's statement, unchanged.
  assert.deepEqual(walked, now.slice(now.length - walked.length));
  assertChain(now);
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
});

test("dates filter by UTC day, both ends included; from after to is 400; holds never appear", async () => {
  const partner = await api.createPartner("Dates", 10_000);
  const today = new Date().toISOString().slice(0, 10);
  const rows = await allPages(partner.api_key, `from=${today}&to=${today}`);
  assert.equal(rows.length, 1);
  assert.deepEqual(await allPages(partner.api_key, "to=2020-01-01"), []);
  const bad = await request(target, "GET", "/v1/profile/wallet/transactions?from=2026-02-02&to=2026-02-01", {
    key: partner.api_key,
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.code, "invalid_request");
  const badCsv = await csvOf(partner.api_key, "from=2026-02-31");
  assert.equal(badCsv.status, 400);
  // A hold (an order the carrier has not confirmed) is not settled money.
  await sql`insert into ledger_transfers (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state, reference)
    select 'trf_hold_probe', a.account_id, r.account_id, 100, 'USD', 'purchase', 'pending', 'ord_hold_probe'
    from ledger_accounts a, ledger_accounts r where a.partner_id = ${partner.partner_id} and r.kind = 'operator_revenue'`.execute(
    api.db,
  );
  assert.equal((await allPages(partner.api_key)).length, 1);
  await sql`delete from ledger_transfers where transfer_id = 'trf_hold_probe'`.execute(api.db);
});

async function events(partner_id: string, type: string): Promise<Json[]> {
  const result = await sql<{ data: Json }>`
    select data from events where partner_id = ${partner_id} and type = ${type} order by seq`.execute(api.db);
  return result.rows.map((row) => row.data);
}

test("wallet.balance_low fires once per crossing below the threshold, and wallet.credited on each credit", async () => {
  const partner = await api.createPartner("Alerts", 0);
  const esim_price = await price(partner.api_key, PACKAGE_ID);
  const threshold = Math.floor(esim_price * 1.5);
  const set = await request(target, "PUT", "/v1/profile/wallet/low-balance-alert", {
    key: partner.api_key,
    body: { threshold_minor: threshold },
  });
  assert.equal(set.status, 200);
  assert.deepEqual(set.body.low_balance_threshold, { amount_minor: threshold, currency: "USD" });
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, esim_price * 2, "wire-a");
  await purchase(target, partner.api_key); // 2p -> 1p: crosses below 1.5p
  assert.equal((await events(partner.partner_id, "wallet.balance_low")).length, 1);
  await purchase(target, partner.api_key); // 1p -> 0: still below, no new event
  assert.equal((await events(partner.partner_id, "wallet.balance_low")).length, 1);
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, esim_price * 2, "wire-b"); // back above
  await purchase(target, partner.api_key); // crosses again
  const low = await events(partner.partner_id, "wallet.balance_low");
  assert.equal(low.length, 2);
  assert.deepEqual(low[1], {
    balance: { amount_minor: esim_price, currency: "USD" },
    threshold: { amount_minor: threshold, currency: "USD" },
  });
  const credited = await events(partner.partner_id, "wallet.credited");
  assert.deepEqual(credited[1], {
    balance: { amount_minor: esim_price * 2, currency: "USD" },
    threshold: { amount_minor: threshold, currency: "USD" },
    amount: { amount_minor: esim_price * 2, currency: "USD" },
    reference: "wire-b",
  });
  // The same reference again credits nothing and announces nothing.
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, esim_price * 2, "wire-b");
  assert.equal((await events(partner.partner_id, "wallet.credited")).length, 2);
  const off = await request(target, "PUT", "/v1/profile/wallet/low-balance-alert", {
    key: partner.api_key,
    body: { threshold_minor: null },
  });
  assert.equal(off.body.low_balance_threshold, null);
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, esim_price * 2, "wire-c");
  await purchase(target, partner.api_key);
  await purchase(target, partner.api_key);
  assert.equal((await events(partner.partner_id, "wallet.balance_low")).length, 2, "off: no alert");
  const wallet = await request(target, "GET", "/v1/profile/wallet", { key: partner.api_key });
  assert.deepEqual(Object.keys(wallet.body).sort(), ["balance", "low_balance_threshold", "pending"]);
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
});

test("a CSV longer than one read page is every JSON page, in order, once", async () => {
  const partner = await api.createPartner("Long statement", 0);
  await inParallel(520, 8, (i) =>
    creditWalletInProcess(
      api.db,
      {
        partner_id: partner.partner_id,
        amount_minor: 1 + i,
        reference: `bulk-${i}`,
      },
      CLI_ACTOR,
    ),
  );
  const rows = await allPages(partner.api_key, "", 100);
  assert.equal(rows.length, 520);
  assertChain(rows);
  const csv = await csvOf(partner.api_key);
  assert.equal(csv.status, 200);
  assert.deepEqual(csvRowsAsJson(csv.text), [...rows].reverse(), "oldest first");
});

test("the low-balance check costs a purchase no SQL statement unless it fires (then one insert)", async () => {
  const statements: string[] = [];
  const counted = await createTestApp(
    { carrier_timeout_ms: 5_000 },
    { database, carrier, onQuery: (text) => statements.push(text) },
  );
  const partner = await counted.createPartner("Counted", 100_000);
  const esim_price = await price(partner.api_key, PACKAGE_ID);
  const cost = async () => {
    const cart = await createCart(counted.app, partner.api_key, PACKAGE_ID);
    statements.length = 0;
    const answer = await submitCart(counted.app, partner.api_key, cart.cart_key);
    assert.equal(answer.status, 200);
    return statements.length;
  };
  const off = await cost();
  assert.ok(off >= 5, `the submit's statements are counted (${off})`);
  const set = async (threshold_minor: number | null) =>
    request(counted.app, "PUT", "/v1/profile/wallet/low-balance-alert", {
      key: partner.api_key,
      body: { threshold_minor },
    });
  await set(1); // set, far below the balance: never crossed by one purchase
  const armed = await cost();
  assert.equal(armed, off, "a threshold that is not crossed adds nothing");
  const now = await balance(counted.app, partner.api_key);
  await set(now - esim_price + 1); // this purchase crosses it
  const crossing = await cost();
  assert.equal(crossing, off + 1, "the crossing adds the event's insert only");
  assert.equal((await events(partner.partner_id, "wallet.balance_low")).length, 1);
});

test("a shown balance_after never changes when a posting that started earlier commits later", async () => {
  // posted_seq must be drawn under the wallet's lock: a posting that drew its number before waiting
  // for the lock would commit behind a later one and shift the balance of a row already shown.
  const partner = await api.createPartner("Race", 1_000);
  await api.db.transaction().execute((trx) => holdFunds(trx, partner.partner_id, "ord_race_x", 100, "USD"));
  await api.db.transaction().execute((trx) => holdFunds(trx, partner.partner_id, "ord_race_y", 10, "USD"));
  const balanceOfX = async () => {
    const page = await request(target, "GET", "/v1/profile/wallet/transactions", { key: partner.api_key });
    return (page.body.data as Json[]).find((row) => row.order_id === "ord_race_x")?.balance_after;
  };
  const gate = () => {
    let open!: () => void;
    return { opened: new Promise<void>((resolve) => (open = resolve)), open: () => open() };
  };
  const aLocked = gate();
  const goA = gate();
  const bPosted = gate();
  const releaseB = gate();
  const a = api.db.transaction().execute(async (trx) => {
    await sql`select 1 from ledger_accounts where partner_id = ${partner.partner_id} for update`.execute(trx);
    aLocked.open();
    await goA.opened;
    // The statement itself, not deferred: it must run (and wait for locks) here.
    await resolvePendingPurchase(trx, "ord_race_x", "posted");
  });
  await aLocked.opened;
  const b = api.db.transaction().execute(async (trx) => {
    await resolvePendingPurchase(trx, "ord_race_y", "posted"); // waits for A's wallet lock
    bPosted.open();
    await releaseB.opened;
  });
  await new Promise((resolve) => setTimeout(resolve, 300)); // B is queued on the lock by now
  goA.open();
  await a;
  await bPosted.opened;
  const shown = await balanceOfX(); // X committed, Y posted but not committed
  releaseB.open();
  await b;
  assert.deepEqual(await balanceOfX(), shown, "a visible row's balance_after never changes");
  assert.deepEqual(shown, { amount_minor: 900, currency: "USD" });
});

test("Accept is negotiated by q-value: CSV only when text/csv is preferred, or named first on a tie", async () => {
  const partner = await api.createPartner("Negotiating", 1_000);
  const typeFor = async (accept: string | null) => {
    const response = await target.inject({
      method: "GET",
      url: "/v1/profile/wallet/transactions",
      headers: { authorization: `Bearer ${partner.api_key}`, ...(accept === null ? {} : { accept }) },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers.vary, "Accept");
    return String(response.headers["content-type"]).split(";")[0];
  };
  const cases: Array<[string | null, string]> = [
    [null, "application/json"],
    ["*/*", "application/json"],
    ["text/csv", "text/csv"],
    ["text/csv, application/json", "text/csv"],
    ["application/json, text/csv", "application/json"],
    ["text/csv;q=0.9, application/json", "application/json"],
    ["application/json;q=0.5, text/csv", "text/csv"],
    ["text/*", "text/csv"],
    ["text/csv;q=0, */*", "application/json"],
    ["application/json;q=0.2, */*;q=0.1, text/csv;q=0.3", "text/csv"],
    ["*/*, text/csv", "application/json"],
  ];
  for (const [accept, type] of cases) assert.equal(await typeFor(accept), type, String(accept));
});

test("a credit reference a spreadsheet would run as a formula is written inert in the CSV", async () => {
  const partner = await api.createPartner("Formulas", 0);
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 500, '=HYPERLINK("http://evil.example/x")');
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 500, "@SUM(1+1)");
  const csv = await csvOf(partner.api_key);
  const references = (parse(csv.text, { columns: true }) as Json[]).map((row) => row.reference).sort();
  assert.deepEqual(references, ['\'=HYPERLINK("http://evil.example/x")', "'@SUM(1+1)"]);
  assert.match(csv.text, /,-?\d+,USD,/, "amounts stay numbers");
});

test("the CSV names each order's client reference, ICCID and package, an adjustment's reason, and the amount in major units, oldest first", async () => {
  const partner = await api.createPartner("CSV columns", 0);
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 10_000, "wire-columns");
  const cart = await createCart(target, partner.api_key);
  const bought = await submitCart(target, partner.api_key, cart.cart_key, {
    client_reference: "=cmd|' /C calc'!A0",
  });
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  const iccid = bought.body.purchases[0].iccid;
  const refunded = await request(target, "POST", `/v1/orders/${bought.body.orderID}/refund`, {
    key: partner.api_key,
  });
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  const adjusted = await request(target, "POST", `/admin/partners/${partner.partner_id}/wallet/adjustments`, {
    key: ADMIN_TOKEN,
    body: { amount_minor: -350, reason: '-fee, per "agreement"', reference: "adj-csv" },
  });
  assert.equal(adjusted.status, 201, JSON.stringify(adjusted.body));
  const csv = await csvOf(partner.api_key);
  const records: Json[] = parse(csv.text, { columns: true });
  const price = bought.body.total.amount_minor;
  const major = (minor: number) =>
    `${minor < 0 ? "-" : ""}${Math.floor(Math.abs(minor) / 100)}.${String(Math.abs(minor) % 100).padStart(2, "0")}`;
  assert.deepEqual(
    records.map((r) => [
      r.type,
      r.amount,
      r.amount_minor,
      r.order_id,
      r.reference,
      r.client_reference,
      r.iccid,
      r.package_id,
      r.description,
    ]),
    [
      ["credit", "100.00", "10000", "", "wire-columns", "", "", "", ""],
      [
        "purchase",
        major(-price),
        String(-price),
        bought.body.orderID,
        "",
        "'=cmd|' /C calc'!A0",
        iccid,
        PACKAGE_ID,
        "",
      ],
      [
        "refund",
        major(price),
        String(price),
        bought.body.orderID,
        "",
        "'=cmd|' /C calc'!A0",
        iccid,
        PACKAGE_ID,
        "",
      ],
      ["adjustment", "-3.50", "-350", "", "adj-csv", "", "", "", '\'-fee, per "agreement"'],
    ],
  );
  assert.match(csv.text, /,-3\.50,-350,USD,/, "a negative amount is written as a number, not neutralised");
});
