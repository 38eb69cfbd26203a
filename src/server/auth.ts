// Partner authentication: `Authorization: Bearer <key>` or `X-API-Key: <key>`.
// Keys are looked up by their SHA-256 through a unique index, then cached per process (by that
// hash, never the key) for a few seconds so a hot path (catalog discovery) does not pay a query
// per request. Revocation still takes effect at once: the revoking transaction NOTIFYs every
// process, which drops the key here (see onKeyRevoked, and its generation counter for a lookup
// racing the revocation); a lost LISTEN connection clears the whole cache (onNoticesMissed), and
// the short TTL bounds the damage of a notification missed any other way.
// A key's scope and allowlist (issue 31) are read with it and cached with it, prepared once
// (key-restrictions.ts), so a cached request is checked against them without a query. They are
// set when the key is issued and never change, so caching them is as safe as caching the key.
// The partner's standing (issue 32: a suspended partner's keys may only read) rides in the same
// restrictions: a change of it NOTIFYs every process (partner_status_changed), which drops that
// partner's keys here (onPartnerStatusChanged), exactly as a revocation drops one key.
import { timingSafeEqual as cryptoTimingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import type { AppEnv } from "../config.ts";
import type { Database } from "../db/schema.ts";
import { findApiKey, recordKeysUsed } from "../partners/api-key-lookup.ts";
import { apiKeySlot, hashApiKey, keyEnvironment } from "../partners/api-keys.ts";
import {
  type KeyRestrictions,
  keyRefusal,
  keyRefusalError,
  keyRestrictions,
} from "../partners/key-restrictions.ts";
import { ApiError } from "../shared/errors.ts";
import type { AuthenticatedPartner } from "../shared/http-types.ts";
import type { FailureBudget } from "./failure-budget.ts";

const CACHE_TTL_MS = 5_000;
const CACHE_MAX_ENTRIES = 10_000;
const MAX_KEY_LENGTH = 200;
const TOUCH_INTERVAL_MS = 10_000;

/** A key that authenticated: its partner and what it may not do (null: nothing restricted). */
type CacheEntry = {
  partner: AuthenticatedPartner;
  restrictions: KeyRestrictions | null;
  expires_at_ms: number;
};

export type AuthenticatorOptions = {
  /** Failed API keys per client address (failure-budget.ts says when a valid key can be refused by it). */
  failures: FailureBudget;
  /**
   * How long a key found valid is trusted without a query (default CACHE_TTL_MS, 5 s). Only tests
   * set it: a long one proves a revocation or standing notice, not the TTL, dropped a key.
   */
  cache_ttl_ms?: number;
};

/** The client as the authenticator sees it: its headers, its address and the method (read or write). */
export type AuthRequest = Pick<FastifyRequest, "headers" | "ip" | "method" | "routeOptions">;

export class Authenticator {
  readonly #db: Kysely<Database>;
  readonly #app_env: AppEnv;
  readonly #failures: FailureBudget;
  readonly #cache_ttl_ms: number;
  /**
   * Keys that authenticated here, and only those: an unknown key is never cached, so a flood of
   * made-up keys cannot push real keys out. An entry past its TTL stays until evicted, marking the
   * key as one that was real, so its refresh is looked up outside the address's failure budget.
   */
  readonly #cache = new Map<string, CacheEntry>();
  /** Keys used since the last flush: last-used times are written in batches, off the request path. */
  readonly #used = new Set<string>();
  /** Bumped by every revocation or standing notice; a lookup caches only if none arrived while it ran. */
  #generation = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(db: Kysely<Database>, app_env: AppEnv, options: AuthenticatorOptions) {
    this.#db = db;
    this.#app_env = app_env;
    this.#failures = options.failures;
    this.#cache_ttl_ms = options.cache_ttl_ms ?? CACHE_TTL_MS;
  }

  start(): void {
    this.#timer = setInterval(() => void this.flushLastUsed(), TOUCH_INTERVAL_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.flushLastUsed();
  }

  async flushLastUsed(): Promise<void> {
    if (this.#used.size === 0) return;
    const key_ids = [...this.#used];
    this.#used.clear();
    await recordKeysUsed(this.#db, key_ids).catch(() => undefined);
  }

  /**
   * A revocation notice: drop the key, and bump the generation so that a lookup which read the
   * key before the revocation committed, and finishes after this notice, does not cache it.
   */
  onKeyRevoked(key_id: string): void {
    this.#generation++;
    for (const [hash, entry] of this.#cache) {
      if (entry.partner.key_id === key_id) this.#cache.delete(hash);
    }
  }

  /**
   * A partner was suspended or reactivated: drop its keys, so the next request of each reads the
   * partner's standing again; the generation guards a lookup racing the change, as for revocations.
   */
  onPartnerStatusChanged(partner_id: string): void {
    this.#generation++;
    for (const [hash, entry] of this.#cache) {
      if (entry.partner.partner_id === partner_id) this.#cache.delete(hash);
    }
  }

  /**
   * The LISTEN connection was lost, or is back (db/invalidations.ts): a revocation may have been
   * notified meanwhile and missed, as when PostgreSQL restarts. Every key is looked up again, at
   * the cost of one query per key in use, instead of a revoked key working on for its TTL.
   */
  onNoticesMissed(): void {
    this.#generation++;
    this.#cache.clear();
  }

  /** What the cache holds: SHA-256 hashes (base64url), never keys. For tests and diagnostics. */
  cachedKeyHashes(): IterableIterator<string> {
    return this.#cache.keys();
  }

  /**
   * The partner of a key this process holds fresh in its cache, with no promise: the hot path of
   * every cached read. Null when authenticate must run: no key, a key not cached here (unknown,
   * revoked, refused or never seen), an entry past its TTL, or a request the key's scope or
   * allowlist refuses (authenticate answers it with the 403: refusals need no fast path). A cached
   * key passed authenticate's checks (its environment included) when it was cached, so a hit
   * needs none of them again; only its restrictions depend on the request.
   */
  cachedPartner(request: AuthRequest): AuthenticatedPartner | null {
    const api_key = presentedKey(request);
    if (api_key === null) return null;
    const cached = this.#cache.get(apiKeySlot(api_key));
    if (cached === undefined || cached.expires_at_ms <= Date.now()) return null;
    if (
      cached.restrictions !== null &&
      keyRefusal(cached.restrictions, request.method, request.routeOptions.url, request.ip) !== null
    ) {
      return null;
    }
    this.#used.add(cached.partner.key_id);
    return cached.partner;
  }

  async authenticate(request: AuthRequest): Promise<AuthenticatedPartner> {
    const api_key = presentedKey(request);
    if (api_key === null) {
      throw this.#refused(
        request,
        new ApiError(
          "unauthorized",
          "Send your API key as `Authorization: Bearer <API_KEY>` or `X-API-Key`.",
        ),
      );
    }
    const env = keyEnvironment(api_key);
    if (env === null) throw this.#refused(request, new ApiError("unauthorized", "The API key is not valid."));
    if (env !== this.#app_env) {
      throw this.#refused(
        request,
        new ApiError(
          "wrong_environment",
          `This is a ${env} key; this is the ${this.#app_env} environment. Use the ${env} base URL, or a ${this.#app_env} key.`,
        ),
      );
    }
    const key = await this.#lookup(api_key, request);
    // A valid key used where it may not be: 403, outside the failure budget (nothing was guessed),
    // before the rate limit (a stolen key used from elsewhere spends none of the partner's tokens).
    if (key.restrictions !== null) {
      const refusal = keyRefusal(key.restrictions, request.method, request.routeOptions.url, request.ip);
      if (refusal !== null) throw keyRefusalError(refusal, request.ip);
    }
    this.#used.add(key.partner.key_id);
    return key.partner;
  }

  /** Counts a failure against the client's address: 429 instead when its budget is spent. */
  #refused(request: AuthRequest, error: ApiError): ApiError {
    return this.#failures.refuse(request.ip, error);
  }

  async #lookup(api_key: string, request: AuthRequest): Promise<CacheEntry> {
    // Keyed by the key's hash: a heap dump of this process holds no usable keys. A hit costs one
    // one-shot SHA-256 to a string; only a miss turns it into the bytes the database indexes.
    const slot = apiKeySlot(api_key);
    const now = Date.now();
    const cached = this.#cache.get(slot);
    if (cached && cached.expires_at_ms > now) return cached;
    // A key never seen to work here is looked up under its address's failure budget.
    const find = () => this.#find(slot, now);
    return cached ? find() : this.#failures.verifyKey(request.ip, find);
  }

  /** The key's partner and restrictions from the database (cached when no revocation raced it), or 401. */
  async #find(slot: string, now: number): Promise<CacheEntry> {
    const generation = this.#generation;
    const record = await findApiKey(this.#db, Buffer.from(slot, "base64url"));
    if (!record || record.revoked) {
      this.#cache.delete(slot);
      throw new ApiError("unauthorized", "The API key is unknown or revoked.");
    }
    const entry: CacheEntry = {
      partner: { partner_id: record.partner_id, key_id: record.key_id },
      restrictions: keyRestrictions(record.scope, record.allowed_ips, record.suspended),
      expires_at_ms: now + this.#cache_ttl_ms,
    };
    // A revocation noticed since the read may be this key's: answer this request (it read the key
    // before the revocation committed) but do not cache what may now be stale.
    if (generation === this.#generation) this.#remember(slot, entry);
    return entry;
  }

  #remember(slot: string, entry: CacheEntry): void {
    // Full: forget the oldest entry (Map keeps insertion order).
    if (this.#cache.size >= CACHE_MAX_ENTRIES) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.delete(slot);
    this.#cache.set(slot, entry);
  }
}

