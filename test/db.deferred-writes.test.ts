// Deferred writes (src/db/pool.ts deferWrite): a write whose answer nobody needs is held and sent
// in front of the transaction's next statement, or with its COMMIT, in the same round trip, with
// the transaction's meaning unchanged: it runs in order, commits or rolls back with the rest, and
// its error fails the transaction rather than vanishing. A statement sent ahead (sendAhead) goes
// the same way and keeps its answer: its rows arrive with the statement that carried it.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { type Kysely, sql } from "kysely";
import { DeferredWriteError, deferWrite, inTransaction, sendAhead } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { countedKysely, createTestDatabase } from "./support/db.ts";

const database = await createTestDatabase();

function counted(prepare_threshold = 1) {
  return countedKysely(database.url, "esim-deferred-writes", prepare_threshold);
}

// A table of the test's own; Database does not know it, so the statements are raw SQL.
before(async () => {
  const { db } = counted();
  await sql`create table deferred_probe (id text primary key, at timestamptz, tags text[], doc jsonb)`.execute(
    db,
  );
});

const insert = (id: string, doc: unknown = { id }) =>
  sql`insert into deferred_probe (id, at, tags, doc)
      values (${id}, ${new Date("2026-01-02T03:04:05.678Z")}, ${["a", "b,c"]}, ${JSON.stringify(doc)}::jsonb)`;

const ids = async (db: Kysely<Database>, prefix: string) =>
  (
    await sql<{
      id: string;
    }>`select id from deferred_probe where id like ${`${prefix}%`} order by id`.execute(db)
  ).rows.map((row) => row.id);

test("a deferred write rides with the COMMIT, in order, and is committed with the transaction", async () => {
  const { db, roundTrips } = counted();
  const run = (n: number) =>
    db.transaction().execute(async (trx) => {
      await insert(`order_${n}_a`).execute(trx);
      await deferWrite(() => insert(`order_${n}_b`).execute(trx));
    });
  await run(0); // prepares every text on the connection: the deferred insert ran at once
  const start = roundTrips();
  await run(1);
  assert.equal(roundTrips() - start, 2, "the first insert, then the deferred one with the COMMIT");
  assert.deepEqual(await ids(db, "order_"), ["order_0_a", "order_0_b", "order_1_a", "order_1_b"]);
  const row = (
    await sql<{
      at: Date;
      tags: string[];
      doc: unknown;
    }>`select at, tags, doc from deferred_probe where id = 'order_1_b'`.execute(db)
  ).rows[0]!;
  assert.equal(row.at.toISOString(), "2026-01-02T03:04:05.678Z", "a Date mapped as pg maps it");
  assert.deepEqual(row.tags, ["a", "b,c"], "an array too");
  assert.deepEqual(row.doc, { id: "order_1_b" });
});

test("a statement after a deferred write sees it: the write goes out in front of it", async () => {
  const { db, roundTrips } = counted();
  const run = (n: number) =>
    db.transaction().execute(async (trx) => {
      await deferWrite(() => insert(`seen_${n}`).execute(trx));
      const found = await sql<{
        n: number;
      }>`select count(*)::int as n from deferred_probe where id = ${`seen_${n}`}`.execute(trx);
      return found.rows[0]!.n;
    });
  assert.equal(await run(0), 1);
  const start = roundTrips();
  assert.equal(await run(1), 1, "the held BEGIN, the write and the select in one round trip");
  assert.equal(roundTrips() - start, 2, "that one, and the COMMIT");
});

