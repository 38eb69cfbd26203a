// Airalo's documented rate limits, kept on our side with a token bucket per endpoint family (and
// per ICCID where Airalo counts per ICCID), so this process does not spend Airalo's allowance on
// calls it would answer 429. Figures: the rate-limits page's newest revision in the store,
// [DOC:rate-limits-752590m0] "Modified at 2026-05-07" (docs/suppliers/airalo.md §7); the older
// revision (2024-12-16) was stricter for usage (1 per 15 min per ICCID) and is not used.
// Per process: several processes share Airalo's allowance without sharing these buckets, so a
// 429 can still come back, and is then `unavailable` like any other "not now" (client.ts).

export type Family = "token" | "packages" | "usage_iccid" | "usage_company" | "sim_packages" | "refund";

export type Rate = { capacity: number; per_ms: number };

export const DOCUMENTED_RATES: Record<Family, Rate> = {
  // "/token 3 / minute" (2024-12-16: 5 / minute).
  token: { capacity: 3, per_ms: 60_000 },
  // "/packages 80 / minute per auth token" (2024-12-16: 40 / minute).
  packages: { capacity: 80, per_ms: 60_000 },
  // "/sims/:iccid/usage 10 / minute per ICCID; 5 / second per client_id".
  usage_iccid: { capacity: 10, per_ms: 60_000 },
  usage_company: { capacity: 5, per_ms: 1_000 },
  // "/sims/:iccid/packages 10 / minute per ICCID".
  sim_packages: { capacity: 10, per_ms: 60_000 },
  // "/refund 1 per 5 minutes per IP" (the refund page's older block: 5 per minute).
  refund: { capacity: 1, per_ms: 300_000 },
};

/** A call waits at most this long for a token of its bucket; longer, and it is "unavailable". */
export const MAX_WAIT_MS = 1_000;
/** Buckets kept (per-ICCID ones come and go); the least recently used are forgotten first. */
const MAX_BUCKETS = 10_000;

type Bucket = { tokens: number; at_ms: number };

export class RateLimits {
  readonly #rates: Record<Family, Rate>;
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;

  constructor(rates: Partial<Record<Family, Rate>> = {}, now: () => number = Date.now) {
    this.#rates = { ...DOCUMENTED_RATES, ...rates };
    this.#now = now;
  }

  /**
   * Takes one token from each bucket named, all or none: 0 when the call may go now, else how many
   * ms until it may (nothing taken).
   */
  take(keys: [Family, string][]): number {
    const now = this.#now();
    let wait_ms = 0;
    const buckets = keys.map(([family, key]) => {
      const rate = this.#rates[family];
      const id = `${family}:${key}`;
      const stored = this.#buckets.get(id) ?? { tokens: rate.capacity, at_ms: now };
      const refill = ((now - stored.at_ms) / rate.per_ms) * rate.capacity;
      const bucket = { tokens: Math.min(rate.capacity, stored.tokens + refill), at_ms: now };
      if (bucket.tokens < 1) wait_ms = Math.max(wait_ms, ((1 - bucket.tokens) / rate.capacity) * rate.per_ms);
      return { id, bucket };
    });
    if (wait_ms > 0) return Math.ceil(wait_ms);
    for (const { id, bucket } of buckets) {
      bucket.tokens -= 1;
      this.#buckets.delete(id);
      this.#buckets.set(id, bucket);
    }
    while (this.#buckets.size > MAX_BUCKETS) this.#buckets.delete(this.#buckets.keys().next().value!);
    return 0;
  }

  /**
   * Waits (at most MAX_WAIT_MS) for room in every bucket named; false when there is none that soon
   * (the caller answers "unavailable" rather than hold a purchase's lease on a queue).
   */
  async acquire(keys: [Family, string][]): Promise<boolean> {
    if (keys.length === 0) return true;
    const deadline = this.#now() + MAX_WAIT_MS;
    for (;;) {
      const wait_ms = this.take(keys);
      if (wait_ms === 0) return true;
      if (this.#now() + wait_ms > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, wait_ms));
    }
  }
}
