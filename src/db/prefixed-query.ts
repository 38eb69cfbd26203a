// One statement sent behind the statements its connection held (held-statements.ts), in one write.
import assert from "node:assert/strict";
import pg from "pg";
import type { Prefixed } from "./held-statements.ts";
import { type WireField, WireResult } from "./wire.ts";

export type QueryCallback = (error: Error | undefined, result: unknown) => void;

/**
 * The few calls of pg's Connection (`client.connection`) a prefix needs: Bind, Describe and
 * Execute each write one protocol message, and pg gives them to every Submittable it sends (its
 * `submit(connection)`; pg-cursor is built the same way).
 */
export type WireConnection = {
  parsedStatements: Record<string, string>;
  bind(config: { statement: string; portal: string; values: unknown[] }): void;
  describe(config: { type: "P" | "S"; name: string }): void;
  execute(config: { portal: string; rows: number }): void;
};

/** pg.Query's own handlers, which PrefixedQuery passes the statement's own messages on to. */
type QueryHandlers = {
  prepare(connection: WireConnection): void;
  handleRowDescription(message: unknown): void;
  handleDataRow(message: unknown): void;
  handleCommandComplete(message: unknown, connection: WireConnection): void;
};
const base = pg.Query.prototype as unknown as QueryHandlers;

/**
 * A statement sent behind others in one write and before one Sync: Bind and Execute of each
 * prefix statement (the held BEGIN, the deferred writes; each already prepared here), then the
 * statement's own Parse, Bind, Describe, Execute and Sync. PostgreSQL runs the pipeline in order
 * and after an error skips to the Sync, so nothing behind a failed BEGIN runs outside its
 * transaction and nothing behind a failed write runs at all. pg sees one query: the prefix's
 * CommandCompletes (and any rows) are dropped here, the rest is the statement's answer. A prefix
 * statement whose answer is kept is described too, and its rows go to its own answer.
 */
export class PrefixedQuery extends pg.Query {
  readonly #prefix: Prefixed[];
  readonly #parser: (oid: number) => (text: string) => unknown;
  #answered = 0;
  /** The kept answer being read, from its row description to its CommandComplete. */
  #kept: WireResult | null = null;
  #kept_error: Error | null = null;

  constructor(
    prefix: Prefixed[],
    config: pg.QueryConfig,
    callback: QueryCallback,
    parser: (oid: number) => (text: string) => unknown,
  ) {
    super(config, callback);
    assert.ok(prefix.length > 0, "a prefixed query has a prefix");
    this.#prefix = prefix;
    this.#parser = parser;
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
    base.prepare.call(this, connection);
  }

  /** The prefix statement an error arriving now belongs to; null once they have all completed. */
  get unanswered(): Prefixed | null {
    return this.#prefix[this.#answered] ?? null;
  }

  handleRowDescription(message: { fields: WireField[] }): void {
    const entry = this.unanswered;
    if (entry === null) return void base.handleRowDescription.call(this, message);
    if (entry.answer === null) return;
    this.#kept = new WireResult(this.#parser);
    this.#kept.describe(message.fields);
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.unanswered === null) return void base.handleDataRow.call(this, message);
    if (this.#kept === null || this.#kept_error !== null) return;
    try {
      this.#kept.addRow(message.fields);
    } catch (error) {
      // A value the type parsers refuse fails this answer alone, as pg fails a query's.
      this.#kept_error = error as Error;
    }
  }

  handleCommandComplete(message: { text: string }, connection: WireConnection): void {
    const entry = this.unanswered;
    if (entry === null) return void base.handleCommandComplete.call(this, message, connection);
    this.#answered += 1;
    if (entry.answer !== null) {
      const result = (this.#kept ?? new WireResult(this.#parser)).complete(message.text);
      if (this.#kept_error !== null) entry.answer.reject(this.#kept_error);
      else entry.answer.resolve(result);
    }
    this.#kept = null;
    this.#kept_error = null;
  }

  /** The kept answers of the prefix statements that never completed: `error` is theirs too. */
  rejectUnanswered(error: Error): void {
    for (const entry of this.#prefix.slice(this.#answered)) entry.answer?.reject(error);
  }
}