test("a deferred write that fails fails what carries it, as a DeferredWriteError, and rolls everything back", async () => {
  const { db } = counted();
  const run = (n: number, duplicate: string, then_select: boolean) =>
    db.transaction().execute(async (trx) => {
      await insert(`fail_${n}`).execute(trx);
      await deferWrite(() => insert(duplicate).execute(trx));
      if (then_select) await sql`select 1 as one where ${n} > 0`.execute(trx);
    });
  await run(0, "fail_dup", true);
  await run(1, "fail_dup_2", false);
  // Carried by the COMMIT.
  const failure = (error: unknown) => {
    assert.ok(error instanceof DeferredWriteError, String(error));
    assert.equal((error as { code?: string }).code, undefined, "not mistaken for the carrier's own error");
    assert.equal((error.cause as { code?: string }).code, "23505");
    return true;
  };
  await assert.rejects(run(2, "fail_dup", false), failure);
  // Carried by a statement: its caller does not see a unique violation of its own.
  await assert.rejects(run(3, "fail_dup", true), failure);
  assert.deepEqual(await ids(db, "fail_"), ["fail_0", "fail_1", "fail_dup", "fail_dup_2"]);
  await run(4, "fail_dup_4", true);
  assert.deepEqual(await ids(db, "fail_4"), ["fail_4"], "the connection goes on");
});

test("a rolled-back transaction drops what it held, and the next one does not carry it", async () => {
  const { db, roundTrips } = counted();
  const run = (n: number, abort: boolean) =>
    db.transaction().execute(async (trx) => {
      await insert(`drop_${n}`).execute(trx);
      await deferWrite(() => insert(`drop_${n}_later`).execute(trx));
      if (abort) throw new Error("changed my mind");
    });
  await run(0, false);
  const start = roundTrips();
  await assert.rejects(run(1, true), /changed my mind/);
  assert.equal(roundTrips() - start, 2, "the first insert and the ROLLBACK; the held write never went out");
  await run(2, false);
  assert.deepEqual(await ids(db, "drop_"), ["drop_0", "drop_0_later", "drop_2", "drop_2_later"]);
});

test("outside a transaction, unprepared, or with prepared statements off, a deferred write runs at once", async () => {
  for (const threshold of [1, 0]) {
    const { db, roundTrips } = counted(threshold);
    for (const n of [0, 1]) {
      const start = roundTrips();
      await deferWrite(() => insert(`now_${threshold}_${n}`).execute(db));
      assert.equal(roundTrips() - start, 1, "sent and answered before deferWrite returns");
    }
    const start = roundTrips();
    await db.transaction().execute((trx) => deferWrite(() => insert(`now_${threshold}_tx`).execute(trx)));
    assert.equal(roundTrips() - start, threshold === 0 ? 3 : 2, "BEGIN held only once prepared");
  }
  assert.deepEqual(await ids(counted().db, "now_"), [
    "now_0_0",
    "now_0_1",
    "now_0_tx",
    "now_1_0",
    "now_1_1",
    "now_1_tx",
  ]);
});

/** A raw pooled client in a transaction begun as Kysely begins one (text and a values array). */
async function rawTransaction(pool: ReturnType<typeof counted>["pool"]) {
  const client = await pool.connect();
  await client.query("begin", []);
  return client;
}

test("a statement the prefix cannot carry (text alone) sends what is held first, and fails with its error wrapped", async () => {
  const { pool } = counted();
  const text = "insert into deferred_probe (id) values ($1)";
  for (const id of ["plain_0", "plain_1"]) {
    const client = await rawTransaction(pool);
    await deferWrite(() => client.query(text, [id]));
    // No values: pg sends it as a simple query, which cannot share the prefix's Sync.
    const { rows } = await client.query("select id from deferred_probe where id like 'plain_%' order by id");
    assert.ok(
      rows.some((row: { id: string }) => row.id === id),
      "the held write went out before it",
    );
    await client.query("commit", []);
    client.release();
  }
  // Held (the text is prepared now), then a duplicate: the carrier fails with DeferredWriteError.
  const client = await rawTransaction(pool);
  await deferWrite(() => client.query(text, ["plain_0"]));
  await assert.rejects(client.query("select 1"), (error: Error) => {
    assert.ok(error instanceof DeferredWriteError, String(error));
    assert.equal((error.cause as { code?: string }).code, "23505");
    return true;
  });
  client.release(true);
  const { rows } = await pool.query("select count(*)::int as n from deferred_probe where id like 'plain_%'");
  assert.equal(rows[0].n, 2);
});

