// Operator adjustments (issue 32, finance): POST /admin/partners/{partner_id}/wallet/adjustments
// against the real ledger. Every answer of the route (201, the replay, 409, 402, 400, 404), what it
// leaves in the ledger, the audit log, the events and the partner's statement, and a debit racing
// purchases on a thin wallet: never below zero, no 500, the ledger audit clean.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { walletOf } from "../src/ledger/accounts.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { createCart, creditWallet, PACKAGE_ID, purchase, submitCart } from "./support/fixtures.ts";
import { type Json, request } from "./support/http.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const api = await createTestApp({ carrier_timeout_ms: 5_000 }, { database, carrier });
const target = api.app;

function adjust(partner_id: string, body: Json) {
  return request(target, "POST", `/admin/partners/${partner_id}/wallet/adjustments`, {
    key: ADMIN_TOKEN,
    body,
  });
}

async function settled(partner_id: string) {
  const wallet = (await walletOf(api.db, partner_id))!;
  return {
    available: wallet.available_minor,
    settled: wallet.posted_credits_minor - wallet.posted_debits_minor,
  };
}

async function auditEntries(partner_id: string) {
  const result = await sql<{ action: string; actor_type: string; details: Json }>`
    select action, actor_type, details from audit_log
    where partner_id = ${partner_id} and action = 'wallet.adjusted' order by audit_seq`.execute(api.db);
  return result.rows;
}

async function eventTypes(partner_id: string): Promise<string[]> {
  const result = await sql<{ type: string }>`
    select type from events where partner_id = ${partner_id} order by seq`.execute(api.db);
  return result.rows.map((row) => row.type);
}

test("a credit and a debit adjustment: 201 Transactions, posted at once, audited with the reason, on the partner's statement", async () => {
  const partner = await api.createPartner("Adjusted Travel");
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 10_000, "wire-adj");
  const up = await adjust(partner.partner_id, {
    amount_minor: 1_500,
    reason: "  Goodwill: the outage of 3 November  ",
    reference: "adj-up-1",
  });
  assert.equal(up.status, 201, JSON.stringify(up.body));
  assert.equal(up.headers.get("idempotent-replayed"), null);
  assert.equal(up.body.type, "adjustment");
  assert.deepEqual(up.body.amount, { amount_minor: 1_500, currency: "USD" });
  assert.deepEqual(up.body.balance_after, { amount_minor: 11_500, currency: "USD" });
  assert.equal(up.body.reference, "adj-up-1");
  assert.equal(up.body.order_id, null);
  assert.equal(up.body.description, "Goodwill: the outage of 3 November", "the reason, trimmed");
  const down = await adjust(partner.partner_id, {
    amount_minor: -350,
    reason: "Card fee",
    reference: "adj-down-1",
  });
  assert.equal(down.status, 201, JSON.stringify(down.body));
  assert.deepEqual(down.body.amount, { amount_minor: -350, currency: "USD" });
  assert.deepEqual(down.body.balance_after, { amount_minor: 11_150, currency: "USD" });
  assert.deepEqual(await settled(partner.partner_id), { available: 11_150, settled: 11_150 });

  const statement = await request(target, "GET", "/v1/profile/wallet/transactions", { key: partner.api_key });
  assert.deepEqual(
    statement.body.data.slice(0, 2).map((t: Json) => [t.transaction_id, t.type, t.description]),
    [
      [down.body.transaction_id, "adjustment", "Card fee"],
      [up.body.transaction_id, "adjustment", "Goodwill: the outage of 3 November"],
    ],
  );
  assert.deepEqual(statement.body.data[0], down.body, "the route answers the statement's row");
  const audit = await auditEntries(partner.partner_id);
  assert.deepEqual(
    audit.map((a) => [a.actor_type, a.details.reference, a.details.reason, a.details.amount.amount_minor]),
    [
      ["operator", "adj-up-1", "Goodwill: the outage of 3 November", 1_500],
      ["operator", "adj-down-1", "Card fee", -350],
    ],
  );
  // An adjustment is not a credit: no wallet.credited for it (the one credit above has its own).
  assert.deepEqual(
    (await eventTypes(partner.partner_id)).filter((t) => t === "wallet.credited"),
    ["wallet.credited"],
  );
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
});

