// Airalo's rate limits, enforced per key with a sliding window in memory (a restart forgets the
// counts, as a fresh Airalo node would not: harmless for a fake). Defaults are the newest revision
// of the rate-limits page [DOC:rate-limits-752590m0] ("Modified at 2026-05-07"); POST /control
// changes them (README "Rate limits").
import type { Limit, Limited } from "./faults.ts";

export const DOCUMENTED_LIMITS: Record<Limited, Limit> = {
  // "/token 3 / minute" (older revision: 5 / minute); counted per client_id.
  token: { limit: 3, window_ms: 60_000 },
  // "/packages 80 / minute per auth token" (older revision: 40 / minute).
  packages: { limit: 80, window_ms: 60_000 },
  // "/sims/:iccid/usage 10 / minute per ICCID; 5 / second per client_id".
  usage_per_iccid: { limit: 10, window_ms: 60_000 },
  usage_per_company: { limit: 5, window_ms: 1_000 },
  // "/sims/:iccid/packages 10 / minute per ICCID".
  sim_packages: { limit: 10, window_ms: 60_000 },
  // "/refund 1 per 5 minutes per IP" (the refund page's SPEC block says 5 per minute).
  refund: { limit: 1, window_ms: 300_000 },
  // "/simulator/webhook 1 per 15 minutes per IP".
  simulator_webhook: { limit: 1, window_ms: 900_000 },
};

/** At most this many keys are tracked; the oldest are forgotten first (a limit on everything). */
const MAX_KEYS = 100_000;

export type Verdict =
  | { allowed: true; limit: number; remaining: number }
  | { allowed: false; limit: number; retry_after_s: number };

export class RateLimiter {
  private readonly calls = new Map<string, number[]>();

  /** Counts one call of `family` for `key` if the window has room. */
  check(family: Limited, key: string, limit: Limit, now_ms = Date.now()): Verdict {
    const id = `${family}:${key}`;
    const recent = (this.calls.get(id) ?? []).filter((at) => at > now_ms - limit.window_ms);
    if (recent.length >= limit.limit) {
      this.calls.set(id, recent);
      const retry_after_ms = recent[0]! + limit.window_ms - now_ms;
      return {
        allowed: false,
        limit: limit.limit,
        retry_after_s: Math.max(1, Math.ceil(retry_after_ms / 1000)),
      };
    }
    recent.push(now_ms);
    this.calls.delete(id);
    this.calls.set(id, recent);
    if (this.calls.size > MAX_KEYS) this.calls.delete(this.calls.keys().next().value!);
    return { allowed: true, limit: limit.limit, remaining: limit.limit - recent.length };
  }

  reset(): void {
    this.calls.clear();
  }
}
