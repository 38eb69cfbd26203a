// Monthly statements (issue 32, finance) against the real ledger: credits, purchases, top-ups,
// refunds and operator adjustments of both signs spread over three months (posted instants moved back with SQL, in posting order), then for
// every month opening + the five totals = closing, each month opens where the one before closed, the
// first opens at 0, the month under way closes at the wallet's settled balance (a running total kept
// apart from the transfers), and each total is the month's rows of that type from the statement API
// and the month's transfers of that kind summed straight from ledger_transfers.
// The PDF is a real PDF (Debian's pdftotext reads it) with the totals and every transaction.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { walletOf } from "../src/ledger/accounts.ts";
import { majorUnits } from "../src/lib/major-units.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { creditWallet, purchase, topUpBody } from "./support/fixtures.ts";
import { type Json, request } from "./support/http.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const api = await createTestApp({ carrier_timeout_ms: 5_000 }, { database, carrier });
const target = api.app;
const scratch = await mkdtemp(path.join(tmpdir(), "statement-pdf-"));
after(() => rm(scratch, { recursive: true, force: true }));

/** YYYY-MM of the month `back` months before the current one (UTC). */
function monthBack(back: number): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1)).toISOString().slice(0, 7);
}

/** Moves every posted transfer of the partner's wallet with posted_seq in [from, to] to `month`'s 10th, in posting order. */
async function movePosted(account_id: string, seqs: number[], month: string): Promise<void> {
  await database.pool.query(
    `update ledger_transfers set resolved_at = $3::timestamptz + (posted_seq - $4) * interval '1 minute'
     where (credit_account_id = $1 or debit_account_id = $1) and posted_seq = any($2::bigint[])`,
    [account_id, seqs, `${month}-10T08:00:00Z`, Math.min(...seqs)],
  );
}

async function postedSeqs(account_id: string): Promise<number[]> {
  const { rows } = await database.pool.query(
    `select posted_seq from ledger_transfers where (credit_account_id = $1 or debit_account_id = $1)
       and posted_seq is not null order by posted_seq`,
    [account_id],
  );
  return rows.map((r) => Number(r.posted_seq));
}

async function statement(key: string, month: string, accept?: string) {
  return request(target, "GET", `/v1/profile/wallet/statements/${month}`, {
    key,
    headers: accept ? { accept } : {},
  });
}

const TOTALS = ["credits", "purchases", "topups", "refunds", "adjustments"] as const;

async function adjust(partner_id: string, amount_minor: number, reference: string, reason: string) {
  const answer = await request(target, "POST", `/admin/partners/${partner_id}/wallet/adjustments`, {
    key: ADMIN_TOKEN,
    body: { amount_minor, reference, reason },
  });
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  return answer.body;
}

/**
 * The month's totals summed from ledger_transfers alone (signed as they moved the wallet; a purchase
 * transfer is a top-up when its order is one), and the settled balance before the month and before
 * the next: what the statement must agree with.
 */
async function ledgerMonth(account_id: string, month: string) {
  const { rows } = await database.pool.query(
    `with bounds as (select $2::timestamptz as start, $2::timestamptz + interval '1 month' as stop),
     moves as (
       select t.resolved_at, case when t.credit_account_id = $1 then t.amount_minor else -t.amount_minor end as signed,
              case t.kind when 'wallet_credit' then 'credits' when 'refund' then 'refunds' when 'adjustment' then 'adjustments'
                          else case o.type when 'topup' then 'topups' else 'purchases' end end as total
       from ledger_transfers t left join orders o on t.kind = 'purchase' and o.order_id = t.reference
       where (t.credit_account_id = $1 or t.debit_account_id = $1) and t.state = 'posted')
     select total, coalesce(sum(signed) filter (where resolved_at >= start and resolved_at < stop), 0)::bigint as moved,
            coalesce(sum(signed) filter (where resolved_at < start), 0)::bigint as before
     from moves, bounds group by total`,
    [account_id, `${month}-01T00:00:00Z`],
  );
  const totals = Object.fromEntries(TOTALS.map((t) => [t, 0])) as Record<(typeof TOTALS)[number], number>;
  let opening = 0;
  for (const row of rows) {
    totals[row.total as (typeof TOTALS)[number]] = Number(row.moved);
    opening += Number(row.before);
  }
  return { opening, totals };
}

