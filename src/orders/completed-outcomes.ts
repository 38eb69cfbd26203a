// Completed submits, answered again from memory. The common retry of POST /orders/submit is a
// retry of a purchase that completed (a client that timed out, a queue that redelivers), and its
// answer is final: an order leaves `pending` once, guarded by `status = 'pending'`, and a completed
// order's body (render-order.ts) holds no per-request field. So the bytes sent once are the bytes
// every later retry must get, from this process or any other, and a retry found here costs no
// database round trip: no cart row lock (a lock is a WAL write and a commit flush), no reads.
// Only completed outcomes are kept: a failed one carries the request id of the request it answers.
// A miss (another process completed it, or it was evicted) takes the usual path, which answers
// from the database and remembers the answer.
// A retry is usually the same request again, byte for byte: the exact bytes of a body answered
// from here are kept too, linked to their cart, and a retry with those bytes is answered before
// its body is parsed or validated (shared/endpoint.ts, from_bytes). Parsing, the schema and the
// end user's checks depend only on the bytes, so they would pass again; the answer is the cart's.
import assert from "node:assert/strict";
import type { HttpOutcome } from "./stored-outcome.ts";

/**
 * Outcomes kept per process (a body is about 1 KB): the oldest is forgotten first. Each holds one
 * link of at most MAX_LINKED_BODY_BYTES: ~30 MB at most in all.
 */
export const MAX_COMPLETED_OUTCOMES = 10_000;

/**
 * The longest body whose bytes are linked. A submit is about 200 bytes; a longer one (padding,
 * which JSON allows without limit, or names escaped as \uXXXX) is checked as usual, every time.
 */
export const MAX_LINKED_BODY_BYTES = 2048;

/** `body`: the bytes (latin1, one character per byte) of the last body linked to this answer. */
type Entry = { partner_id: string; outcome: HttpOutcome; body: string | null };

export class CompletedOutcomes {
  readonly #entries = new Map<string, Entry>();
  /** Body bytes -> the cart they name: at most one per entry, gone with it. */
  readonly #bodies = new Map<string, string>();
  readonly #max_entries: number;

  constructor(max_entries = MAX_COMPLETED_OUTCOMES) {
    this.#max_entries = max_entries;
  }

  /** The answer already sent for this partner's completed cart, or null. */
  find(partner_id: string, cart_key: string): HttpOutcome | null {
    const entry = this.#entries.get(cart_key);
    // Another partner's cart is not found here; the usual path answers it 404 cart_not_found.
    return entry !== undefined && entry.partner_id === partner_id ? entry.outcome : null;
  }

  /** The answer kept for the cart a body of exactly these bytes names, if it is this partner's, or null. */
  findByBytes(partner_id: string, bytes: Buffer): HttpOutcome | null {
    if (bytes.length > MAX_LINKED_BODY_BYTES) return null;
    const cart_key = this.#bodies.get(bytes.toString("latin1"));
    return cart_key === undefined ? null : this.find(partner_id, cart_key);
  }

  /**
   * Links a body's exact bytes to the kept answer it was just given, in place of the cart's last
   * link. Only a speed-up: where it cannot link (no kept answer, a body too long) it does nothing,
   * never failing the request that was just charged.
   */
  rememberBytes(partner_id: string, cart_key: string, bytes: Buffer): void {
    const entry = this.#entries.get(cart_key);
    if (entry === undefined || entry.partner_id !== partner_id || bytes.length > MAX_LINKED_BODY_BYTES)
      return;
    const body = bytes.toString("latin1");
    // The bytes name one cart (its key is in them), so only this entry can hold this link already.
    if (this.#bodies.has(body)) return;
    if (entry.body !== null) this.#bodies.delete(entry.body);
    entry.body = body;
    this.#bodies.set(body, cart_key);
  }

  remember(partner_id: string, cart_key: string, outcome: HttpOutcome): void {
    assert.equal(
      outcome.status,
      200,
      "only a completed order's answer is final and the same for every retry",
    );
    const replaced = this.#entries.get(cart_key);
    if (replaced === undefined && this.#entries.size >= this.#max_entries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#forget(oldest);
    }
    if (replaced !== undefined) this.#forget(cart_key);
    this.#entries.set(cart_key, { partner_id, outcome, body: null });
  }

  #forget(cart_key: string): void {
    const entry = this.#entries.get(cart_key);
    if (entry?.body != null) this.#bodies.delete(entry.body);
    this.#entries.delete(cart_key);
  }

  /** How many body links are held: never more than the answers kept. For tests. */
  get linked_bodies(): number {
    return this.#bodies.size;
  }
}