test("the same reference again replays the first adjustment; another amount or sign is 409 and moves nothing", async () => {
  const partner = await api.createPartner("Replayed Adjustments");
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 5_000, "wire-replay");
  const first = await adjust(partner.partner_id, { amount_minor: -200, reason: "Fee", reference: "adj-r" });
  assert.equal(first.status, 201);
  const again = await adjust(partner.partner_id, {
    amount_minor: -200,
    reason: "Fee, sent twice",
    reference: "adj-r",
  });
  assert.equal(again.status, 201);
  assert.equal(again.headers.get("idempotent-replayed"), "true");
  assert.deepEqual(again.body, first.body, "the same transaction, its first reason kept");
  for (const amount_minor of [-201, 200]) {
    const reused = await adjust(partner.partner_id, { amount_minor, reason: "Fee", reference: "adj-r" });
    assert.equal(reused.status, 409, String(amount_minor));
    assert.equal(reused.body.code, "adjustment_reference_reused");
  }
  // Two at once with one reference: one adjustment.
  const racing = await Promise.all([
    adjust(partner.partner_id, { amount_minor: 300, reason: "Goodwill", reference: "adj-race" }),
    adjust(partner.partner_id, { amount_minor: 300, reason: "Goodwill", reference: "adj-race" }),
  ]);
  assert.deepEqual(
    racing.map((r) => r.status),
    [201, 201],
  );
  assert.equal(racing[0]!.body.transaction_id, racing[1]!.body.transaction_id);
  // A credit's reference is its own: the same text as an adjustment's is no conflict.
  const same_text = await adjust(partner.partner_id, {
    amount_minor: 1,
    reason: "x",
    reference: "wire-replay",
  });
  assert.equal(same_text.status, 201);
  assert.deepEqual(await settled(partner.partner_id), {
    available: 5_000 - 200 + 300 + 1,
    settled: 5_000 - 200 + 300 + 1,
  });
  assert.equal((await auditEntries(partner.partner_id)).length, 3, "a replay is not audited again");
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
});

test("a debit beyond the available balance (holds count) is 402 insufficient_balance and moves nothing", async () => {
  const partner = await api.createPartner("Thin Adjusted Travel");
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 1_000, "wire-thin");
  const over = await adjust(partner.partner_id, {
    amount_minor: -1_001,
    reason: "Too much",
    reference: "adj-over",
  });
  assert.equal(over.status, 402);
  assert.equal(over.body.code, "insufficient_balance");
  // A hold of 600 (a pending purchase) leaves 400 available: 401 is too much, 400 is not.
  await sql`update ledger_accounts set pending_debits_minor = 600 where partner_id = ${partner.partner_id}`.execute(
    api.db,
  );
  const held = await adjust(partner.partner_id, {
    amount_minor: -401,
    reason: "Held",
    reference: "adj-held",
  });
  assert.equal(held.status, 402);
  await sql`update ledger_accounts set pending_debits_minor = 0 where partner_id = ${partner.partner_id}`.execute(
    api.db,
  );
  const exact = await adjust(partner.partner_id, {
    amount_minor: -1_000,
    reason: "All of it",
    reference: "adj-all",
  });
  assert.equal(exact.status, 201, "down to exactly zero");
  assert.deepEqual(await settled(partner.partner_id), { available: 0, settled: 0 });
  // The refused reference was never used: it adjusts now that it fits.
  const later = await adjust(partner.partner_id, { amount_minor: 5, reason: "Back", reference: "adj-over" });
  assert.equal(later.status, 201);
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
});

