// One pg pool per process, and the Kysely instance typed over it.
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";

// pg's own mapping of a JavaScript value to its wire text (Dates, arrays, JSON), as its bind does.
const require = createRequire(import.meta.url);
const { prepareValue } = require("pg/lib/utils.js") as { prepareValue(value: unknown): unknown };
// pg's own result builder (row parsing with the connection's type parsers), for a kept answer.
const PgResult = require("pg/lib/result.js") as new (rowMode: undefined, types: unknown) => PgResultBuilder;

type PgResultBuilder = pg.QueryResult & {
  addFields(fields: unknown): void;
  parseRow(fields: unknown): unknown;
  addRow(row: unknown): void;
  addCommandComplete(message: unknown): void;
};

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

/** A pg Connection as far as the statements sent in front of another use it (pg's own, untyped). */
type WireConnection = {
  parsedStatements: Record<string, string>;
  bind(config: { statement: string; portal: string; values: unknown[] }): void;
  describe(config: { type: "P" | "S"; name: string }): void;
  execute(config: { portal: string; rows: number }): void;
};

type QueryCallback = (error: Error | undefined, result: unknown) => void;

/**
 * Where a held statement's answer goes when it is kept (sendAhead); settles once. `out` once the
 * statement has left the client's hands: sent with a carrier, or dropped by a ROLLBACK or release.
 */
type Answer = {
  promise: Promise<pg.QueryResult>;
  resolve(result: pg.QueryResult): void;
  reject(error: Error): void;
  out: boolean;
};

/**
 * A statement this connection has prepared, its values already mapped to wire text; `answer`
 * set when its caller keeps its rows (sendAhead), null for a write nobody reads (deferWrite).
 */
type Prefixed = { name: string; text: string; values: unknown[]; answer: Answer | null };

/**
 * A statement sent behind others in one write and before one Sync: Bind and Execute of each
 * prefix statement (the held BEGIN, the deferred writes; each already prepared here), then the
 * statement's own Parse, Bind, Describe, Execute and Sync. PostgreSQL runs the pipeline in order
 * and after an error skips to the Sync, so nothing behind a failed BEGIN runs outside its
 * transaction and nothing behind a failed write runs at all. pg sees one query: the prefix's
 * CommandCompletes (and any rows) are dropped here, the rest is the statement's answer. A prefix
 * statement whose answer is kept is described too, and its rows go to its own answer.
 */
class PrefixedQuery extends pg.Query {
  readonly #prefix: Prefixed[];
  #answered = 0;
  /** The kept answer being read, from its row description to its CommandComplete. */
  #kept: PgResultBuilder | null = null;
  #kept_error: Error | null = null;

  constructor(prefix: Prefixed[], config: pg.QueryConfig, callback: QueryCallback) {
    super(config, callback);
    assert.ok(prefix.length > 0, "a prefixed query has a prefix");
    this.#prefix = prefix;
  }

  /** pg sends a statement with no values as a simple query, which cannot share a Sync. */
  requiresPreparation(): boolean {
    return true;
  }

  prepare(connection: WireConnection): void {
    for (const { name, values, answer } of this.#prefix) {
      connection.bind({ statement: name, portal: "", values });
      // A kept answer's rows are parsed with its row description, which only Describe sends.
      if (answer !== null) connection.describe({ type: "P", name: "" });
      connection.execute({ portal: "", rows: 0 });
    }
    (pg.Query.prototype as unknown as { prepare(c: WireConnection): void }).prepare.call(this, connection);
  }

  /** The prefix statement an error arriving now belongs to; null once they have all completed. */
  get unanswered(): Prefixed | null {
    return this.#prefix[this.#answered] ?? null;
  }

  handleRowDescription(message: { fields: unknown }): void {
    const entry = this.unanswered;
    if (entry === null) {
      (pg.Query.prototype as unknown as { handleRowDescription(m: unknown): void }).handleRowDescription.call(
        this,
        message,
      );
      return;
    }
    if (entry.answer === null) return;
    this.#kept = this.#newResult();
    this.#kept.addFields(message.fields);
  }

