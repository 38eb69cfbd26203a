// Auto-prepare (src/db/pool.ts): a statement text the process runs often becomes a named prepared
// statement on each connection, with the same answers, bounded in number, and off at threshold 0.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { sql } from "kysely";
import { createKysely, createPool, StatementNames } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
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
