import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { DeferredWriteError } from "../src/db/pool.ts";
import { walletOf } from "../src/ledger/accounts.ts";
import { holdFunds, resolveHoldLater } from "../src/ledger/transfers.ts";
import { newId } from "../src/shared/ids.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";

const app = await createTestApp();
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function credit(partner_id: string, amount_minor: number, reference: string) {
  return app.app.inject({
    method: "POST",
    url: `/admin/partners/${partner_id}/wallet/credits`,
    headers: admin,
    payload: { amount_minor, reference },
  });
}

/** A wallet's available balance, pending holds and posted spending. */
async function walletFigures(partner_id: string) {
  const wallet = await walletOf(app.db, partner_id);
  assert.ok(wallet, "the partner has a wallet");
  return {
    available: wallet.available_minor,
    pending: wallet.pending_debits_minor,
    spent: wallet.posted_debits_minor,
  };
}

test("a credit reference applied twice credits once, even when the two race", async () => {
  const partner = await app.createPartner();
  const [first, second] = await Promise.all([
    credit(partner.partner_id, 5000, "wire-1"),
    credit(partner.partner_id, 5000, "wire-1"),
  ]);
  assert.equal(first.statusCode, 201);
  assert.equal(second.statusCode, 201);
  assert.deepEqual([first.json().credited, second.json().credited].sort(), [false, true]);
  const again = await credit(partner.partner_id, 5000, "wire-1");
  assert.deepEqual(again.json(), { balance: { amount_minor: 5000, currency: "USD" }, credited: false });
  const wallet = await app.app.inject({ url: "/v1/profile/wallet", headers: app.auth(partner.api_key) });
  assert.equal(wallet.json().balance.amount_minor, 5000);
  const conflict = await credit(partner.partner_id, 7000, "wire-1");
  assert.equal(conflict.statusCode, 409);
  assert.equal(conflict.json().code, "credit_reference_reused");
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("credits reject bad amounts and unknown partners, and change nothing", async () => {
  const partner = await app.createPartner();
  for (const amount_minor of [0, -5, 1.5, "100", 1e15]) {
    const response = await app.app.inject({
      method: "POST",
      url: `/admin/partners/${partner.partner_id}/wallet/credits`,
      headers: admin,
      payload: { amount_minor, reference: "r" },
    });
    assert.equal(response.statusCode, 400, String(amount_minor));
    assert.equal(response.json().code, "invalid_request");
  }
  const unknown = await credit("ptr_AAAAAAAAAAAAAAAAAAAAAA", 100, "r");
  assert.equal(unknown.statusCode, 404);
  assert.equal(unknown.json().code, "partner_not_found");
  const wallet = await walletOf(app.db, partner.partner_id);
  assert.equal(wallet!.posted_credits_minor, 0);
});

test("20 concurrent holds that together exceed the balance: exactly the affordable ones succeed", async () => {
  const partner = await app.createPartner();
  await credit(partner.partner_id, 7 * 450, "wire-7");
  const attempts = Array.from({ length: 20 }, () =>
    app.db.transaction().execute((trx) => holdFunds(trx, partner.partner_id, newId("order"), 450, "USD")),
  );
  const results = await Promise.all(attempts);
  assert.equal(results.filter(Boolean).length, 7);
  const wallet = await walletOf(app.db, partner.partner_id);
  assert.equal(wallet!.available_minor, 0);
  assert.equal(wallet!.pending_debits_minor, 7 * 450);
  assert.deepEqual((await auditLedger(app.db)).breaches, []);
});

test("the database itself refuses a negative available balance, whatever the code does", async () => {
  const partner = await app.createPartner();
  await credit(partner.partner_id, 100, "wire-small");
  await assert.rejects(
    sql`update ledger_accounts set pending_debits_minor = 101 where partner_id = ${partner.partner_id}`.execute(
      app.db,
    ),
    /wallet_available_not_negative/,
  );
});

test("a hold is posted or voided exactly once; voiding returns the money", async () => {
  const partner = await app.createPartner();
  await credit(partner.partner_id, 1000, "wire-1000");
  const posted = newId("order");
  const voided = newId("order");
  await app.db.transaction().execute((trx) => holdFunds(trx, partner.partner_id, posted, 300, "USD"));
  await app.db.transaction().execute((trx) => holdFunds(trx, partner.partner_id, voided, 200, "USD"));
  // Five at once: one posts, the other four find it no longer pending and fail, rolled back.
  const resolve = (order_id: string, outcome: "posted" | "voided") =>
    app.db
      .transaction()
      .execute((trx) => resolveHoldLater(trx, order_id, outcome))
      .then(
        () => true,
        (error: Error) => {
          assert.equal(((error.cause ?? error) as { code?: string }).code, "P0004", String(error));
          return false;
        },
      );
  const concurrentPosts = await Promise.all(Array.from({ length: 5 }, () => resolve(posted, "posted")));
  assert.equal(concurrentPosts.filter(Boolean).length, 1);
  assert.equal(await resolve(voided, "voided"), true);
  assert.equal(await resolve(voided, "posted"), false);
  assert.deepEqual(await walletFigures(partner.partner_id), { available: 700, pending: 0, spent: 300 });
  const states = await sql<{ state: string }>`
    select state from ledger_transfers where reference in (${posted}, ${voided}) order by amount_minor desc`.execute(
    app.db,
  );
  assert.deepEqual(
    states.rows.map((r) => r.state),
    ["posted", "voided"],
  );
});

test("resolveHoldLater posts a pending hold with the COMMIT, and fails the transaction when none is pending", async () => {
  const partner = await app.createPartner();
  await credit(partner.partner_id, 1000, "wire-later");
  // Several rounds: the first runs go out at once and prepare the statement, the later ones are
  // held and carried by the COMMIT (src/db/pool.ts deferWrite); each must mean the same.
  let carried = 0;
  for (let round = 0; round < 6; round++) {
    const order_id = newId("order");
    await app.db.transaction().execute((trx) => holdFunds(trx, partner.partner_id, order_id, 10, "USD"));
    await app.db
      .transaction()
      .execute((trx) => resolveHoldLater(trx, order_id, round % 2 ? "voided" : "posted"));
    // Resolved already: the statement's own check fails it, and the whole transaction with it.
    const marker = `later_${round}_${order_id}`;
    await assert.rejects(
      app.db.transaction().execute(async (trx) => {
        await sql`insert into partners (partner_id, name) values (${marker}, ${marker})`.execute(trx);
        await resolveHoldLater(trx, order_id, "posted");
      }),
      (error: Error) => {
        if (error instanceof DeferredWriteError) carried++;
        const cause = (error.cause ?? error) as { code?: string; message: string };
        assert.equal(cause.code, "P0004");
        assert.match(
          cause.message,
          new RegExp(`order ${order_id} has one pending purchase transfer to post`),
        );
        return true;
      },
    );
    const left = await sql`select 1 from partners where partner_id = ${marker}`.execute(app.db);
    assert.equal(left.rows.length, 0, "what the failed transaction wrote is rolled back");
  }
  assert.deepEqual(
    await walletFigures(partner.partner_id),
    { available: 970, pending: 0, spent: 30 },
    "three posted, three voided, each once",
  );
  assert.ok(carried > 0, "some failures came with the COMMIT that carried the held statement");
});

test("the books balance, and the audit reports each way they can stop balancing", async () => {
  // Its own database: the tests above post holds for made-up orders, which the audit rightly flags.
  const books = await createTestApp();
  const partner = await books.createPartner("Books", 5_000);
  const audit = await auditLedger(books.db);
  assert.deepEqual(audit.breaches, []);
  assert.ok(audit.transfers > 0);

  // A wallet whose running total drifts from its transfers.
  await sql`update ledger_accounts set posted_credits_minor = 1 where partner_id = ${partner.partner_id}`.execute(
    books.db,
  );
  const drifted = await auditLedger(books.db);
  assert.equal(drifted.breaches.length, 1);
  assert.match(drifted.breaches[0]!, /posted_credits_minor is 1 but its transfers say 5000/);
  await sql`update ledger_accounts set posted_credits_minor = 5000 where partner_id = ${partner.partner_id}`.execute(
    books.db,
  );

  // Revenue that no completed order accounts for.
  const order_id = newId("order");
  await books.db.transaction().execute((trx) => holdFunds(trx, partner.partner_id, order_id, 300, "USD"));
  await books.db.transaction().execute((trx) => resolveHoldLater(trx, order_id, "posted"));
  const orphan = await auditLedger(books.db);
  assert.ok(
    orphan.breaches.some((b) => /revenue in USD is 300 but completed and refunded orders total 0/.test(b)),
    orphan.breaches.join("; "),
  );
});