test("a value pg cannot send fails its own statement, and the transaction behind a held BEGIN is really rolled back", async () => {
  const { db, roundTrips } = counted();
  const statementTimeout = sql<{ t: string }>`select current_setting('statement_timeout') as t`;
  const run = (value: unknown) =>
    db.transaction().execute(async (trx) => {
      await sql`select ${value}::jsonb as doc`.execute(trx);
    });
  await run({ n: 1 });
  await run({ n: 2 }); // BEGIN held from here on
  const start = roundTrips();
  // JSON.stringify throws on a BigInt: pg fails the statement before the server has answered
  // anything, with BEGIN already on the wire in front of it.
  await assert.rejects(run({ n: 3n }), (error: Error) => {
    assert.ok(!(error instanceof DeferredWriteError));
    assert.match(error.message, /BigInt/);
    return true;
  });
  assert.equal(roundTrips() - start, 2, "the failed pipeline, then a ROLLBACK actually sent");
  await sql`select set_config('statement_timeout', '999ms', true)`.execute(db);
  assert.equal((await statementTimeout.execute(db)).rows[0]!.t, "15s", "not left inside a transaction");
});

test("past 16 held writes the next one goes out and carries them; all commit", async () => {
  const { db, roundTrips } = counted();
  const run = (n: number) =>
    db.transaction().execute(async (trx) => {
      for (let i = 0; i < 20; i++)
        await deferWrite(() => insert(`many_${n}_${String(i).padStart(2, "0")}`).execute(trx));
    });
  await run(0);
  const start = roundTrips();
  await run(1);
  assert.equal(roundTrips() - start, 2, "the 17th write carrying BEGIN and 16, then the COMMIT carrying 3");
  assert.equal((await ids(db, "many_1_")).length, 20);
});

test("a failure further down the prefix, behind the held BEGIN and a write that ran, rolls both back", async () => {
  const { db } = counted();
  const run = (n: number, second: string) =>
    db.transaction().execute(async (trx) => {
      await deferWrite(() => insert(`deep_${n}`).execute(trx));
      await deferWrite(() => insert(second).execute(trx));
      await sql`select 1 as one where ${n} >= 0`.execute(trx);
    });
  await run(0, "deep_dup");
  await run(1, "deep_other");
  await assert.rejects(run(2, "deep_dup"), DeferredWriteError);
  assert.deepEqual(await ids(db, "deep_"), ["deep_0", "deep_1", "deep_dup", "deep_other"]);
});

test("a client released with writes still held is closed, loudly, never handed on, and the writes never land", async () => {
  const { pool } = counted();
  const text = "insert into deferred_probe (id) values ($1)";
  const pid = async (client: { query(text: string): Promise<{ rows: { pid: number }[] }> }) =>
    (await client.query("select pg_backend_pid() as pid")).rows[0]!.pid;
  const client = await rawTransaction(pool);
  await client.query(text, ["held_0"]); // prepares it
  await client.query("commit", []);
  client.release();
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on("warning", onWarning);
  const again = await rawTransaction(pool);
  const first_pid = await pid(again); // BEGIN is on the server now: a transaction is open
  await deferWrite(() => again.query(text, ["held_1"]));
  // The pool's one connection is taken: this request waits for it.
  const waiting = pool.connect();
  again.release(); // neither committed nor rolled back
  const next = await waiting;
  assert.notEqual(await pid(next), first_pid, "the waiting request got a new connection, not the closed one");
  next.release();
  await new Promise((resolve) => setTimeout(resolve, 50));
  process.off("warning", onWarning);
  assert.deepEqual(warnings, ["a client went back to the pool with 1 deferred writes unsent"]);
  const { rows } = await pool.query("select id from deferred_probe where id like 'held_%' order by id");
  assert.deepEqual(
    rows.map((row: { id: string }) => row.id),
    ["held_0"],
  );
});

