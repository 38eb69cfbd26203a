// The held BEGIN (src/db/pool.ts): once a connection has BEGIN prepared, Kysely's `begin` goes out
// in front of the transaction's first statement, one round trip for both, with the transaction's
// meaning unchanged: the first statement runs inside it, an error rolls it all back, an empty
// transaction sends nothing.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, test } from "node:test";
import { sql } from "kysely";
import { createKysely, createPool } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { countedKysely, createTestDatabase } from "./support/db.ts";

const database = await createTestDatabase();

function counted(prepare_threshold = 1) {
  return countedKysely(database.url, "esim-held-begin", prepare_threshold);
}

const statementTimeout = sql<{
  statement_timeout: string;
}>`select current_setting('statement_timeout') as statement_timeout`;

test("a transaction's first statement runs inside it, and BEGIN costs no round trip of its own", async () => {
  const { db, roundTrips } = counted();
  const run = () =>
    db.transaction().execute(async (trx) => {
      // SET LOCAL lasts to the end of the transaction it runs in: the next statement sees it only
      // if both ran in the same explicit transaction.
      await sql`select set_config('statement_timeout', '1234ms', true)`.execute(trx);
      return (await statementTimeout.execute(trx)).rows[0]!.statement_timeout;
    });
  assert.equal(await run(), "1234ms", "the first transaction, BEGIN sent plainly");
  const before = roundTrips();
  assert.equal(await run(), "1234ms", "BEGIN held and sent in front of the first statement");
  assert.equal(roundTrips() - before, 3, "two statements and the COMMIT: BEGIN rode with the first");
  assert.equal(
    (await statementTimeout.execute(db)).rows[0]!.statement_timeout,
    "15s",
    "SET LOCAL ended with it",
  );
});

test("an error in the first statement rolls the transaction back and leaves the connection usable", async () => {
  const { db } = counted();
  const insert = (id: string) => sql`insert into partners (partner_id, name) values (${id}, ${id})`;
  await db.transaction().execute((trx) => insert("ptr_held_0").execute(trx));
  // The first statement fails (a duplicate key): the held BEGIN ran, so the ROLLBACK has a transaction to end.
  await assert.rejects(
    db.transaction().execute((trx) => insert("ptr_held_0").execute(trx)),
    (error: { code?: string }) => error.code === "23505",
  );
  // A later statement fails: what the first wrote is rolled back with it.
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      await insert("ptr_held_1").execute(trx);
      await insert("ptr_held_0").execute(trx);
    }),
    (error: { code?: string }) => error.code === "23505",
  );
  const ids = await sql<{
    partner_id: string;
  }>`select partner_id from partners where partner_id like 'ptr_held_%'`.execute(db);
  assert.deepEqual(
    ids.rows.map((row) => row.partner_id),
    ["ptr_held_0"],
  );
  // Outside a transaction SET LOCAL ends with its own statement; inside one it would last.
  await sql`select set_config('statement_timeout', '999ms', true)`.execute(db);
  const timeout = (await statementTimeout.execute(db)).rows[0]!.statement_timeout;
  assert.equal(timeout, "15s", "not left inside a transaction");
});

test("a transaction that runs nothing sends nothing, committed or rolled back", async () => {
  const { db, roundTrips } = counted();
  await db.transaction().execute(async () => undefined); // prepares BEGIN on the connection
  const before = roundTrips();
  await db.transaction().execute(async () => 1);
  await assert.rejects(
    db.transaction().execute(async () => {
      throw new Error("nothing to do");
    }),
    /nothing to do/,
  );
  assert.equal(roundTrips(), before);
  assert.equal((await sql<{ one: number }>`select 1 as one`.execute(db)).rows[0]!.one, 1);
});

test("with prepared statements off, BEGIN goes out plainly and transactions mean the same", async () => {
  const { db, roundTrips } = counted(0);
  for (let n = 0; n < 2; n++) {
    const before = roundTrips();
    const timeout = await db.transaction().execute(async (trx) => {
      await sql`select set_config('statement_timeout', '4321ms', true)`.execute(trx);
      return (await statementTimeout.execute(trx)).rows[0]!.statement_timeout;
    });
    assert.equal(timeout, "4321ms");
    assert.equal(roundTrips() - before, 4);
  }
});

test("a statement not prepared (yet) rides behind the held BEGIN as well", async () => {
  const { db, roundTrips } = counted(3);
  for (let n = 0; n < 5; n++) {
    const before = roundTrips();
    // A text of its own each time: never prepared, always parsed unnamed.
    const answer = await db.transaction().execute(async (trx) => {
      const first = await sql<{ run: string }>`select ${sql.lit(`run ${n}`)} as run`.execute(trx);
      await sql`select set_config('statement_timeout', '2345ms', true)`.execute(trx);
      return `${first.rows[0]!.run} ${(await statementTimeout.execute(trx)).rows[0]!.statement_timeout}`;
    });
    assert.equal(answer, `run ${n} 2345ms`);
    // BEGIN is prepared by its third run; from the fourth transaction on it is held.
    assert.equal(roundTrips() - before, n < 3 ? 5 : 4, `transaction ${n + 1}`);
  }
});

test("a held BEGIN that fails fails its transaction, whose statements never run outside it", async () => {
  const pool = createPool(database.url, 1, "esim-held-begin", { prepare_threshold: 3 });
  const db = createKysely<Database>(pool);
  after(() => db.destroy());
  const insert = (id: string) => sql`insert into partners (partner_id, name) values (${id}, ${id})`;
  // Three transactions prepare BEGIN (and the insert, and COMMIT) on the connection.
  for (let n = 0; n < 3; n++) await db.transaction().execute((trx) => insert(`ptr_fail_${n}`).execute(trx));
  // Gone from the server, still known to pg: the next held BEGIN fails at its Bind (26000).
  const begin = `auto_${createHash("sha1").update("begin").digest("base64url")}`;
  await pool.query(`deallocate "${begin}"`);
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      // A caller that swallows the error and carries on: its next statement fails too.
      await insert("ptr_fail_a")
        .execute(trx)
        .catch((error: { code?: string }) => assert.equal(error.code, "26000"));
      await insert("ptr_fail_b").execute(trx);
    }),
    (error: { code?: string }) => error.code === "26000",
  );
  // BEGIN runs unnamed on this connection from now on, and transactions work.
  await db.transaction().execute((trx) => insert("ptr_fail_c").execute(trx));
  const ids = await sql<{ partner_id: string }>`
    select partner_id from partners where partner_id like 'ptr_fail_%' order by partner_id`.execute(db);
  assert.deepEqual(
    ids.rows.map((row) => row.partner_id),
    ["ptr_fail_0", "ptr_fail_1", "ptr_fail_2", "ptr_fail_c"],
  );
});
