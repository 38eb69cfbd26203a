// One pg pool per process, and the Kysely instance typed over it.
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";

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

export function createPool(connectionString: string, max: number, application_name = "esim-api"): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    application_name,
    // Limits on every wait: a sick database fails requests quickly instead of piling them up.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: 15_000,
    idle_in_transaction_session_timeout: 30_000,
    // Every date and time this service compares is UTC (start dates, "today", expiries), whatever
    // zone the server or the database defaults to: set at connection start, so no session escapes.
    // graphile-worker, the CLI and the simulator connect through this pool too.
    options: "-c TimeZone=UTC",
  });
  // An idle client that errors (database restart) must not crash the process.
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  return pool;
}

export function createKysely<DB>(pool: pg.Pool): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

/** Runs `work` in one transaction on one pooled connection; rolls back on any throw. */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    const result = await work(client);
    await client.query("commit");
    return result;
  } catch (error) {
    await client.query("rollback").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
