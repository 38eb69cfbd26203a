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

/** A pg Connection as far as the pipelined BEGIN uses it (pg's own, untyped). */
type WireConnection = {
  parsedStatements: Record<string, string>;
  bind(config: { statement: string; portal: string; values: unknown[] }): void;
  execute(config: { portal: string; rows: number }): void;
};

type QueryCallback = (error: Error | undefined, result: unknown) => void;

/**
 * A statement sent behind the BEGIN that opens its transaction, in one write and before one Sync:
 * Bind and Execute of the BEGIN this connection has already prepared, then the statement's own
 * Parse, Bind, Describe, Execute and Sync. PostgreSQL runs the pipeline in order, and after an
 * error skips to the Sync, so the statement never runs outside its transaction. pg sees one query:
 * BEGIN's CommandComplete is dropped here, the rest is the statement's answer.
 */
class BeginThenQuery extends pg.Query {
  readonly #begin_name: string;
  #begin_answered = false;

  constructor(begin_name: string, config: pg.QueryConfig, callback: QueryCallback) {
    super(config, callback);
    this.#begin_name = begin_name;
  }

  /** pg sends a statement with no values as a simple query, which cannot share a Sync. */
  requiresPreparation(): boolean {
    return true;
  }

  prepare(connection: WireConnection): void {
    connection.bind({ statement: this.#begin_name, portal: "", values: [] });
    connection.execute({ portal: "", rows: 0 });
    (pg.Query.prototype as unknown as { prepare(c: WireConnection): void }).prepare.call(this, connection);
  }

  /** False until BEGIN's CommandComplete: an error before it is BEGIN's, and the statement never ran. */
  get beginAnswered(): boolean {
    return this.#begin_answered;
  }

  handleCommandComplete(message: unknown, connection: WireConnection): void {
    if (!this.#begin_answered) {
      this.#begin_answered = true;
      return;
    }
    const base = pg.Query.prototype as unknown as {
      handleCommandComplete(m: unknown, c: WireConnection): void;
    };
    base.handleCommandComplete.call(this, message, connection);
  }
}

/** What a held BEGIN, and the COMMIT or ROLLBACK of a transaction that ran nothing, answer. */
function emptyResult(command: string) {
  return { command, rowCount: null, oid: null, rows: [], fields: [] };
}

/**
 * A pg Client whose statements sent with values run prepared once their text is common. Kysely
 * sends every statement so, `begin` and `commit` with no values included (each goes through the
 * extended protocol then, so naming it saves its parse too). A statement sent as text alone goes
 * as one simple-protocol message and is left alone.
 *
 * Kysely's `begin` is held once this connection has BEGIN prepared, and sent in front of the
 * transaction's first statement (BeginThenQuery): a round trip fewer per transaction, two per
 * purchase (bench/README.md, "Session 6").
 */
function preparingClient(names: StatementNames): typeof pg.Client {
  // pg's query has a dozen overloads; this one passes every call through, typed loosely.
  type AnyQuery = (...args: unknown[]) => unknown;
  return class PreparingClient extends pg.Client {
    /** Texts whose prepared statement broke on this connection: they run unnamed here from then on. */
    readonly #unnamed = new Set<string>();
    /** The prepared BEGIN's name while a transaction's BEGIN is held, waiting for its first statement. */
    #held_begin: string | null = null;
    /**
     * The error of a held BEGIN that failed: no transaction is open, so every statement of that
     * transaction fails with it (none runs outside it, even if the caller carries on) until its
     * ROLLBACK, which has nothing to end, or the client's release.
     */
    #failed_begin: Error | null = null;

    /** A client going back to the pool holds nothing: a held BEGIN was never sent. */
    dropHeldBegin(): void {
      this.#held_begin = null;
      this.#failed_begin = null;
    }

    override query: pg.Client["query"] = ((...args: unknown[]) => {
      const [config, values, callback] = args;
      const plain = super.query as AnyQuery;
      const sendable = typeof config === "string" && Array.isArray(values) && args.length <= 3;
      if (this.#failed_begin !== null) return this.#afterFailedBegin(config, args.at(-1));
      if (!sendable) {
        if (this.#held_begin !== null) this.#sendHeldBegin(plain);
        return plain.apply(this, args);
      }
      const text = config as string;
      const name = this.#unnamed.has(text) ? null : names.nameFor(text);
      const held = this.#hold(text, name);
      if (held !== null) return typeof callback === "function" ? callback(null, held) : Promise.resolve(held);
      const begin = this.#held_begin;
      if (name === null && begin === null) return plain.apply(this, args);
      this.#held_begin = null;
      const statement: pg.QueryConfig = name === null ? { text, values } : { name, text, values };
      let query: BeginThenQuery | null = null;
      // The statement that broke fails once; the next run of its text on this connection works.
      // An error before BEGIN's answer is BEGIN's: its text is the one retired, and the transaction fails.
      const settled = (error: Error | undefined) => {
        if (!error) return;
        const failed_text = query !== null && !query.beginAnswered ? "begin" : text;
        if (failed_text === "begin") this.#failed_begin = error;
        if ((failed_text === "begin" || name !== null) && brokenPrepared(error))
          this.#unnamed.add(failed_text);
      };
      return new Promise((resolve, reject) => {
        const done: QueryCallback = (error, result) => {
          settled(error);
          if (typeof callback === "function") (callback as QueryCallback)(error, result);
          else if (error) reject(error);
          else resolve(result);
        };
        if (begin === null) return void plain.call(this, statement, done);
        query = new BeginThenQuery(begin, statement, done);
        plain.call(this, query);
      });
    }) as pg.Client["query"];

    /** After a held BEGIN failed: ROLLBACK ends nothing and is answered here; anything else fails. */
    #afterFailedBegin(config: unknown, callback: unknown): unknown {
      const error = this.#failed_begin!;
      const submittable = config as { submit?: unknown; handleError?: (error: Error) => void } | null;
      if (typeof submittable?.submit === "function") {
        // A cursor or a stream settles through its own handler, as pg fails one that cannot be sent.
        process.nextTick(() => submittable.handleError?.(error));
        return submittable;
      }
      const answer = config === "rollback" ? emptyResult("ROLLBACK") : null;
      if (answer !== null) this.#failed_begin = null;
      if (typeof callback === "function")
        return (callback as QueryCallback)(answer ? undefined : error, answer);
      return answer ? Promise.resolve(answer) : Promise.reject(error);
    }

    /**
     * Holds a `begin` when this connection has BEGIN prepared (its first runs go out plainly and
     * prepare it), and answers the COMMIT or ROLLBACK of a transaction that sent nothing. Returns
     * the answer given without a round trip, or null when the text goes out.
     */
    #hold(text: string, name: string | null): ReturnType<typeof emptyResult> | null {
      if (text === "begin") {
        const parsed = (this as unknown as { connection: WireConnection }).connection.parsedStatements;
        if (name === null || parsed[name] !== text || this.#held_begin !== null) return null;
        this.#held_begin = name;
        return emptyResult("BEGIN");
      }
      if (this.#held_begin === null || (text !== "commit" && text !== "rollback")) return null;
      this.#held_begin = null;
      return emptyResult(text.toUpperCase());
    }

    /**
     * A statement BeginThenQuery cannot carry: the held BEGIN goes out on its own, queued first. pg
     * reports its error before it sends the next query, so a failed BEGIN closes the connection
     * there and the statement behind it never runs outside its transaction.
     */
    #sendHeldBegin(plain: AnyQuery): void {
      const name = this.#held_begin!;
      this.#held_begin = null;
      const stream = (this as unknown as { connection: { stream: { destroy(error?: Error): void } } })
        .connection.stream;
      plain.call(this, { name, text: "begin", values: [] }, (error: Error | undefined) => {
        if (error) stream.destroy(error);
      });
    }
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
  pool.on("release", (_error, client) => (client as unknown as { dropHeldBegin(): void }).dropHeldBegin());
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