test("three months of credits, purchases, top-ups, refunds and adjustments: opening + totals = closing = the ledger's, chained, and the last closes at the settled balance", async () => {
  const partner = await api.createPartner("Monthly Finance Travel");
  const key = partner.api_key;
  const wallet = (await walletOf(api.db, partner.partner_id))!;
  // Two months back: a credit and two purchases.
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 20_000, "wire-1");
  const first = await purchase(target, key);
  await purchase(target, key);
  await movePosted(wallet.account_id, await postedSeqs(wallet.account_id), monthBack(2));
  // Last month, one of everything: a credit, a purchase, a top-up of the first eSIM, a refund of a
  // new purchase and adjustments both ways.
  const seen = new Set(await postedSeqs(wallet.account_id));
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 3_000, "wire-1b");
  await purchase(target, key);
  const iccid = first.purchases[0].iccid;
  const offer = (await request(target, "GET", `/v1/orders/available-topups/${iccid}`, { key })).body.data[0];
  const topup = await request(target, "POST", "/v1/orders/submit-topup", {
    key,
    headers: { "idempotency-key": "monthly-topup-1" },
    body: topUpBody(iccid, offer),
  });
  assert.equal(topup.status, 200, JSON.stringify(topup.body));
  const refundable = await purchase(target, key);
  const refunded = await request(target, "POST", `/v1/orders/${refundable.orderID}/refund`, { key });
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  await adjust(partner.partner_id, 1_250, "adj-goodwill", "Goodwill for the outage of the 3rd");
  await adjust(partner.partner_id, -300, "adj-fee", "Bank fee on wire-1");
  await movePosted(
    wallet.account_id,
    (await postedSeqs(wallet.account_id)).filter((s) => !seen.has(s)),
    monthBack(1),
  );
  // This month: a credit and a purchase, as posted.
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 5_000, "wire-2");
  await purchase(target, key);
  await adjust(partner.partner_id, -75, "adj-this-month", "Correction of a rounding");

  let previous_closing = 0;
  for (const back of [3, 2, 1, 0]) {
    const month = monthBack(back);
    const answer = await statement(key, month);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const s = answer.body;
    assert.equal(s.month, month);
    assert.equal(
      s.opening_balance.amount_minor,
      previous_closing,
      `${month} opens where the month before closed`,
    );
    const moved = TOTALS.reduce((sum, t) => sum + s[t].amount_minor, 0);
    assert.equal(
      s.opening_balance.amount_minor + moved,
      s.closing_balance.amount_minor,
      `${month}: the identity`,
    );
    // Each total is the month's rows of that type, read through the statement API.
    const [from, to] = [
      `${month}-01`,
      new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5)), 0)).toISOString().slice(0, 10),
    ];
    const rows: Json[] = (
      await request(target, "GET", `/v1/profile/wallet/transactions?from=${from}&to=${to}&limit=100`, { key })
    ).body.data;
    for (const [total, type] of [
      ["credits", "credit"],
      ["purchases", "purchase"],
      ["topups", "topup"],
      ["refunds", "refund"],
      ["adjustments", "adjustment"],
    ] as const) {
      const sum = rows.filter((r) => r.type === type).reduce((acc, r) => acc + r.amount.amount_minor, 0);
      assert.equal(s[total].amount_minor, sum, `${month} ${total}`);
    }
    // And each is the ledger's own: the month's transfers of that kind, summed in SQL.
    const ledger = await ledgerMonth(wallet.account_id, month);
    assert.equal(s.opening_balance.amount_minor, ledger.opening, `${month} opening is the ledger's`);
    for (const total of TOTALS)
      assert.equal(s[total].amount_minor, ledger.totals[total], `${month} ${total} (ledger)`);
    if (rows[0] !== undefined)
      assert.equal(
        s.closing_balance.amount_minor,
        rows[0].balance_after.amount_minor,
        `${month} closes at its newest row's balance`,
      );
    previous_closing = s.closing_balance.amount_minor;
  }
  assert.ok((await statement(key, monthBack(2))).body.purchases.amount_minor < 0, "purchases are negative");
  assert.ok((await statement(key, monthBack(1))).body.topups.amount_minor < 0, "top-ups are negative");
  assert.ok((await statement(key, monthBack(1))).body.refunds.amount_minor > 0, "refunds are positive");
  assert.equal(
    (await statement(key, monthBack(1))).body.adjustments.amount_minor,
    950,
    "adjustments both ways",
  );
  for (const total of TOTALS)
    assert.notEqual(
      (await statement(key, monthBack(1))).body[total].amount_minor,
      0,
      `last month has ${total}`,
    );
  const settled = (await walletOf(api.db, partner.partner_id))!;
  assert.equal(
    previous_closing,
    settled.posted_credits_minor - settled.posted_debits_minor,
    "this month closes at the settled balance",
  );

  // The operator's view of the same month is the same statement.
  const operator = await request(
    target,
    "GET",
    `/admin/partners/${partner.partner_id}/wallet/statements/${monthBack(1)}`,
    { key: ADMIN_TOKEN },
  );
  assert.deepEqual(operator.body, (await statement(key, monthBack(1))).body);
});

