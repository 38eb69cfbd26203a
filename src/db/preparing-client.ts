// The pool's pg Client: statements prepared once common, BEGIN and writes held for the next
// statement (held-statements.ts), sent with it in one write (prefixed-query.ts). pool.ts says why.
import pg from "pg";
import { DeferredWriteError, emptyResult, HeldStatements, type Prefixed } from "./held-statements.ts";
import { PrefixedQuery, type QueryCallback, type WireConnection } from "./prefixed-query.ts";
import type { StatementNames } from "./statement-names.ts";

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

// pg's query has a dozen overloads; this one passes every call through, typed loosely.
type AnyQuery = (...args: unknown[]) => unknown;
/** pg's connection and the flag pg-pool reads, which pg's typings leave out. */
type ClientInternals = {
  connection: WireConnection & { stream: { destroy(error?: Error): void } };
  _queryable: boolean;
};

/** A PreparingClient class whose clients share `names` (one per pool). */
export function preparingClient(names: StatementNames): typeof pg.Client {
  return class extends PreparingClient {
    constructor(config?: pg.ClientConfig) {
      super(config, names);
    }
  } as unknown as typeof pg.Client;
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
class PreparingClient extends pg.Client {
  readonly #names: StatementNames;
  /** Texts whose prepared statement broke on this connection: they run unnamed here from then on. */
  readonly #unnamed = new Set<string>();
  readonly #held = new HeldStatements();
  /**
   * The error of a held BEGIN that failed: no transaction is open, so every statement of that
   * transaction fails with it (none runs outside it, even if the caller carries on) until its
   * ROLLBACK, which has nothing to end, or the client's release.
   */
  #failed_begin: Error | null = null;

  constructor(config: pg.ClientConfig | undefined, names: StatementNames) {
    super(config);
    this.#names = names;
  }

  get #internals(): ClientInternals {
    return this as unknown as ClientInternals;
  }

  /**
   * A client going back to the pool holds nothing: a held BEGIN was never sent. Held writes are
   * a transaction its user neither committed nor rolled back (Kysely always does one): the
   * connection is closed, never handed on mid-transaction, and the writes are lost loudly.
   */
  dropHeldBegin(): void {
    const unsent = this.#held.unsent;
    this.#held.reset();
    this.#failed_begin = null;
    if (unsent === 0) return;
    const error = new Error(`a client went back to the pool with ${unsent} deferred writes unsent`);
    this.#held.drop(error);
    process.emitWarning(error.message, "DeferredWriteWarning");
    // pg-pool reads _queryable just after its 'release' event: false, it removes the client
    // instead of handing it to a waiting request. The socket's own error comes only later.
    this.#internals._queryable = false;
    this.#internals.connection.stream.destroy(error);
  }

  /**
   * TimeZone=UTC as a startup parameter of its own beside pg's (pg has no setting for it; `options:
   * "-c TimeZone=UTC"` once did this). PostgreSQL sets it for the session, as `-c` would; PgBouncer,
   * which refuses `options`, accepts TimeZone, keeps it per client and sets it on every server
   * connection it lends this one (test/db.pgbouncer.processes.test.ts). Every date this service
   * compares is UTC (start dates, "today", expiries), whatever zone the server defaults to.
   * getStartupConf is pg's own (untyped) method building its startup message.
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
    if (typeof config === "string") this.#held.track(config, sendable);
    if (!sendable) {
      this.#sendPrefix(plain);
      return plain.apply(this, args);
    }
    const text = config as string;
    const name = this.#unnamed.has(text) ? null : this.#names.nameFor(text);
    const prepared = name !== null && this.#internals.connection.parsedStatements[name] === text;
    const held = this.#held.hold(text, name, prepared, values as unknown[]);
    if (held !== null) return typeof callback === "function" ? callback(null, held) : Promise.resolve(held);
    const prefix = this.#held.take();
    if (name === null && prefix.length === 0) return plain.apply(this, args);
    const statement: pg.QueryConfig = name === null ? { text, values } : { name, text, values };
    return this.#withPrefix(
      plain,
      prefix,
      statement,
      typeof callback === "function" ? (callback as QueryCallback) : null,
    );
  }) as pg.Client["query"];

  /**
   * Sends `statement` (named when common) behind `prefix`; its own answer goes to `callback`
   * when there is one, else settles the promise returned.
   */
  #withPrefix(
    plain: AnyQuery,
    prefix: Prefixed[],
    statement: pg.QueryConfig,
    callback: QueryCallback | null,
  ): Promise<unknown> {
    const { text, name = null } = statement;
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
        if (callback !== null) callback(reported, result);
        else if (reported) reject(reported);
        else resolve(result);
      };
      if (prefix.length === 0) return void plain.call(this, statement, done);
      query = new PrefixedQuery(prefix, statement, done, (oid) => this.getTypeParser(oid, "text"));
      plain.call(this, query);
    });
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
      this.#held.reset();
    }
    if (typeof callback === "function")
      return (callback as QueryCallback)(answer ? undefined : error, answer);
    return answer ? Promise.resolve(answer) : Promise.reject(error);
  }

  /**
   * Before a statement PrefixedQuery cannot carry: what is held goes out on its own, queued
   * first, its last statement carrying the others. pg reports its error before it sends the
   * next query, so a failure closes the connection there: nothing behind a failed BEGIN runs
   * outside its transaction, and a failed write is never lost silently.
   */
  #sendPrefix(plain: AnyQuery): void {
    const prefix = this.#held.take();
    const last = prefix.pop();
    if (last === undefined) return;
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
      this.#internals.connection.stream.destroy(reported);
    };
    const statement = { name: last.name, text: last.text, values: last.values };
    if (prefix.length > 0)
      query = new PrefixedQuery(prefix, statement, settle, (oid) => this.getTypeParser(oid, "text"));
    plain.call(this, query ?? statement, settle);
  }
}
