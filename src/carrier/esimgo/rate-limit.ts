// eSIM Go's documented rate limit, kept on our side: "rate limits per IP address using a fixed
// window algorithm. The default limit is 10 requests per second" (docs/suppliers/esimgo.md §7,
// [DOC:guides/rate_limits/]). Per-endpoint token costs are not published, so every call counts one.
// Per process: several processes behind one IP share eSIM Go's allowance without sharing this
// window, so a 429 can still come back, and is then `unavailable` like any other "not now".

export const DOCUMENTED_PER_SECOND = 10;
/** A call waits at most this long for room; longer, and it is "unavailable". */
export const MAX_WAIT_MS = 1_000;

export class RateLimit {
  readonly #per_second: number;
  readonly #now: () => number;
  #window_start_ms = 0;
  #used = 0;

  constructor(per_second = DOCUMENTED_PER_SECOND, now: () => number = Date.now) {
    this.#per_second = per_second;
    this.#now = now;
  }

  /** 0 when a call may go now (counted), else how many ms until the next window. */
  take(): number {
    const now = this.#now();
    const window_start = now - (now % 1000);
    if (window_start !== this.#window_start_ms) {
      this.#window_start_ms = window_start;
      this.#used = 0;
    }
    if (this.#used < this.#per_second) {
      this.#used += 1;
      return 0;
    }
    return window_start + 1000 - now;
  }

  /** Waits (at most MAX_WAIT_MS) for room in the window; false when there is none that soon. */
  async acquire(): Promise<boolean> {
    const deadline = this.#now() + MAX_WAIT_MS;
    for (;;) {
      const wait_ms = this.take();
      if (wait_ms === 0) return true;
      if (this.#now() + wait_ms > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, wait_ms));
    }
  }
}
