// Auto-prepare (src/db/pool.ts): a statement text the process runs often becomes a named prepared
// statement on each connection, with the same answers, bounded in number, and off at threshold 0.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { sql } from "kysely";
import { createKysely, createPool, StatementNames } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { esimWithBundles } from "../src/esims/esims.sql.ts";
import { createTestDatabase } from "./support/db.ts";

const database = await createTestDatabase();

/** The prepared statements of the one connection of a pool of one. */
async function preparedOn(pool: ReturnType<typeof createPool>): Promise<string[]> {
  const result = await pool.query<{ statement: string }>(
    "select statement from pg_prepared_statements where name like 'auto_%' order by statement",
  );
  return result.rows.map((row) => row.statement);
}

test("a text run the threshold's number of times is prepared once, and answers as before", async () => {
  const pool = createPool(database.url, 1, "esim-prepare", { prepare_threshold: 3 });
  after(() => pool.end());
  const text = "select $1::int + 1 as next";
  const answers: number[] = [];
  for (let n = 0; n < 6; n++) {
    answers.push((await pool.query<{ next: number }>(text, [n])).rows[0]!.next);
    // The first two runs go unnamed; from the third the statement exists on the connection.
    assert.deepEqual(await preparedOn(pool), n < 2 ? [] : [text], `after run ${n + 1}`);
  }
  assert.deepEqual(answers, [1, 2, 3, 4, 5, 6]);
});

test("Kysely's statements are prepared too, inside transactions, and survive a rollback", async () => {
  const pool = createPool(database.url, 1, "esim-prepare", { prepare_threshold: 2 });
  const db = createKysely<Database>(pool);
  after(() => db.destroy());
  const count = (partner_id: string) =>
    sql<{ n: number }>`select count(*)::int as n from partners where partner_id = ${partner_id}`;
  for (const id of ["ptr_a", "ptr_b", "ptr_c"]) {
    await db
      .transaction()
      .execute(async (trx) => {
        await sql`insert into partners (partner_id, name) values (${id}, ${id})`.execute(trx);
        assert.equal((await count(id).execute(trx)).rows[0]!.n, 1);
        throw new Error("roll back");
      })
      .catch((error: Error) => assert.equal(error.message, "roll back"));
  }
  assert.equal((await count("ptr_a").execute(db)).rows[0]!.n, 0, "the rollbacks kept nothing");
  // Kysely sends begin and rollback with an empty list of values: prepared like the rest.
  assert.deepEqual(await preparedOn(pool), [
    "begin",
    "insert into partners (partner_id, name) values ($1, $2)",
    "rollback",
    "select count(*)::int as n from partners where partner_id = $1",
  ]);
});

test("a failing statement leaves the connection usable, its prepared statements intact", async () => {
  const pool = createPool(database.url, 1, "esim-prepare", { prepare_threshold: 1 });
  after(() => pool.end());
  const text = "select 1 / $1::int as quotient";
  assert.equal((await pool.query(text, [1])).rows[0].quotient, 1);
  await assert.rejects(pool.query(text, [0]), /division by zero/);
  await assert.rejects(pool.query("select * from no_such_table where x = $1", [1]), /does not exist/);
  assert.equal((await pool.query(text, [2])).rows[0].quotient, 0);
  assert.deepEqual(await preparedOn(pool), [text]);
});

