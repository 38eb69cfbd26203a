// Failed authentications, counted per client address and per surface: partner API keys, the
// operator's ADMIN_TOKEN, the console's partner and operator sign-ins, and each service token
// (METRICS_TOKEN, the carrier's and the SM-DP+'s callback tokens). Each surface has its own budget,
// so junk at one never locks another out: a flood of made-up API keys leaves /admin and the
// console alone.
//
// Two kinds of secret, two rules:
// - An API key is 32 random bytes: nobody guesses one, and what a junk key costs is a database
//   lookup. So a key is verified whatever its address's budget says. An address past its budget is
//   looked up through one narrow lane shared by every such address (LookupLane), so however fast
//   junk comes, it holds a few database connections at most; an address within its budget is not
//   slowed by it. The lane's queue is bounded too: while it is full (junk arriving faster than the
//   lane drains it), a key from an address past its budget, valid or not, is 429 unlooked-up. So a
//   valid key is refused only when its own address is past its budget and a flood fills the lane
//   (behind a proxy not in TRUSTED_PROXIES, or a client sharing the flood's address or /64).
// - A token is chosen by an operator, may be guessable, and costs nothing to compare. Its budget is
//   spent before the comparison and given back when the token was right: past the budget even the
//   right token is 429, so a guesser learns nothing from the answers.

import { addressKey } from "../shared/address-key.ts";
import { ApiError } from "../shared/errors.ts";
import { RateLimiter } from "./rate-limit.ts";

/**
 * Lookups of keys presented by addresses past their budget: in flight at once, and waiting for a
 * slot. Two connections of DB_POOL_MAX (at least 4) for the whole process, whatever the flood; a
 * lookup by a unique index takes well under a millisecond, so the queue drains quickly and a real
 * key behind junk waits its turn instead of being refused.
 */
export const OVER_BUDGET_LOOKUPS_IN_FLIGHT = 2;
export const OVER_BUDGET_LOOKUPS_WAITING = 64;

/** A semaphore with a bounded queue: work past both bounds is refused at once with `full`. */
export class LookupLane {
  readonly #max_in_flight: number;
  readonly #max_waiting: number;
  #in_flight = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(max_in_flight: number, max_waiting: number) {
    this.#max_in_flight = max_in_flight;
    this.#max_waiting = max_waiting;
  }

  async run<T>(work: () => Promise<T>, full: ApiError): Promise<T> {
    if (this.#in_flight < this.#max_in_flight) this.#in_flight++;
    else if (this.#waiting.length < this.#max_waiting) {
      // The slot is handed over by the finishing work (below), so in_flight never drops between.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else throw full;
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#in_flight--;
    }
  }
}

/** A refusal of the secret itself (counted), as opposed to a database failure (never counted). */
function isRefusal(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401;
}

/** The failures budget of one surface: AUTH_FAILURES_PER_MINUTE per client address. */
export class FailureBudget {
  readonly #limiter: RateLimiter;
  readonly #lane: LookupLane;

  /** `what` names the surface in the 429's detail; `lane` is shared by every surface. */
  constructor(per_minute: number, what: string, lane: LookupLane) {
    this.#limiter = RateLimiter.forFailures(per_minute, what);
    this.#lane = lane;
  }

  /**
   * Counts a refusal that cost nothing to find (no key, not a key of ours, the other environment):
   * returns `error` to throw, or throws 429 when the address's budget is spent.
   */
  refuse(ip: string, error: ApiError): ApiError {
    this.#limiter.take(addressKey(ip));
    return error;
  }

  /**
   * Runs `lookup` of an API key, which throws a 401 ApiError for a key that is not valid. Within the
   * address's budget a token is held while it runs (so one address cannot run more lookups at once
   * than its budget) and given back unless the key was refused. Past the budget it runs in the lane
   * and a refused key is answered 429; a valid key is answered whatever the budget.
   */
  async verifyKey<T>(ip: string, lookup: () => Promise<T>): Promise<T> {
    const address = addressKey(ip);
    const spent = this.#take(address);
    if (spent === null) return this.#withTokenHeld(address, lookup);
    return this.#lane.run(lookup, spent).catch((error: unknown) => {
      throw isRefusal(error) ? spent : error;
    });
  }

  /** Takes a token for `address`: null when taken, or the 429 to answer when none is left. */
  #take(address: string): ApiError | null {
    try {
      this.#limiter.take(address);
      return null;
    } catch (error) {
      if (error instanceof ApiError) return error;
      throw error;
    }
  }

  /** Runs `attempt` holding a token taken for `address`: kept if the secret was refused, else given back. */
  async #withTokenHeld<T>(address: string, attempt: () => Promise<T>): Promise<T> {
    try {
      const admitted = await attempt();
      this.#limiter.refund(address);
      return admitted;
    } catch (error) {
      if (!isRefusal(error)) this.#limiter.refund(address);
      throw error;
    }
  }

  /**
   * Runs `attempt` with an operator's token (sign-in, which may write a session): a token is spent
   * first, 429 when none is left, and given back unless the token was refused.
   */
  async guardToken<T>(ip: string, attempt: () => Promise<T>): Promise<T> {
    const address = addressKey(ip);
    this.#limiter.take(address);
    return this.#withTokenHeld(address, attempt);
  }

  /** guardToken for a comparison in memory (the request hooks): `matches` or `refused` is thrown. */
  checkToken(ip: string, matches: boolean, refused: ApiError): void {
    const address = addressKey(ip);
    this.#limiter.take(address);
    if (!matches) throw refused;
    this.#limiter.refund(address);
  }
}
