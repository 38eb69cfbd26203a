// Partner authentication: `Authorization: Bearer <key>` or `X-API-Key: <key>`.
// Keys are looked up by their SHA-256 through a unique index, then cached per process for a
// few seconds so a hot path (catalog discovery) does not pay a query per request. Revocation
// still takes effect at once: the revoking transaction NOTIFYs every process, which drops
// the key here (see onKeyRevoked); the short TTL bounds the damage of a missed notification.
import { timingSafeEqual as cryptoTimingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import type { AppEnv } from "../config.ts";
import type { Database } from "../db/schema.ts";
import { findApiKey, recordKeysUsed } from "../partners/api-key-lookup.ts";
import { hashApiKey, keyEnvironment } from "../partners/api-keys.ts";
import { ApiError } from "../shared/errors.ts";
import type { AuthenticatedPartner } from "../shared/http-types.ts";

const CACHE_TTL_MS = 5_000;
const CACHE_MAX_ENTRIES = 10_000;
const MAX_KEY_LENGTH = 200;
const TOUCH_INTERVAL_MS = 10_000;

type CacheEntry = { partner: AuthenticatedPartner | null; expires_at_ms: number };

export class Authenticator {
  readonly #db: Kysely<Database>;
  readonly #app_env: AppEnv;
  readonly #cache = new Map<string, CacheEntry>();
  /** Keys used since the last flush: last-used times are written in batches, off the request path. */
  readonly #used = new Set<string>();
  #timer: NodeJS.Timeout | null = null;

  constructor(db: Kysely<Database>, app_env: AppEnv) {
    this.#db = db;
    this.#app_env = app_env;
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

  onKeyRevoked(key_id: string): void {
    for (const [hash, entry] of this.#cache) {
      if (entry.partner?.key_id === key_id) this.#cache.delete(hash);
    }
  }

  async authenticate(request: FastifyRequest): Promise<AuthenticatedPartner> {
    const api_key = presentedKey(request);
    if (api_key === null) {
      throw new ApiError(
        "unauthorized",
        "Send your API key as `Authorization: Bearer <API_KEY>` or `X-API-Key`.",
      );
    }
    const env = keyEnvironment(api_key);
    if (env === null) throw new ApiError("unauthorized", "The API key is not valid.");
    if (env !== this.#app_env) {
      throw new ApiError(
        "wrong_environment",
        `This is a ${env} key; this is the ${this.#app_env} environment. Use the ${env} base URL, or a ${this.#app_env} key.`,
      );
    }
    const partner = await this.#lookup(api_key);
    if (partner === null) throw new ApiError("unauthorized", "The API key is unknown or revoked.");
    this.#used.add(partner.key_id);
    return partner;
  }

  async #lookup(api_key: string): Promise<AuthenticatedPartner | null> {
    // Keyed by the key itself (already in this process's memory for the request): a cache hit
    // costs no SHA-256. Only a miss hashes it, to look it up by hash in the database.
    const hash = api_key;
    const now = Date.now();
    const cached = this.#cache.get(hash);
    if (cached && cached.expires_at_ms > now) return cached.partner;
    const record = await findApiKey(this.#db, api_key);
    const partner =
      record && !record.revoked ? { partner_id: record.partner_id, key_id: record.key_id } : null;
    // Full: forget the oldest entry (Map keeps insertion order), so a flood of unknown keys
    // cannot push every real key out at once.
    if (this.#cache.size >= CACHE_MAX_ENTRIES) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.delete(hash);
    this.#cache.set(hash, { partner, expires_at_ms: now + CACHE_TTL_MS });
    return partner;
  }
}

function presentedKey(request: FastifyRequest): string | null {
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

/** Operator authentication: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
export function isAdmin(request: FastifyRequest, admin_token: string): boolean {
  const authorization = request.headers.authorization;
  if (typeof authorization !== "string") return false;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  if (!match?.[1]) return false;
  const given = hashApiKey(match[1]);
  const expected = hashApiKey(admin_token);
  return cryptoEqual(given, expected);
}

function cryptoEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && cryptoTimingSafeEqual(a, b);
}
