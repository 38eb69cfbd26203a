// The partner console answers a statement PostgreSQL cancelled (57014: statement_timeout, or an
// operator's pg_cancel_backend) or a deadlock (40P01) as the API does: 503 with Retry-After (the
// transaction rolled back whole, a reload may succeed), a page saying so, never a 500 "Something
// went wrong" (src/shared/database-busy.ts; the API's side is http.cancelled-statement.test.ts).
// Real HTTP on a real port; the page's statement is held by a lock the test takes, then cancelled
// as statement_timeout would, without waiting 15 s.

import assert from "node:assert/strict";
import { after, test } from "node:test";
import pg from "pg";
import { createPool } from "../src/db/pool.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { creditWallet } from "../src/wallet/credit-wallet.ts";
import { createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { ownerCookie } from "./support/people.ts";
import { waitFor } from "./support/world.ts";

const database = await createTestDatabase({ catalog: true });
const pool = createPool(database.url, 4, "esim-console-busy-pool");
after(() => pool.end());
const app = await createTestApp({}, { database: { url: database.url, pool } });
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });

/** A partner's owner signs in to the console through its form: the Cookie header. */
const signIn = (partner: { partner_id: string }) => ownerCookie(database.pool, base, partner.partner_id);

test("a console page whose statement is cancelled is 503 with Retry-After, not 500; the reload is served", async () => {
  const partner = await app.createPartner("Console Busy Travel", 0);
  await creditWallet(
    app.db,
    { partner_id: partner.partner_id, amount_minor: 500, reference: "first" },
    CLI_ACTOR,
  );
  const cookie = await signIn(partner);
  const holder = new pg.Client({ connectionString: database.url });
  await holder.connect();
  await holder.query("begin");
  await holder.query("lock table ledger_transfers in access exclusive mode");
  const loading = fetch(`${base}/console/wallet`, { headers: { cookie }, redirect: "manual" });
  const waiting = async () => {
    const result = await database.pool.query<{ pid: number }>(
      "select pid from pg_stat_activity where application_name = 'esim-console-busy-pool' and wait_event_type = 'Lock'",
    );
    return result.rows[0]?.pid ?? null;
  };
  const pid = await waitFor("the page's statement waiting for the lock", waiting);
  await database.pool.query("select pg_cancel_backend($1)", [pid]);
  const answer = await loading;
  const text = await answer.text();
  await holder.query("rollback");
  await holder.end();
  assert.equal(answer.status, 503, text.slice(0, 500));
  assert.match(answer.headers.get("content-type") ?? "", /^text\/html/);
  assert.ok(Number(answer.headers.get("retry-after")) >= 1, "Retry-After says when to come back");
  assert.doesNotMatch(text, /Something went wrong/);
  const again = await fetch(`${base}/console/wallet`, { headers: { cookie }, redirect: "manual" });
  assert.equal(again.status, 200);
});