test("the PDF statement is a PDF with the month's totals and every transaction, oldest first", async () => {
  const partner = await api.createPartner("PDF Travel");
  await creditWallet(target, ADMIN_TOKEN, partner.partner_id, 12_345, "wire-pdf");
  const bought = await purchase(target, partner.api_key);
  await adjust(partner.partner_id, -350, "adj-pdf", "Card fee for the November top-up");
  const month = monthBack(0);
  const answer = await target.inject({
    method: "GET",
    url: `/v1/profile/wallet/statements/${month}`,
    headers: { authorization: `Bearer ${partner.api_key}`, accept: "application/pdf" },
  });
  assert.equal(answer.statusCode, 200, answer.body);
  assert.equal(answer.headers["content-type"], "application/pdf");
  assert.equal(answer.headers.vary, "Accept");
  assert.equal(answer.rawPayload.subarray(0, 5).toString(), "%PDF-");
  const file = path.join(scratch, "statement.pdf");
  await writeFile(file, answer.rawPayload);
  const { stdout } = await promisify(execFile)("pdftotext", ["-layout", file, "-"]);
  const json = (await statement(partner.api_key, month)).body;
  assert.match(stdout, new RegExp(`Wallet statement ${month}`));
  assert.match(stdout, /PDF Travel/);
  for (const total of ["opening_balance", "closing_balance", ...TOTALS] as const)
    assert.ok(
      stdout.includes(majorUnits(json[total].amount_minor, "USD")),
      `${total} ${majorUnits(json[total].amount_minor, "USD")} printed`,
    );
  const credit_at = stdout.indexOf("wire-pdf");
  const purchase_at = stdout.indexOf(bought.orderID);
  const adjustment_at = stdout.indexOf("adj-pdf");
  assert.ok(credit_at > 0 && purchase_at > credit_at, "every transaction, oldest first");
  assert.ok(adjustment_at > purchase_at, "the adjustment, last");
  assert.match(stdout, /Card fee for the November top-up/, "with its reason");
  assert.match(stdout, /-3\.50/);
});

test("a month that is malformed or has not begun is 400 and a partner without rows gets zeros", async () => {
  const partner = await api.createPartner("Quiet Month Travel");
  for (const month of ["2026-13", "26-01", "2026-1"]) {
    const answer = await request(target, "GET", `/v1/profile/wallet/statements/${month}`, {
      key: partner.api_key,
    });
    assert.equal(answer.status, 400, month);
    assert.equal(answer.body.code, "invalid_request");
  }
  const next = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1))
    .toISOString()
    .slice(0, 7);
  const future = await statement(partner.api_key, next);
  assert.equal(future.status, 400);
  assert.match(future.body.detail, /has not begun/);
  const quiet = await statement(partner.api_key, monthBack(0));
  assert.equal(quiet.status, 200);
  for (const total of ["opening_balance", "closing_balance", ...TOTALS] as const)
    assert.equal(quiet.body[total].amount_minor, 0);
  const unknown = await request(
    target,
    "GET",
    `/admin/partners/ptr_unknownunknownunknow/wallet/statements/${monthBack(0)}`,
    { key: ADMIN_TOKEN },
  );
  assert.equal(unknown.status, 404);
});
