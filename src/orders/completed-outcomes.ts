// Completed submits, answered again from memory. The common retry of POST /orders/submit is a
// retry of a purchase that completed (a client that timed out, a queue that redelivers), and its
// answer is final: an order leaves `pending` once, guarded by `status = 'pending'`, and a completed
// order's body (render-order.ts) holds no per-request field, and a refund since does not change
// it (stored-outcome.ts). So the bytes sent once are the bytes every later retry must get, from
// this process or any other, and a retry found here costs no database round trip: no cart row
// lock (a lock is a WAL write and a commit flush), no reads. Only completed outcomes (refunded
// since or not) are kept: a failed one carries the request id of the request it answers.
// A miss (another process completed it, or it was evicted) takes the usual path, which answers
// from the database and remembers the answer.
// A retry is usually the same request again, byte for byte: the exact bytes of the last body
// answered from an entry are kept with it, and a retry with those bytes is answered before its
// body is parsed or validated (shared/endpoint.ts, from_bytes). Parsing, the schema and the end
// user's checks depend only on the bytes, so they would pass again; the answer is the entry's.
import assert from "node:assert/strict";
import type { HttpOutcome } from "./stored-outcome.ts";

/**
 * Outcomes kept per process (a body is about 1 KB): the oldest is forgotten first. Each holds the
 * bytes of one body, at most MAX_LINKED_BODY_BYTES: ~30 MB at most in all.
 */
export const MAX_COMPLETED_OUTCOMES = 10_000;

/**
 * The longest body whose bytes are kept. A submit is about 200 bytes; a longer one (padding,
 * which JSON allows without limit, or names escaped as \uXXXX) is checked as usual, every time.
 */
export const MAX_LINKED_BODY_BYTES = 2048;

/** How a body names its cart when written as clients and our SDK write it: the lookup's hint. */
const CART_KEY_FIELD = Buffer.from('"cart_key":"');
const QUOTE = 0x22;
/** In bytes: the latin1 read only matches an ASCII key, which the schema caps at 100 characters. */
const MAX_CART_KEY_LENGTH = 100;

/** The cart key a body names, read from its raw bytes where written `"cart_key":"…"`, or null. */
function cartKeyHint(bytes: Buffer): string | null {
  const field = bytes.indexOf(CART_KEY_FIELD);
  if (field === -1) return null;
  const start = field + CART_KEY_FIELD.length;
  const end = bytes.indexOf(QUOTE, start);
  return end === -1 || end - start > MAX_CART_KEY_LENGTH ? null : bytes.toString("latin1", start, end);
}

/** `body`: a copy of the bytes of the last body answered from this entry, or null. */
type Entry = { partner_id: string; outcome: HttpOutcome; body: Buffer | null };

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

  /**
   * The answer of this partner's entry whose kept body is exactly these bytes, or null. The cart
   * key read from the raw bytes only says which entry to compare with (hashing the whole body was
   * the larger cost); the byte-for-byte comparison decides, so a body the hint misreads is a miss.
   */
  findByBytes(partner_id: string, bytes: Buffer): HttpOutcome | null {
    if (bytes.length > MAX_LINKED_BODY_BYTES) return null;
    const cart_key = cartKeyHint(bytes);
    if (cart_key === null) return null;
    const entry = this.#entries.get(cart_key);
    if (entry === undefined || entry.partner_id !== partner_id || entry.body === null) return null;
    return entry.body.equals(bytes) ? entry.outcome : null;
  }

  /**
   * Keeps a body's exact bytes with the kept answer it was just given, in place of the last ones.
   * The caller's promise, on which findByBytes rests: these bytes were parsed, validated and
   * checked, named `cart_key`, and were answered this entry's answer for this partner. Only a
   * speed-up: where it cannot (no kept answer, a body too long, or one findByBytes could never
   * find) it does nothing, never failing the request that was just charged.
   */
  rememberBytes(partner_id: string, cart_key: string, bytes: Buffer): void {
    const entry = this.#entries.get(cart_key);
    if (entry === undefined || entry.partner_id !== partner_id || bytes.length > MAX_LINKED_BODY_BYTES)
      return;
    if (cartKeyHint(bytes) !== cart_key) return;
    if (entry.body?.equals(bytes)) return;
    // A copy of its own: the request's bytes may be a slice of a pooled buffer, which keeping
    // would keep whole.
    const body = Buffer.allocUnsafeSlow(bytes.length);
    bytes.copy(body);
    entry.body = body;
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
    // An answer kept again starts without a body: the one kept was answered from the entry this
    // replaces. The next body answered from this one is kept.
    this.#entries.delete(cart_key);
    this.#entries.set(cart_key, { partner_id, outcome, body: null });
  }

  /** How many entries keep a body's bytes. For tests. */
  get linked_bodies(): number {
    let n = 0;
    for (const entry of this.#entries.values()) if (entry.body !== null) n++;
    return n;
  }
}
