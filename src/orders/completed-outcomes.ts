// Completed submits, answered again from memory. The common retry of POST /orders/submit is a
// retry of a purchase that completed (a client that timed out, a queue that redelivers), and its
// answer is final: an order leaves `pending` once, guarded by `status = 'pending'`, and a completed
// order's body (render-order.ts) holds no per-request field. So the bytes sent once are the bytes
// every later retry must get, from this process or any other, and a retry found here costs no
// database round trip: no cart row lock (a lock is a WAL write and a commit flush), no reads.
// Only completed outcomes are kept: a failed one carries the request id of the request it answers.
// A miss (another process completed it, or it was evicted) takes the usual path, which answers
// from the database and remembers the answer.
import assert from "node:assert/strict";
import type { HttpOutcome } from "./stored-outcome.ts";

/** Outcomes kept per process (a body is about 1 KB): the oldest is forgotten first. */
export const MAX_COMPLETED_OUTCOMES = 10_000;

type Entry = { partner_id: string; outcome: HttpOutcome };

export class CompletedOutcomes {
  readonly #entries = new Map<string, Entry>();
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
