// What a connection holds back for its transaction's next statement: the BEGIN, the writes run under
// deferWrite, a statement run under sendAhead (pool.ts says what each is for). Only the bookkeeping
// lives here; preparing-client.ts sends what this hands it.
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import type pg from "pg";
import { toWireValue, type WireValue } from "./wire.ts";

/**
 * Where a held statement's answer goes when it is kept (sendAhead); settles once. `out` once the
 * statement has left the client's hands: sent with a carrier, or dropped by a ROLLBACK or release.
 */
export type Answer = {
  promise: Promise<pg.QueryResult>;
  resolve(result: pg.QueryResult): void;
  reject(error: Error): void;
  out: boolean;
};

/**
 * A statement this connection has prepared, its values already mapped to wire text; `answer`
 * set when its caller keeps its rows (sendAhead), null for a write nobody reads (deferWrite).
 */
export type Prefixed = { name: string; text: string; values: WireValue[]; answer: Answer | null };

/**
 * Inside deferWrite (`keep` false) or sendAhead (`keep` true: `held` is the answer of the
 * statement held, null while none is).
 */
export type Deferral = { keep: false } | { keep: true; held: Answer | null };
export const deferring = new AsyncLocalStorage<Deferral>();

/** Deferred writes a transaction holds at most: past it, the next one goes out and carries them. */
const MAX_DEFERRED = 16;

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

/** What a held BEGIN or deferred write, and the COMMIT or ROLLBACK of a transaction that sent nothing, answer. */
export function emptyResult(command: string): pg.QueryResult {
  return { command, rowCount: null, oid: null as unknown as number, rows: [], fields: [] };
}

/** One connection's held BEGIN and statements, and whether a transaction that may hold them is open. */
export class HeldStatements {
  /** The prepared BEGIN's name while a transaction's BEGIN is held, waiting for its first statement. */
  #begin: string | null = null;
  /** Between a plain `begin` and its `commit` or `rollback`: only then are writes deferred. */
  #in_transaction = false;
  /** Statements held by deferWrite and sendAhead, in order, waiting for the transaction's next statement. */
  #deferred: Prefixed[] = [];

  get unsent(): number {
    return this.#deferred.length;
  }

  /**
   * Whether a transaction that may hold writes is open: one begun as Kysely and inTransaction
   * begin it (with a values array), both of which check their COMMIT's answer. One begun as
   * text alone, whose caller may not, holds none.
   */
  track(text: string, sendable: boolean): void {
    if (text === "begin") this.#in_transaction = sendable;
    else if (text === "commit" || text === "rollback") this.#in_transaction = false;
    // What a rolled-back transaction held was never sent, and never will be.
    if (text === "rollback") this.drop(new Error("rolled back before the statement was sent"));
  }

  /**
   * Holds a `begin` when this connection has BEGIN prepared (its first runs go out plainly and
   * prepare it) and a statement under deferWrite or sendAhead this connection has prepared, and
   * answers the COMMIT or ROLLBACK of a transaction that sent nothing. Returns the answer given
   * without a round trip, or null when the text goes out.
   */
  hold(text: string, name: string | null, prepared: boolean, values: unknown[]): pg.QueryResult | null {
    if (text === "begin") {
      if (!prepared || this.#begin !== null) return null;
      this.#begin = name;
      return emptyResult("BEGIN");
    }
    if (text === "commit" || text === "rollback") {
      if (this.#begin === null || this.#deferred.length > 0) return null;
      this.#begin = null;
      return emptyResult(text.toUpperCase());
    }
    const deferral = deferring.getStore();
    const deferrable = prepared && this.#in_transaction && this.#deferred.length < MAX_DEFERRED;
    if (!deferrable || deferral === undefined) return null;
    // Mapped now, so a value that cannot be sent fails its own call, not the statement that carries it.
    const mapped = values.map((value) => toWireValue(value));
    this.#deferred.push({ name: name!, text, values: mapped, answer: keptAnswer(deferral) });
    return emptyResult("DEFERRED");
  }

  /** The held BEGIN and statements, in order, to go out in front of the next statement. */
  take(): Prefixed[] {
    const prefix = this.#deferred;
    this.#deferred = [];
    for (const { answer } of prefix) if (answer !== null) answer.out = true;
    if (this.#begin !== null) prefix.unshift({ name: this.#begin, text: "begin", values: [], answer: null });
    this.#begin = null;
    return prefix;
  }

  /** Forgets the held statements, failing the answers kept of them with `error`. */
  drop(error: Error): void {
    for (const { answer } of this.#deferred) {
      if (answer === null) continue;
      answer.out = true;
      answer.reject(error);
    }
    this.#deferred = [];
  }

  /** The connection goes back to the pool or its transaction ended without being begun: nothing is open. */
  reset(): void {
    this.#begin = null;
    this.#in_transaction = false;
  }
}

/** Under sendAhead, the answer the caller will read; under deferWrite, none. */
function keptAnswer(deferral: Deferral): Answer | null {
  if (!deferral.keep) return null;
  assert.equal(deferral.held, null, "sendAhead holds one statement");
  const kept = Promise.withResolvers<pg.QueryResult>();
  // Handled from the start: an answer nobody reads (its carrier failed first, or the
  // caller threw before reading it) must not be an unhandled rejection.
  kept.promise.catch(() => undefined);
  const answer = { ...kept, out: false };
  deferral.held = answer;
  return answer;
}