  handleDataRow(message: { fields: unknown }): void {
    if (this.#answered < this.#prefix.length) {
      if (this.#kept === null || this.#kept_error !== null) return;
      try {
        this.#kept.addRow(this.#kept.parseRow(message.fields));
      } catch (error) {
        // A value the type parsers refuse fails this answer alone, as pg fails a query's.
        this.#kept_error = error as Error;
      }
      return;
    }
    (pg.Query.prototype as unknown as { handleDataRow(m: unknown): void }).handleDataRow.call(this, message);
  }

  handleCommandComplete(message: unknown, connection: WireConnection): void {
    const entry = this.unanswered;
    if (entry !== null) {
      this.#answered += 1;
      if (entry.answer !== null) {
        const result = this.#kept ?? this.#newResult();
        result.addCommandComplete(message);
        if (this.#kept_error !== null) entry.answer.reject(this.#kept_error);
        else entry.answer.resolve(result);
      }
      this.#kept = null;
      this.#kept_error = null;
      return;
    }
    const base = pg.Query.prototype as unknown as {
      handleCommandComplete(m: unknown, c: WireConnection): void;
    };
    base.handleCommandComplete.call(this, message, connection);
  }

  /** The kept answers of the prefix statements that never completed: `error` is theirs too. */
  rejectUnanswered(error: Error): void {
    for (const entry of this.#prefix.slice(this.#answered)) entry.answer?.reject(error);
  }

  #newResult(): PgResultBuilder {
    // The types the client gave this query's own result: the connection's parsers.
    const types = (this as unknown as { _result: { _types: unknown } })._result._types;
    return new PgResult(undefined, types);
  }
}

/**
 * A deferred write failed, reported on the statement or COMMIT that carried it. Its own error is
 * the cause, not copied: a caller that tells a unique violation of its own statement by the code
 * must not mistake another statement's for it. The transaction is aborted either way.
 */
export class DeferredWriteError extends Error {
  constructor(text: string, cause: Error) {
    // The SQLSTATE in the message, for the logs, which show only the top-level code.
    const code = String((cause as { code?: unknown }).code);
    const statement = text.replace(/\s+/g, " ").trim().slice(0, 100);
    super(`a deferred write failed (${statement}): [${code}] ${cause.message}`, { cause });
    this.name = "DeferredWriteError";
  }
}

/** Deferred writes a transaction holds at most: past it, the next one goes out and carries them. */
const MAX_DEFERRED = 16;
/**
 * Inside deferWrite (`keep` false) or sendAhead (`keep` true: `held` is the answer of the
 * statement held, null while none is).
 */
type Deferral = { keep: false } | { keep: true; held: Answer | null };
const deferring = new AsyncLocalStorage<Deferral>();

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

/** What a held BEGIN or deferred write, and the COMMIT or ROLLBACK of a transaction that sent nothing, answer. */
function emptyResult(command: string) {
  return { command, rowCount: null, oid: null, rows: [], fields: [] };
}

/**
 * A pg Client whose statements sent with values run prepared once their text is common. Kysely
 * sends every statement so, `begin` and `commit` with no values included (each goes through the
 * extended protocol then, so naming it saves its parse too). A statement sent as text alone goes
 * as one simple-protocol message and is left alone.
 *
 * Kysely's `begin` is held once this connection has BEGIN prepared, and the writes run under
 * deferWrite are held too; what is held goes out in front of the transaction's next statement
 * (PrefixedQuery): a round trip fewer each (bench/README.md, "Session 6" and "Session 7").
 */
function preparingClient(names: StatementNames): typeof pg.Client {
  // pg's query has a dozen overloads; this one passes every call through, typed loosely.
  type AnyQuery = (...args: unknown[]) => unknown;
  return class PreparingClient extends pg.Client {
    /** Texts whose prepared statement broke on this connection: they run unnamed here from then on. */
    readonly #unnamed = new Set<string>();
    /** The prepared BEGIN's name while a transaction's BEGIN is held, waiting for its first statement. */
    #held_begin: string | null = null;
    /** Between a plain `begin` and its `commit` or `rollback`: only then are writes deferred. */
    #in_transaction = false;
    /** Writes held by deferWrite, in order, waiting for the transaction's next statement. */
    #deferred: Prefixed[] = [];
    /**
     * The error of a held BEGIN that failed: no transaction is open, so every statement of that
     * transaction fails with it (none runs outside it, even if the caller carries on) until its
     * ROLLBACK, which has nothing to end, or the client's release.
     */
    #failed_begin: Error | null = null;

    /**
     * A client going back to the pool holds nothing: a held BEGIN was never sent. Held writes are
     * a transaction its user neither committed nor rolled back (Kysely always does one): the
     * connection is closed, never handed on mid-transaction, and the writes are lost loudly.
     */
    dropHeldBegin(): void {
      const unsent = this.#deferred.length;
      this.#held_begin = null;
      this.#failed_begin = null;
      this.#in_transaction = false;
      if (unsent === 0) return;
      const error = new Error(`a client went back to the pool with ${unsent} deferred writes unsent`);
      this.#dropDeferred(error);
      process.emitWarning(error.message, "DeferredWriteWarning");
      // pg-pool reads _queryable just after its 'release' event: false, it removes the client
      // instead of handing it to a waiting request. The socket's own error comes only later.
      (this as unknown as { _queryable: boolean })._queryable = false;
      (
        this as unknown as { connection: { stream: { destroy(error?: Error): void } } }
      ).connection.stream.destroy(error);
    }

    /**
     * TimeZone=UTC as a startup parameter of its own beside pg's (pg has no setting for it; `options:
     * "-c TimeZone=UTC"` once did this). PostgreSQL sets it for the session, as `-c` would; PgBouncer,
     * which refuses `options`, accepts TimeZone, keeps it per client and sets it on every server
     * connection it lends this one (test/db.pgbouncer.processes.test.ts). Every date this service
     * compares is UTC (start dates, "today", expiries), whatever zone the server defaults to.
     */
    getStartupConf(): Record<string, string> {
      const base = pg.Client.prototype as unknown as { getStartupConf(): Record<string, string> };
      return { ...base.getStartupConf.call(this), TimeZone: "UTC" };
    }

    override query: pg.Client["query"] = ((...args: unknown[]) => {
      const [config, values, callback] = args;
      const plain = super.query as AnyQuery;
      const sendable = typeof config === "string" && Array.isArray(values) && args.length <= 3;
      if (this.#failed_begin !== null) return this.#afterFailedBegin(config, args.at(-1));
      if (typeof config === "string") this.#track(config, sendable);
      if (!sendable) {
        this.#sendPrefix(plain);
        return plain.apply(this, args);
      }
      const text = config as string;
      const name = this.#unnamed.has(text) ? null : names.nameFor(text);
      const held = this.#hold(text, name, values as unknown[]);
      if (held !== null) return typeof callback === "function" ? callback(null, held) : Promise.resolve(held);
      const prefix = this.#takePrefix();
      if (name === null && prefix.length === 0) return plain.apply(this, args);
      const statement: pg.QueryConfig = name === null ? { text, values } : { name, text, values };
      let query: PrefixedQuery | null = null;
      return new Promise((resolve, reject) => {
        let answered = false;
        const done: QueryCallback = (error, result) => {
          // pg answers twice when it fails a statement itself (a value it cannot send) and the
          // server then answers the prefix already on the wire: the first answer is the one.
          if (answered) return;
          answered = true;
          const reported = error && this.#failed(error, query?.unanswered ?? null, text, name);
          if (reported) query?.rejectUnanswered(reported);
          if (typeof callback === "function") (callback as QueryCallback)(reported, result);
          else if (reported) reject(reported);
          else resolve(result);
        };
        if (prefix.length === 0) return void plain.call(this, statement, done);
        query = new PrefixedQuery(prefix, statement, done);
        plain.call(this, query);
      });
    }) as pg.Client["query"];

    /**
     * Whether a transaction that may hold writes is open: one begun as Kysely and inTransaction
     * begin it (with a values array), both of which check their COMMIT's answer. One begun as
     * text alone, whose caller may not, holds none.
     */
    #track(text: string, sendable: boolean): void {
      if (text === "begin") this.#in_transaction = sendable;
      else if (text === "commit" || text === "rollback") this.#in_transaction = false;
      // What a rolled-back transaction held was never sent, and never will be.
      if (text === "rollback") this.#dropDeferred(new Error("rolled back before the statement was sent"));
    }

    /** Forgets the held statements, failing the answers kept of them with `error`. */
    #dropDeferred(error: Error): void {
      for (const { answer } of this.#deferred) {
        if (answer === null) continue;
        answer.out = true;
        answer.reject(error);
      }
      this.#deferred = [];
    }

    /**
     * The error to report for a statement that failed. The statement that broke fails once; the
     * next run of its text on this connection works. An error before BEGIN's answer is BEGIN's:
     * its text is the one retired, and the transaction fails. A deferred write's is wrapped.
     */
    #failed(error: Error, unanswered: Prefixed | null, text: string, name: string | null): Error {
      // Only the server's errors arrive in pipeline order. One raised here (a value pg cannot map)
      // is the statement's own, with the prefix already sent and run: nothing to blame on it (the
      // answers kept of the prefix fail with it all the same; the caller rolls back). pg closed
      // the statement on the server but still counts it as parsed: it runs unnamed here.
      if (!(error instanceof pg.DatabaseError)) {
        if (name !== null) this.#unnamed.add(text);
        return error;
      }
      const failed_text = unanswered?.text ?? text;
      if ((unanswered !== null || name !== null) && brokenPrepared(error)) this.#unnamed.add(failed_text);
      if (unanswered === null) return error;
      if (failed_text !== "begin") return new DeferredWriteError(failed_text, error);
      this.#failed_begin = error;
      return error;
    }

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
      if (answer !== null) {
        this.#failed_begin = null;
        this.#in_transaction = false;
      }
      if (typeof callback === "function")
        return (callback as QueryCallback)(answer ? undefined : error, answer);
      return answer ? Promise.resolve(answer) : Promise.reject(error);
    }

