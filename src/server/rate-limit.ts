// Per-API-key token bucket: RATE_LIMIT_PER_SECOND tokens per second, up to RATE_LIMIT_BURST.
// The buckets live in the process, and the budget is shared across processes: with N API
// processes alive (live-processes.ts, a heartbeat row each) every process allows 1/N of the rate
// and of the burst, so together they enforce the configured rate with no shared row touched per
// request. It assumes the load balancer spreads a key's requests over the processes (round robin,
// least connections); a key pinned to one process gets its share only. Headers follow the IETF
// RateLimit header fields draft and give this process's share.
import { ApiError } from "../shared/errors.ts";

/** Buckets kept per limiter: a key or address seen after this many makes room first (makeRoom). */
export const MAX_BUCKETS = 100_000;

type Bucket = { tokens: number; updated_ms: number };

export type RateDecision = { limit: number; remaining: number; reset_s: number };

export class RateLimiter {
  readonly #configured_rate_per_s: number;
  readonly #configured_burst: number;
  #rate_per_s: number;
  #burst: number;
  #processes = 1;
  readonly #detail: string;
  readonly #buckets = new Map<string, Bucket>();
  readonly #max_buckets: number;

  constructor(rate_per_s: number, burst: number, detail?: string, max_buckets = MAX_BUCKETS) {
    this.#max_buckets = max_buckets;
    this.#configured_rate_per_s = rate_per_s;
    this.#configured_burst = burst;
    this.#rate_per_s = rate_per_s;
    this.#burst = burst;
    this.#detail = detail ?? `Slow down: at most ${rate_per_s} requests per second per key.`;
  }

  /**
   * This process's share of the budget when `processes` processes share it: 1/N of the rate and
   * of the burst (a burst of at least one request). Buckets keep their tokens, cut to the new burst.
   */
  shareWith(processes: number): void {
    const n = Math.max(1, Math.floor(processes));
    this.#processes = n;
    this.#rate_per_s = this.#configured_rate_per_s / n;
    this.#burst = Math.max(1, this.#configured_burst / n);
    for (const bucket of this.#buckets.values()) bucket.tokens = Math.min(bucket.tokens, this.#burst);
  }

  /**
   * Failed authentications per client address at one surface (`what`: "API keys", "ADMIN_TOKEN"):
   * AUTH_FAILURES_PER_MINUTE, all of it usable at once (failure-budget.ts says when a token is taken).
   */
  static forFailures(per_minute: number, what: string): RateLimiter {
    return new RateLimiter(
      per_minute / 60,
      per_minute,
      `Too many failed authentications (${what}) from this address: at most ${per_minute} per minute.`,
    );
  }

  /** How many processes share the budget (1 until told otherwise). */
  get processes(): number {
    return this.#processes;
  }

  /** Takes one token for `key`; throws 429 `rate_limited` with Retry-After when none is left. */
  take(key: string, now_ms = Date.now()): RateDecision {
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      if (this.#buckets.size >= this.#max_buckets) this.#makeRoom(now_ms);
      bucket = { tokens: this.#burst, updated_ms: now_ms };
      this.#buckets.set(key, bucket);
    }
    const elapsed_s = Math.max(0, now_ms - bucket.updated_ms) / 1000;
    bucket.tokens = Math.min(this.#burst, bucket.tokens + elapsed_s * this.#rate_per_s);
    bucket.updated_ms = now_ms;
    const reset_s = Math.ceil((this.#burst - bucket.tokens) / this.#rate_per_s);
    if (bucket.tokens < 1) {
      const retry_s = Math.max(1, Math.ceil((1 - bucket.tokens) / this.#rate_per_s));
      throw new ApiError("rate_limited", this.#detail, {
        headers: {
          "retry-after": String(retry_s),
          "ratelimit-limit": String(Math.floor(this.#burst)),
          "ratelimit-remaining": "0",
          "ratelimit-reset": String(retry_s),
        },
      });
    }
    bucket.tokens -= 1;
    return { limit: Math.floor(this.#burst), remaining: Math.floor(bucket.tokens), reset_s };
  }

  /**
   * Forgets the buckets that have refilled to the burst: such a bucket allows what a new one
   * would, so forgetting it changes no answer. Clearing them all instead, as this did, gave every
   * busy key a fresh burst whenever 100,000 others had been seen (a flood of failed
   * authentications from many addresses could do it on purpose). When fewer than a tenth are
   * idle, the limiter is mostly busy buckets: it clears, as before, so that a sweep that frees
   * little is never paid again on every new key. Keeping more than 90,000 buckets busy takes as
   * many valid keys, or as many client addresses each failing again before its bucket refills
   * (a failures bucket refills its whole burst in a minute), each of which has a budget anyway.
   */
  #makeRoom(now_ms: number): void {
    for (const [key, bucket] of this.#buckets) {
      const refilled = bucket.tokens + (Math.max(0, now_ms - bucket.updated_ms) / 1000) * this.#rate_per_s;
      if (refilled >= this.#burst) this.#buckets.delete(key);
    }
    if (this.#buckets.size > this.#max_buckets * 0.9) this.#buckets.clear();
  }

  /** Gives back a token taken for something that turned out not to count (a key that was valid). */
  refund(key: string): void {
    const bucket = this.#buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.#burst, bucket.tokens + 1);
  }
}
