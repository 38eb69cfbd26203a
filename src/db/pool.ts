// One pg pool per process, and the Kysely instance typed over it.
//
// Why pg with our own preparing client, not postgres.js (issue 37, item 7). postgres.js prepares
// every statement and pipelines what is issued together, natively; but it sends each statement with
// a Sync of its own and `sql.begin` waits for BEGIN's answer, so a purchase is 9 writes to
// PostgreSQL through it against our 5 (BEGIN held for the first statement, writes deferred to the
// next one, one Sync: prefixed-query.ts); and a write pipelined in front of COMMIT that fails makes
// the COMMIT answer ROLLBACK, a success to the caller unless it awaits every write first.
// bench/drivers.ts runs the purchase's 9 statements in its 2 transactions through each driver,
// alternating, at 8, 16 and 32 clients (2026-11-27, the shared 2-core machine, others' work 95-160%
// of a core): ours was the fastest in 15 of 16 rounds against `sql.begin` (last run: 342-882
// purchases/s against 202-670) and spent 309-570 µs of client CPU per purchase against 489-1,119.
// postgres.js on a reserved connection with BEGIN and COMMIT pipelined by hand (our 5 writes) was
// ahead of ours in 2 of 10 rounds, by 2.5%, at 428-948 µs. Moving would also put a second driver
// beside pg (graphile-worker needs pg) and rewrite every `pool.query`. All the figures:
// bench/README.md, "Issue 37: pg or postgres.js".
//
// Kept, then, without pg's private modules: values are mapped and kept answers read by wire.ts.
// What we still use of pg beyond its documented API is named where it is used: the Connection
// calls a Submittable gets (bind, describe, execute; prefixed-query.ts), `parsedStatements` and
// pg-pool's `_queryable` (preparing-client.ts); the db tests cover each.
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { type Deferral, deferring } from "./held-statements.ts";
import { preparingClient } from "./preparing-client.ts";
import { StatementNames } from "./statement-names.ts";

export { DeferredWriteError } from "./held-statements.ts";
export { StatementNames } from "./statement-names.ts";

// PostgreSQL bigint (int8) arrives as a string by default; our money columns are bigint minor
// units well inside Number.MAX_SAFE_INTEGER (asserted where they are written), so parse them.
pg.types.setTypeParser(20, (value) => {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed)) throw new Error(`bigint ${value} exceeds the safe integer range`);
  return parsed;
});
// Dates stay as the YYYY-MM-DD text the contract speaks, not a local-midnight Date.
pg.types.setTypeParser(1082, (value) => value);

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/** A statement text run this many times by the process is prepared on each connection (0: never). */
export const DEFAULT_PREPARE_THRESHOLD = 3;

/**
 * Runs `write`, whose statements need no answer, with its statements held back: they go out in
 * front of the transaction's next statement, or with its COMMIT, in the same write. A round trip
 * fewer each; bench/README.md, "Session 7". A statement is held only inside a transaction opened
 * as Kysely and inTransaction open one (a plain `begin` with a values array; both check their
 * COMMIT's answer), and only once its connection has it prepared; otherwise it runs at once, so
 * `write` must not depend on what its statements return (it gets no rows and no counts when
 * held). A held statement's error fails the statement or COMMIT that carries it, as a
 * DeferredWriteError, and with it the transaction; a ROLLBACK drops what is held unsent. Not for
 * a write whose failure a savepoint is meant to contain: it would surface after the savepoint.
 */
export async function deferWrite(write: () => Promise<unknown>): Promise<void> {
  await deferring.run({ keep: false }, write);
}

/** A statement sent ahead (sendAhead): its rows, once its answer has arrived. */
export type Ahead<Row> = { rows(): Promise<Row[]> };

/**
 * Runs `statement`, one statement whose rows the caller needs but not before the transaction's
 * next statement, held as deferWrite holds a write: it goes out in front of that next statement
 * and its answer comes back with it, a round trip fewer. Held under deferWrite's conditions only;
 * otherwise it runs at once. Either way `rows()` gives its rows: await it after the statement (or
 * COMMIT) that carried it; awaited before, it throws, since nothing would ever send it. A held
 * statement's error fails the statement that carries it as a DeferredWriteError, and `rows()` with
 * it; a ROLLBACK or the client's release before it went out fails `rows()` too.
 */
export async function sendAhead<Row>(statement: () => Promise<{ rows: Row[] }>): Promise<Ahead<Row>> {
  const deferral: Deferral = { keep: true, held: null };
  const result = await deferring.run(deferral, statement);
  const held = deferral.held;
  if (held === null) return { rows: async () => result.rows };
  return {
    rows: async () => {
      // Awaited before anything carried it, it would wait forever: nothing else sends it.
      if (!held.out) throw new Error("sendAhead: rows() awaited before the statement that carries it");
      return (await held.promise).rows as Row[];
    },
  };
}

export type PoolOptions = {
  /** See StatementNames; DEFAULT_PREPARE_THRESHOLD when absent, 0 to prepare nothing. */
  prepare_threshold?: number;
  /** A client-side limit on each query's answer (none when absent): the heartbeat's own pool. */
  query_timeout_ms?: number;
  /**
   * `connectionString` is a transaction-mode pooler (DATABASE_DIRECT_URL is set): the session limits
   * are not sent, since PgBouncer refuses startup parameters it does not know (and with
   * `ignore_startup_parameters` drops them unapplied). They come from the server's role or database
   * settings instead, which checkPooledSessions verifies at start-up.
   */
  through_pooler?: boolean;
};

/** Limits on every statement and every open transaction: a sick database fails requests quickly. */
export const SESSION_LIMITS = { statement_timeout: 15_000, idle_in_transaction_session_timeout: 30_000 };

export function createPool(
  connectionString: string,
  max: number,
  application_name = "esim-api",
  options: PoolOptions = {},
): pg.Pool {
  const names = new StatementNames(options.prepare_threshold ?? DEFAULT_PREPARE_THRESHOLD);
  const pool = new pg.Pool({
    Client: preparingClient(names),
    connectionString,
    max,
    application_name,
    // Limits on every wait: a sick database fails requests quickly instead of piling them up.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    ...(options.through_pooler ? {} : SESSION_LIMITS),
    ...(options.query_timeout_ms === undefined ? {} : { query_timeout: options.query_timeout_ms }),
    // TimeZone=UTC goes as a startup parameter of its own (PreparingClient.getStartupConf), through
    // a pooler too. graphile-worker, the CLI and the simulators connect through this pool.
  });
  // An idle client that errors (database restart) must not crash the process.
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  pool.on("release", (_error, client) => (client as unknown as { dropHeldBegin(): void }).dropHeldBegin());
  return pool;
}

export function createKysely<DB>(pool: pg.Pool): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * Runs `work` in one transaction on one pooled connection; rolls back on any throw. `begin` and
 * `commit` go as Kysely sends them (with a values array), so BEGIN rides with the first statement
 * once prepared. A COMMIT that PostgreSQL answers with ROLLBACK (an error inside that `work`
 * caught had aborted the transaction, or a deferred write failed) throws: nothing was committed.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("begin", []);
    const result = await work(client);
    const committed = await client.query("commit", []);
    if (committed.command === "ROLLBACK") {
      throw new Error("inTransaction: an earlier error had aborted the transaction; it was rolled back");
    }
    return result;
  } catch (error) {
    await client.query("rollback", []).catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