test("inTransaction holds BEGIN and writes too, and a COMMIT answered with ROLLBACK throws", async () => {
  const { pool, roundTrips } = counted();
  const text = "insert into deferred_probe (id) values ($1)";
  const run = (id: string) =>
    inTransaction(pool, async (client) => {
      await client.query("select 1 as one where $1::text is not null", [id]);
      await deferWrite(() => client.query(text, [id]));
    });
  await run("intx_0");
  const start = roundTrips();
  await run("intx_1");
  assert.equal(roundTrips() - start, 2, "BEGIN with the select, the insert with the COMMIT");
  // An error `work` swallows aborts the transaction: its COMMIT is answered ROLLBACK, and says so.
  await assert.rejects(
    inTransaction(pool, async (client) => {
      await client.query(text, ["intx_2"]);
      await client.query(text, ["intx_2"]).catch(() => undefined);
    }),
    /aborted the transaction; it was rolled back/,
  );
  assert.deepEqual(await ids(counted().db, "intx_"), ["intx_0", "intx_1"]);
});

const insertReturning = (id: string) =>
  sql<{ id: string; at: Date; tags: string[]; n: number }>`
    insert into deferred_probe (id, at, tags, doc)
    values (${id}, ${new Date("2026-01-02T03:04:05.678Z")}, ${["a", "b,c"]}, '{}'::jsonb)
    on conflict (id) do nothing
    returning id, at, tags, 42::bigint as n`;

test("a statement sent ahead keeps its answer: its rows, parsed as pg parses them, arrive with its carrier's", async () => {
  const { db, roundTrips } = counted();
  const run = (n: number, id: string) =>
    db.transaction().execute(async (trx) => {
      const ahead = await sendAhead(() => insertReturning(id).execute(trx));
      const seen = await sql<{ n: number }>`
        select count(*)::int as n from deferred_probe where id = ${id}`.execute(trx);
      return { rows: await ahead.rows(), seen: seen.rows[0]!.n, n };
    });
  const cold = await run(0, "ahead_0"); // prepares the texts: the insert ran at once
  assert.deepEqual(
    cold.rows.map((row) => row.id),
    ["ahead_0"],
  );
  const start = roundTrips();
  const warm = await run(1, "ahead_1");
  assert.equal(roundTrips() - start, 2, "BEGIN, the insert and the select in one round trip; then COMMIT");
  assert.equal(warm.seen, 1, "the statement that carried it sees its row");
  assert.equal(warm.rows.length, 1);
  const row = warm.rows[0]!;
  assert.equal(row.id, "ahead_1");
  assert.equal(row.at.toISOString(), "2026-01-02T03:04:05.678Z", "a timestamptz parsed to a Date");
  assert.deepEqual(row.tags, ["a", "b,c"], "an array parsed");
  assert.equal(row.n, 42, "a bigint through the pool's own parser");
  // No row returned (the conflict): an empty answer, not a missing one.
  const again = await run(2, "ahead_1");
  assert.deepEqual(again.rows, []);
  assert.equal(again.seen, 1);
});

