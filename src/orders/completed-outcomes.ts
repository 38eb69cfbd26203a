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

/** Outcomes kept per process (a body is about 1 KB): the oldest is forgotten first. */
export const MAX_COMPLETED_OUTCOMES = 10_000;

type Entry = { partner_id: string; outcome: HttpOutcome };
type BytesLink = { partner_id: string; cart_key: string };

export class CompletedOutcomes {
  readonly #entries = new Map<string, Entry>();
  /** A body's exact bytes (as latin1, one character per byte) -> the cart its answer is kept for. */
  readonly #bodies = new Map<string, BytesLink>();
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

  /** The answer kept for the cart a body with exactly these bytes named, for this partner, or null. */
  findByBytes(partner_id: string, bytes: Buffer): HttpOutcome | null {
    const link = this.#bodies.get(bytes.toString("latin1"));
    // The cart's own entry decides: forgotten, or another partner's, is a miss.
    return link !== undefined && link.partner_id === partner_id ? this.find(partner_id, link.cart_key) : null;
  }

  /** Links a body's exact bytes to the cart whose kept answer that body was just given. */
  rememberBytes(partner_id: string, cart_key: string, bytes: Buffer): void {
    assert.ok(this.find(partner_id, cart_key) !== null, "bytes are linked only to a kept answer");
    const key = bytes.toString("latin1");
    if (!this.#bodies.has(key) && this.#bodies.size >= this.#max_entries) {
      const oldest = this.#bodies.keys().next().value;
      if (oldest !== undefined) this.#bodies.delete(oldest);
    }
    this.#bodies.set(key, { partner_id, cart_key });
  }

  remember(partner_id: string, cart_key: string, outcome: HttpOutcome): void {
    assert.equal(
      outcome.status,
      200,
      "only a completed order's answer is final and the same for every retry",
    );
    if (!this.#entries.has(cart_key) && this.#entries.size >= this.#max_entries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(cart_key, { partner_id, outcome });
  }
}
