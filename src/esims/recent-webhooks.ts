// Airalo's webhook signature covers the body only, no timestamp (docs/suppliers/airalo.md §8): a
// signed body can be replayed at will, and each delivery pulls the eSIM's usage, which spends
// Airalo's per-ICCID usage limit (10 a minute) outside the sync's own budget. So a body already
// received for an ICCID within REPEAT_WINDOW_MS is acknowledged and not acted on again. Airalo
// re-sending the same notification changes nothing either way (applying a state twice is a no-op).
import { createHash } from "node:crypto";

/** How long an identical body for one ICCID is taken for a repeat. */
export const REPEAT_WINDOW_MS = 5 * 60_000;
/** Bodies remembered at most; past it the oldest go first (the map's insertion order). */
export const MAX_REMEMBERED = 10_000;

export class RecentWebhooks {
  readonly #seen = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** True when this body for this ICCID arrived within the window; else remembers it. */
  repeated(iccid: string, raw_body: string): boolean {
    const key = `${iccid}:${createHash("sha256").update(raw_body).digest("base64url")}`;
    const now = this.#now();
    const until = this.#seen.get(key);
    if (until !== undefined && until > now) return true;
    this.#seen.delete(key);
    this.#evict(now);
    this.#seen.set(key, now + REPEAT_WINDOW_MS);
    return false;
  }

  /** Keeps the map bounded: expired entries first, then the oldest. */
  #evict(now: number): void {
    if (this.#seen.size < MAX_REMEMBERED) return;
    for (const [key, until] of this.#seen) if (until <= now) this.#seen.delete(key);
    while (this.#seen.size >= MAX_REMEMBERED) {
      const oldest = this.#seen.keys().next().value;
      if (oldest === undefined) break;
      this.#seen.delete(oldest);
    }
  }
}