test("an answer sent ahead fails with its statement, with its carrier, or when its transaction rolls back first", async () => {
  const { db, roundTrips } = counted();
  const duplicate = sql`insert into deferred_probe (id) values ('ahead_dup') returning id`;
  await duplicate.execute(db);
  await sql`select 1`.execute(db);
  // Warm both texts on every path used below, then fail the held insert (a unique violation).
  for (let i = 0; i < 2; i++) {
    await db
      .transaction()
      .execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await duplicate.execute(trx);
      })
      .catch(() => undefined);
  }
  let kept: { rows(): Promise<unknown[]> } | null = null;
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      kept = await sendAhead(() => duplicate.execute(trx));
      await sql`select 1`.execute(trx);
    }),
    (error: Error) => error instanceof DeferredWriteError,
  );
  await assert.rejects(kept!.rows(), (error: Error) => {
    assert.ok(error instanceof DeferredWriteError, String(error));
    assert.equal((error.cause as { code?: string }).code, "23505");
    return true;
  });
  // Rolled back before anything carried it: never sent, and its answer says so.
  await db.transaction().execute((trx) => insertReturning("ahead_warm").execute(trx));
  const start = roundTrips();
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      kept = await sendAhead(() => insertReturning("ahead_never").execute(trx));
      throw new Error("changed my mind");
    }),
    /changed my mind/,
  );
  assert.equal(roundTrips() - start, 2, "the select (with BEGIN) and the ROLLBACK");
  await assert.rejects(kept!.rows(), /rolled back before the statement was sent/);
  assert.deepEqual(await ids(db, "ahead_never"), []);
});

test("a statement sent ahead then a text-only one: sent first on its own, its answer kept", async () => {
  const { pool, roundTrips } = counted();
  const text = "insert into deferred_probe (id) values ($1) returning id, 7::bigint as n";
  for (const id of ["ahead_plain_0", "ahead_plain_1"]) {
    const client = await rawTransaction(pool);
    const start = roundTrips();
    const ahead = await sendAhead(() => client.query(text, [id]));
    const held = roundTrips() === start;
    await client.query("select 1");
    assert.deepEqual(await ahead.rows(), [{ id, n: 7 }]);
    await client.query("commit", []);
    client.release();
    // The first run prepares the text (it runs at once); the second is held until the select.
    assert.equal(held, id === "ahead_plain_1", id);
  }
});

test("a kept answer fails with a write that failed ahead of it, with a release, and when read too early", async () => {
  const { db, pool, roundTrips } = counted();
  const text = "insert into deferred_probe (id) values ($1) returning id";
  const client = await rawTransaction(pool);
  await client.query(text, ["ahead_fail_0"]); // prepares it
  await client.query("commit", []);
  client.release();

  // A duplicate held first: it fails, and the answer behind it fails with the same error.
  const failing = await rawTransaction(pool);
  await deferWrite(() => failing.query(text, ["ahead_fail_0"]));
  const behind = await sendAhead(() => failing.query(text, ["ahead_fail_1"]));
  await assert.rejects(behind.rows(), /awaited before the statement that carries it/);
  const carried = await failing.query("select 1", []).catch((error: Error) => error);
  assert.ok(carried instanceof DeferredWriteError, String(carried));
  await assert.rejects(behind.rows(), (error: Error) => error === carried);
  await failing.query("rollback", []);
  failing.release();

  // Released with it still held: the answer says so (and nothing crashes on a rejection unread).
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on("warning", onWarning);
  const released = await rawTransaction(pool);
  await released.query("select 1", []);
  const lost = await sendAhead(() => released.query(text, ["ahead_fail_2"]));
  released.release();
  await assert.rejects(lost.rows(), /went back to the pool with 1 deferred writes unsent/);
  await new Promise((resolve) => setTimeout(resolve, 50));
  process.off("warning", onWarning);
  assert.deepEqual(warnings, ["a client went back to the pool with 1 deferred writes unsent"]);

  // A transaction that throws after holding one, its answer never read: rolled back, quietly.
  // The release above closed the pool's connection: the text is prepared on the new one first.
  await db.transaction().execute((trx) => insertReturning("ahead_fail_3").execute(trx));
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  let held = false;
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      const start = roundTrips();
      await sendAhead(() => insertReturning("ahead_fail_4").execute(trx));
      held = roundTrips() === start;
      throw new Error("never read");
    }),
    /never read/,
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  process.off("unhandledRejection", onUnhandled);
  assert.ok(held, "the insert was held, so its answer was rejected by the ROLLBACK");
  assert.deepEqual(unhandled, []);
  assert.deepEqual(await ids(db, "ahead_fail_"), ["ahead_fail_0", "ahead_fail_3"]);
});