test("bad amounts, a missing, blank, multi-line or too long reason, a bad reference: 400; an unknown partner: 404; nothing else moves", async () => {
  const partner = await api.createPartner("Refused Adjustments");
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 1_000, "wire-refused");
  const bodies: Json[] = [
    { amount_minor: 0, reason: "Zero", reference: "r1" },
    { amount_minor: 1.5, reason: "Half", reference: "r2" },
    { amount_minor: "100", reason: "Text", reference: "r3" },
    { amount_minor: 1e15, reason: "Huge", reference: "r4" },
    { amount_minor: -1e15, reason: "Huge", reference: "r5" },
    { amount_minor: 100, reference: "r6" },
    { amount_minor: 100, reason: "   ", reference: "r7" },
    { amount_minor: 100, reason: "", reference: "r8" },
    { amount_minor: 100, reason: "x".repeat(501), reference: "r9" },
    { amount_minor: 100, reason: "nul \u0000 inside", reference: "r11" },
    { amount_minor: 100, reason: "two\nlines", reference: "r12" },
    { amount_minor: 100, reason: "No reference" },
    { amount_minor: 100, reason: "Spaces", reference: "has space" },
    { amount_minor: 100, reason: "Extra", reference: "r10", note: "no" },
  ];
  for (const body of bodies) {
    const answer = await adjust(partner.partner_id, body);
    assert.equal(answer.status, 400, JSON.stringify(body));
    assert.equal(answer.body.code, "invalid_request");
  }
  // 500 is a limit in characters, not UTF-16 units: 500 emoji pass, 501 do not.
  const emoji = await adjust(partner.partner_id, {
    amount_minor: 1,
    reason: "💶".repeat(500),
    reference: "r-emoji",
  });
  assert.equal(emoji.status, 201, JSON.stringify(emoji.body));
  assert.equal(emoji.body.description, "💶".repeat(500));
  const too_many = await adjust(partner.partner_id, {
    amount_minor: 1,
    reason: "💶".repeat(501),
    reference: "r-e2",
  });
  assert.equal(too_many.status, 400);
  const unknown = await adjust("ptr_AAAAAAAAAAAAAAAAAAAAAA", {
    amount_minor: 1,
    reason: "x",
    reference: "r",
  });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.code, "partner_not_found");
  const unauthorized = await request(
    target,
    "POST",
    `/admin/partners/${partner.partner_id}/wallet/adjustments`,
    {
      key: partner.api_key,
      body: { amount_minor: 1, reason: "x", reference: "r" },
    },
  );
  assert.equal(unauthorized.status, 401, "a partner's key is not the operator's");
  assert.deepEqual(
    await settled(partner.partner_id),
    { available: 1_001, settled: 1_001 },
    "only the emoji one",
  );
  assert.equal((await auditEntries(partner.partner_id)).length, 1);
});

test("a debit that takes the balance below the alert level sends wallet.balance_low, once", async () => {
  const partner = await api.createPartner("Alerted Adjustments");
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 1_000, "wire-alert");
  await request(target, "PUT", "/v1/profile/wallet/low-balance-alert", {
    key: partner.api_key,
    body: { threshold_minor: 500 },
  });
  await adjust(partner.partner_id, { amount_minor: -400, reason: "Fee", reference: "a1" }); // 1000 -> 600
  await adjust(partner.partner_id, { amount_minor: -200, reason: "Fee", reference: "a2" }); // 600 -> 400: crosses
  await adjust(partner.partner_id, { amount_minor: -100, reason: "Fee", reference: "a3" }); // still below
  const low = await sql<{ data: Json }>`
    select data from events where partner_id = ${partner.partner_id} and type = 'wallet.balance_low'`.execute(
    api.db,
  );
  assert.deepEqual(
    low.rows.map((r) => r.data),
    [{ balance: { amount_minor: 400, currency: "USD" }, threshold: { amount_minor: 500, currency: "USD" } }],
  );
});

test("a debit adjustment racing 20 purchases on a thin wallet: never below zero, no 500, the books balance", async () => {
  const partner = await api.createPartner("Racing Adjustments");
  const packages = await request(target, "GET", "/v1/esim/destination/FR/packages", { key: partner.api_key });
  const price = packages.body.data.find((p: Json) => p.package_id === PACKAGE_ID).wholesale_price
    .amount_minor;
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, price * 5, "wire-race");
  const carts = await Promise.all(Array.from({ length: 20 }, () => createCart(target, partner.api_key)));
  const debit = price * 2;
  const [adjusted, ...submits] = await Promise.all([
    adjust(partner.partner_id, { amount_minor: -debit, reason: "Chargeback", reference: "adj-racing" }),
    ...carts.map((cart) => submitCart(target, partner.api_key, cart.cart_key)),
  ]);
  assert.ok(
    [201, 402].includes(adjusted!.status),
    `adjustment ${adjusted!.status} ${JSON.stringify(adjusted!.body)}`,
  );
  for (const s of submits)
    assert.ok([200, 402].includes(s.status), `submit ${s.status} ${JSON.stringify(s.body)}`);
  const bought = submits.filter((s) => s.status === 200).length;
  const taken = adjusted!.status === 201 ? debit : 0;
  assert.ok(bought * price + taken <= price * 5, "never more spent than the wallet held");
  const wallet = await settled(partner.partner_id);
  assert.ok(wallet.available >= 0);
  assert.equal(wallet.available, price * 5 - bought * price - taken);
  assert.deepEqual((await auditLedger(api.db)).breaches, []);
  // Whatever won the race, the money left in the wallet is still the wallet's to spend or correct.
  if (wallet.available >= price) await purchase(target, partner.api_key);
});