function presentedKey(request: AuthRequest): string | null {
  const authorization = request.headers.authorization;
  if (typeof authorization === "string" && authorization.length > 0) {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1] || match[1].length > MAX_KEY_LENGTH) return null;
    return match[1];
  }
  const header = request.headers["x-api-key"];
  if (typeof header === "string" && header.length > 0 && header.length <= MAX_KEY_LENGTH)
    return header.trim();
  return null;
}

/**
 * Operator credentials (ADMIN_TOKEN, METRICS_TOKEN, the callback tokens): `Authorization: Bearer
 * <token>`, compared in constant time, under the surface's failure budget (FailureBudget.checkToken:
 * past the budget even the right token is 429, so guessing learns nothing).
 */
export function requireToken(
  request: AuthRequest,
  token: string,
  failures: FailureBudget,
  name: string,
): void {
  failures.checkToken(
    request.ip,
    tokenMatches(request, token),
    new ApiError("unauthorized", `Send \`Authorization: Bearer <${name}>\`.`),
  );
}

function tokenMatches(request: AuthRequest, token: string): boolean {
  const authorization = request.headers.authorization;
  if (typeof authorization !== "string") return false;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  if (!match?.[1]) return false;
  return cryptoEqual(hashApiKey(match[1]), hashApiKey(token));
}

function cryptoEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && cryptoTimingSafeEqual(a, b);
}
