// Which statement texts the pool prepares (preparing-client.ts sends them by name).
import { createHash } from "node:crypto";

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
