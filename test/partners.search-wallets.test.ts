// The operator's partners list reads the page's wallets in one statement (not one per partner, which
// at 100 a page would take every pool connection), and shows each partner its own balance.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";

const queries: string[] = [];
const t = await createTestApp({}, { onQuery: (text) => queries.push(text) });
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

test("a page of partners reads its wallets in one statement, each partner with its own balance and hold", async () => {
  const tag = `W${Date.now().toString(36)}`;
  const credits = [100, 2_500, 0, 730];
  const made = [];
  for (const [i, credit_minor] of credits.entries())
    made.push(await t.createPartner(`${tag} ${i}`, credit_minor));

  queries.length = 0;
  const answer = await t.app.inject({ url: `/admin/partners?q=${tag}&limit=100`, headers: admin });
  assert.equal(answer.statusCode, 200, answer.body);
  const listed = answer.json().data as Array<{
    partner_id: string;
    balance: { amount_minor: number; currency: string };
    held: { amount_minor: number };
  }>;
  assert.deepEqual(
    listed.map((p) => [p.partner_id, p.balance.amount_minor, p.balance.currency, p.held.amount_minor]),
    made.map((p, i) => [p.partner_id, credits[i], "USD", 0]).reverse(),
    "newest first, each with its own wallet",
  );
  assert.equal(
    queries.filter((text) => /from ledger_accounts/.test(text)).length,
    1,
    `one wallet statement for the page: ${queries.join("\n---\n")}`,
  );
});