    /**
     * Holds a `begin` when this connection has BEGIN prepared (its first runs go out plainly and
     * prepare it) and a deferred write this connection has prepared, and answers the COMMIT or
     * ROLLBACK of a transaction that sent nothing. A ROLLBACK drops the held writes. Returns the
     * answer given without a round trip, or null when the text goes out.
     */
    #hold(text: string, name: string | null, values: unknown[]): ReturnType<typeof emptyResult> | null {
      const parsed = (this as unknown as { connection: WireConnection }).connection.parsedStatements;
      const prepared = name !== null && parsed[name] === text;
      if (text === "begin") {
        if (!prepared || this.#held_begin !== null) return null;
        this.#held_begin = name;
        return emptyResult("BEGIN");
      }
      if (text === "commit" || text === "rollback") {
        if (this.#held_begin === null || this.#deferred.length > 0) return null;
        this.#held_begin = null;
        return emptyResult(text.toUpperCase());
      }
      const deferrable = prepared && this.#in_transaction && this.#deferred.length < MAX_DEFERRED;
      const deferral = deferring.getStore();
      if (!deferrable || deferral === undefined) return null;
      // Mapped now, so a value pg cannot send fails its own call, not the statement that carries it.
      const mapped = values.map((value) => prepareValue(value));
      let answer: Answer | null = null;
      if (deferral.keep) {
        assert.equal(deferral.held, null, "sendAhead holds one statement");
        const kept = Promise.withResolvers<pg.QueryResult>();
        // Handled from the start: an answer nobody reads (its carrier failed first, or the
        // caller threw before reading it) must not be an unhandled rejection.
        kept.promise.catch(() => undefined);
        answer = { ...kept, out: false };
        deferral.held = answer;
      }
      this.#deferred.push({ name, text, values: mapped, answer });
      return emptyResult("DEFERRED");
    }

    /** The held BEGIN and writes, in order, to go out in front of the next statement. */
    #takePrefix(): Prefixed[] {
      const prefix = this.#deferred;
      this.#deferred = [];
      for (const { answer } of prefix) if (answer !== null) answer.out = true;
      if (this.#held_begin !== null)
        prefix.unshift({ name: this.#held_begin, text: "begin", values: [], answer: null });
      this.#held_begin = null;
      return prefix;
    }

    /**
     * Before a statement PrefixedQuery cannot carry: what is held goes out on its own, queued
     * first, its last statement carrying the others. pg reports its error before it sends the
     * next query, so a failure closes the connection there: nothing behind a failed BEGIN runs
     * outside its transaction, and a failed write is never lost silently.
     */
    #sendPrefix(plain: AnyQuery): void {
      const prefix = this.#takePrefix();
      const last = prefix.pop();
      if (last === undefined) return;
      const stream = (this as unknown as { connection: { stream: { destroy(error?: Error): void } } })
        .connection.stream;
      let query: PrefixedQuery | null = null;
      // The statements behind fail with the connection's error: a deferred write's is wrapped, as
      // on any carrier, so that none of them takes it for its own. A kept answer gets the same.
      const settle = (error: Error | undefined, result: unknown) => {
        if (!error) return void last.answer?.resolve(result as pg.QueryResult);
        const failed = query?.unanswered ?? last;
        const deferred = error instanceof pg.DatabaseError && failed.text !== "begin";
        const reported = deferred ? new DeferredWriteError(failed.text, error) : error;
        query?.rejectUnanswered(reported);
        last.answer?.reject(reported);
        stream.destroy(reported);
      };
      const statement = { name: last.name, text: last.text, values: last.values };
      if (prefix.length > 0) query = new PrefixedQuery(prefix, statement, settle);
      plain.call(this, query ?? statement, settle);
    }
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
