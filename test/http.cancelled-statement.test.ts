// A statement PostgreSQL cancels (57014: the pool's 15 s statement_timeout, or an operator's
// pg_cancel_backend) rolled its transaction back whole: the partner is told 503 service_unavailable
// with Retry-After, never 500 internal_error (issue #30: a CSV export held past the timeout
// answered 500). Real HTTP on a real port; the request's statement is held by a lock the test
// takes, then cancelled as statement_timeout would, without waiting 15 s. A session PostgreSQL
// terminates (57P01, what a fast shutdown sends every session; issue #37) is answered the same way.

import assert from "node:assert/strict";
import { after, test } from "node:test";
import pg from "pg";
import { createPool } from "../src/db/pool.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { creditWallet } from "../src/wallet/credit-wallet.ts";
import { createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { type Answer, request } from "./support/http.ts";
import { waitFor } from "./support/world.ts";

const database = await createTestDatabase({ catalog: true });
const pool = createPool(database.url, 4, "esim-cancelled-pool");
after(() => pool.end());
const app = await createTestApp({}, { database: { url: database.url, pool } });
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });

/**
 * A statement read of a new partner's, held by a lock the test takes and then ended by `end`
 * (pg_cancel_backend, or pg_terminate_backend as a fast shutdown does to every session): the
 * answer, and a second read made once the lock is gone.
 */
async function interruptedRead(
  name: string,
  amount_minor: number,
  end: "pg_cancel_backend" | "pg_terminate_backend",
): Promise<{ answer: Answer; again: Answer }> {
  const partner = await app.createPartner(name, 0);
  await creditWallet(app.db, { partner_id: partner.partner_id, amount_minor, reference: "first" }, CLI_ACTOR);
  const holder = new pg.Client({ connectionString: database.url });
  await holder.connect();
  await holder.query("begin");
  await holder.query("lock table ledger_transfers in access exclusive mode");
  const reading = request(base, "GET", "/v1/profile/wallet/transactions?limit=10", { key: partner.api_key });
  const waiting = async () => {
    const result = await database.pool.query<{ pid: number }>(
      "select pid from pg_stat_activity where application_name = 'esim-cancelled-pool' and wait_event_type = 'Lock'",
    );
    return result.rows[0]?.pid ?? null;
  };
  const pid = await waitFor("the statement read waiting for the lock", waiting);
  await database.pool.query(`select ${end}($1)`, [pid]);
  const answer = await reading;
  await holder.query("rollback");
  await holder.end();
  // The partner's retry, as Retry-After tells it: a 503 again (a loaded machine, where the pool has
  // not yet seen its dead connection go) is followed by another retry; never a 500.
  let again = await request(base, "GET", "/v1/profile/wallet/transactions?limit=10", {
    key: partner.api_key,
  });
  for (let retries = 0; again.status === 503 && retries < 5; retries++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    again = await request(base, "GET", "/v1/profile/wallet/transactions?limit=10", { key: partner.api_key });
  }
  return { answer, again };
}

test("a statement cancelled while it waits is 503 with Retry-After, not 500; the next read is answered", async () => {
  const { answer, again } = await interruptedRead("Cancelled Statement Travel", 500, "pg_cancel_backend");
  assert.equal(answer.status, 503, JSON.stringify(answer.body));
  assert.equal(answer.body.code, "service_unavailable");
  assert.ok(Number(answer.headers.get("retry-after")) >= 1, "Retry-After says when to come back");
  assert.equal(again.status, 200);
  assert.equal(again.body.data.length, 1);
});

test("a request whose session PostgreSQL terminates (57P01, as a fast shutdown does) is 503 with Retry-After, not 500", async () => {
  // What every session gets from `pg_ctl stop -m fast`, here for this one session alone.
  const { answer, again } = await interruptedRead("Terminated Session Travel", 700, "pg_terminate_backend");
  assert.equal(answer.status, 503, JSON.stringify(answer.body));
  assert.equal(answer.body.code, "service_unavailable");
  assert.ok(Number(answer.headers.get("retry-after")) >= 1, "Retry-After says when to come back");
  // The pool dropped the dead connection: the next request gets a fresh one and is answered.
  assert.equal(again.status, 200);
  assert.equal(again.body.data.length, 1);
});
