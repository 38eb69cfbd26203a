// One pg pool per process, and the Kysely instance typed over it.
import { createHash } from "node:crypto";
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

/** A statement text run this many times by the process is prepared on each connection (0: never). */
export const DEFAULT_PREPARE_THRESHOLD = 3;
/** Distinct texts prepared per process at most, so dynamic SQL cannot fill the backends' memory. */
const MAX_PREPARED_TEXTS = 512;
/** Distinct texts counted at most; past it the counts start again (the prepared names stay). */
const MAX_COUNTED_TEXTS = 4_096;

/**
 * Which statement texts run as named prepared statements: those the process has run
 * `threshold` times, up to MAX_PREPARED_TEXTS of them (as pgjdbc's prepareThreshold and
 * Npgsql's auto-prepare do). A prepared statement is parsed once per connection and, once
 * PostgreSQL finds its generic plan no dearer than the custom ones, planned once too: our hot
 * statements are CTEs whose parse and plan cost PostgreSQL more than their execution
 * (bench/README.md, "Session 5: prepared statements"). The name is the text's hash, so a name never stands
 * for two texts.
 */
export class StatementNames {
  readonly #threshold: number;
  readonly #names = new Map<string, string>();
  readonly #counts = new Map<string, number>();

  constructor(threshold: number) {
    if (!Number.isInteger(threshold) || threshold < 0) {
      throw new Error(`StatementNames: threshold ${threshold} is not a count`);
    }
    this.#threshold = threshold;
  }

  /** The prepared statement's name for this text, or null to run it unnamed (this time). */
  nameFor(text: string): string | null {
    const name = this.#names.get(text);
    if (name !== undefined) return name;
    if (this.#threshold === 0 || this.#names.size >= MAX_PREPARED_TEXTS) return null;
    const count = (this.#counts.get(text) ?? 0) + 1;
    if (count < this.#threshold) {
      if (this.#counts.size >= MAX_COUNTED_TEXTS) this.#counts.clear();
      this.#counts.set(text, count);
      return null;
    }
    this.#counts.delete(text);
    const named = `auto_${createHash("sha1").update(text).digest("base64url")}`;
    this.#names.set(text, named);
    return named;
  }

  get prepared(): number {
    return this.#names.size;
  }
}

/**
 * Errors after which the text runs unnamed on that connection: 26000 "prepared statement does not
 * exist" (pg closes a statement whose bind failed but still counts it as parsed, so without this
 * every later run would fail), and 0A000 "cached plan must not change result type" (a migration
 * changed a column the statement returns; PostgreSQL fails it once, then re-plans it).
 */
const BROKEN_PREPARED = new Set(["0A000", "26000"]);

function brokenPrepared(error: unknown): boolean {
  return BROKEN_PREPARED.has((error as { code?: unknown } | null)?.code as string);
}

/**
 * A pg Client whose statements sent with values run prepared once their text is common. Kysely
 * sends every statement so, `begin` and `commit` with no values included (each goes through the
 * extended protocol then, so naming it saves its parse too). A statement sent as text alone goes
 * as one simple-protocol message and is left alone.
 */
function preparingClient(names: StatementNames): typeof pg.Client {
  // pg's query has a dozen overloads; this one passes every call through, typed loosely.
  type AnyQuery = (...args: unknown[]) => unknown;
  return class PreparingClient extends pg.Client {
    /** Texts whose prepared statement broke on this connection: they run unnamed here from then on. */
    readonly #unnamed = new Set<string>();

    override query: pg.Client["query"] = ((...args: unknown[]) => {
      const [config, values, callback] = args;
      const plain = super.query as AnyQuery;
      if (
        typeof config === "string" &&
        Array.isArray(values) &&
        args.length <= 3 &&
        !this.#unnamed.has(config)
      ) {
        const name = names.nameFor(config);
        if (name !== null) {
          const named = { name, text: config, values };
          // The statement that broke fails once; the next run of its text on this connection works.
          const retire = (error: unknown) => {
            if (brokenPrepared(error)) this.#unnamed.add(config);
          };
          if (typeof callback === "function") {
            return plain.call(this, named, (error: unknown, result: unknown) => {
              if (error) retire(error);
              (callback as (e: unknown, r: unknown) => void)(error, result);
            });
          }
          return (plain.call(this, named) as Promise<unknown>).catch((error: unknown) => {
            retire(error);
            throw error;
          });
        }
      }
      return plain.apply(this, args);
    }) as pg.Client["query"];
  };
}

export type PoolOptions = {
  /** See StatementNames; DEFAULT_PREPARE_THRESHOLD when absent, 0 to prepare nothing. */
  prepare_threshold?: number;
};

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