test("a migration that changes a returned column fails a prepared statement once per connection, then it works", async () => {
  const pool = createPool(database.url, 1, "esim-prepare", { prepare_threshold: 1 });
  after(() => pool.end());
  await pool.query("create table migrated (id int primary key, size int)");
  await pool.query("insert into migrated values (1, 10)");
  const text = "select * from migrated where id = $1";
  assert.deepEqual((await pool.query(text, [1])).rows, [{ id: 1, size: 10 }]);
  assert.deepEqual(await preparedOn(pool), [text]);
  // Another process migrates: the column this statement returns changes type.
  const other = createPool(database.url, 1, "esim-migrator", { prepare_threshold: 0 });
  await other.query("alter table migrated alter column size type bigint");
  await other.end();
  await assert.rejects(pool.query(text, [1]), (error: { code?: string }) => error.code === "0A000");
  // Through Kysely's path (promise) and pg's pool.query (callback) alike, it works again.
  assert.deepEqual((await pool.query(text, [1])).rows, [{ id: 1, size: 10 }]);
  const client = await pool.connect();
  try {
    assert.deepEqual((await client.query(text, [1])).rows, [{ id: 1, size: 10 }]);
  } finally {
    client.release();
  }
});

test("the eSIM read is prepared like any text: a migration changing what it returns fails it once, not forever", async () => {
  const pool = createPool(database.url, 1, "esim-prepare", { prepare_threshold: 1 });
  after(() => pool.end());
  const iccid = "8901000000000000001";
  assert.equal(await esimWithBundles(pool, "ptr_nobody", iccid), null);
  assert.equal((await preparedOn(pool)).length, 1, "the read is prepared on this connection");
  // Another process migrates: a column the read returns changes type (as 0015 moved it to a domain).
  const other = createPool(database.url, 1, "esim-migrator", { prepare_threshold: 0 });
  await other.query("alter table esims alter column status type text");
  await other.end();
  await assert.rejects(
    esimWithBundles(pool, "ptr_nobody", iccid),
    (error: { code?: string }) => error.code === "0A000",
  );
  for (let n = 0; n < 3; n++) assert.equal(await esimWithBundles(pool, "ptr_nobody", iccid), null);
});

test("a prepared statement gone from the server fails once, then its text runs unnamed on that connection", async () => {
  const pool = createPool(database.url, 1, "esim-prepare", { prepare_threshold: 1 });
  after(() => pool.end());
  const text = "select $1::int * 2 as doubled";
  const client = await pool.connect();
  try {
    assert.equal((await client.query(text, [2])).rows[0].doubled, 4);
    // What pg does itself when a bind fails (it sends a Close but still counts the statement as
    // parsed), done by hand: the server forgets the statement, the driver does not.
    await client.query("deallocate all");
    await assert.rejects(client.query(text, [3]), (error: { code?: string }) => error.code === "26000");
    assert.equal((await client.query(text, [4])).rows[0].doubled, 8);
    assert.equal((await client.query(text, [5])).rows[0].doubled, 10);
  } finally {
    client.release();
  }
});

test("threshold 0 prepares nothing; a statement sent as text alone is never prepared", async () => {
  const off = createPool(database.url, 1, "esim-prepare", { prepare_threshold: 0 });
  const on = createPool(database.url, 1, "esim-prepare", { prepare_threshold: 1 });
  after(() => Promise.all([off.end(), on.end()]));
  for (let n = 0; n < 5; n++) {
    await off.query("select $1::int as n", [n]);
    await on.query("select 42 as n");
  }
  assert.deepEqual(await preparedOn(off), []);
  assert.deepEqual(await preparedOn(on), []);
});

test("at most 512 texts are prepared; counts are bounded; a threshold must be a count", () => {
  const names = new StatementNames(1);
  for (let n = 0; n < 600; n++) names.nameFor(`select ${n}`);
  assert.equal(names.prepared, 512);
  assert.equal(names.nameFor("select 599"), null, "past the cap a text runs unnamed");
  assert.match(names.nameFor("select 0") ?? "", /^auto_[A-Za-z0-9_-]{27}$/, "a prepared text keeps its name");

  const counting = new StatementNames(3);
  for (let n = 0; n < 10_000; n++) assert.equal(counting.nameFor(`select ${n}`), null);
  assert.equal(counting.prepared, 0);
  assert.throws(() => new StatementNames(-1), /not a count/);
  assert.throws(() => new StatementNames(1.5), /not a count/);
});
