// Airalo's bearer token (OAuth2 client credentials, POST /v2/token,
// [DOC:request-access-token-11883021e0], docs/suppliers/airalo.md §1), kept in the database and
// shared by every process and the CLI (contract, "Suppliers (operator side)").
//
// - In-process: the token is cached with the time it falls due; concurrent callers share one read
//   or refresh (one promise).
// - Across processes: a refresh runs under a transaction advisory lock per supplier; a process that
//   waited on the lock reads the row again and uses the token the other one stored (one token
//   request for all of them; Airalo allows 3 a minute).
// - Lifetime: the docs' example says expires_in 31622400 s (a year) while their text says "valid
//   for 24 hours ... we recommend refreshing it more frequently": we believe at most 24 hours, and
//   refresh once REFRESH_AT of that has passed, so no call carries a token about to expire.
// - A 401 on a call: `invalidate(token)` makes the next `get()` refresh, unless another caller or
//   process has already replaced that token.
// - At rest the token is sealed (secretBox, AES-256-GCM) under a key derived from the client secret,
//   as the official Node SDK seals its token cache with the credentials ([NODE] src/helpers/Cached.js):
//   every process that may use the token holds the secret, a copy of the database alone opens
//   nothing, and a rotated secret just makes the stored token unreadable (then refreshed).
import { createHash } from "node:crypto";
import type pg from "pg";
import { inTransaction } from "../../db/pool.ts";
import { type SecretBox, secretBox } from "../../lib/secret-box.ts";

export const SUPPLIER = "airalo";
/** The longest we believe a token lives, whatever expires_in says (the docs' text: 24 hours). */
export const MAX_TOKEN_LIFETIME_MS = 24 * 3600_000;
/** A token falls due for refresh after this share of its lifetime. */
export const REFRESH_AT = 0.8;

export type IssuedToken = { access_token: string; expires_in_s: number };
export type TokenRequest = () => Promise<IssuedToken | { failure: string }>;

type Held = { token: string; due_at_ms: number; expires_at_ms: number };

export class TokenUnavailable extends Error {}

export class AiraloToken {
  readonly #pool: pg.Pool;
  readonly #box: SecretBox;
  readonly #request: TokenRequest;
  readonly #now: () => number;
  #held: Held | null = null;
  #pending: Promise<string> | null = null;
  /** The token a 401 condemned: never used again, refreshed even if the row still holds it. */
  #rejected: string | null = null;

  constructor(pool: pg.Pool, client_secret: string, request: TokenRequest, now: () => number) {
    this.#pool = pool;
    // secretBox wants base64 key material of 32 bytes or more: a digest of the secret, for this purpose.
    const material = createHash("sha256").update(`airalo-token-key:${client_secret}`).digest("base64");
    this.#box = secretBox(material, "supplier-token-airalo-v1");
    this.#request = request;
    this.#now = now;
  }

  /** A token to call with; throws TokenUnavailable when none can be had now. */
  async get(): Promise<string> {
    const held = this.#held;
    if (held !== null && this.#now() < held.due_at_ms) return held.token;
    this.#pending ??= this.#refresh().finally(() => {
      this.#pending = null;
    });
    try {
      return await this.#pending;
    } catch (error) {
      // Due but not expired (the token endpoint throttled or down): the held token still works.
      if (error instanceof TokenUnavailable && held !== null && this.#now() < held.expires_at_ms)
        return held.token;
      throw error;
    }
  }

  /** A call answered 401 with `token`: the next get() does not return it again. */
  invalidate(token: string): void {
    this.#rejected = token;
    if (this.#held?.token === token) this.#held = null;
  }

  async #refresh(): Promise<string> {
    // Another process may have refreshed meanwhile: read before taking the lock.
    const stored = await this.#read(this.#pool);
    if (stored !== null) return this.#hold(stored);
    return inTransaction(this.#pool, async (client) => {
      await client.query("select pg_advisory_xact_lock(hashtext('supplier_token:' || $1))", [SUPPLIER]);
      // Whoever held the lock before us may have stored a fresh token: use it.
      const raced = await this.#read(client);
      if (raced !== null) return this.#hold(raced);
      // The lock (and a pool connection) is held across this one call, bounded by its timeout:
      // the other processes wait for its token rather than each asking Airalo for one.
      const issued = await this.#request();
      if ("failure" in issued) throw new TokenUnavailable(issued.failure);
      const now = this.#now();
      const lifetime_ms = Math.min(MAX_TOKEN_LIFETIME_MS, issued.expires_in_s * 1000);
      const held = {
        token: issued.access_token,
        expires_at_ms: now + lifetime_ms,
        due_at_ms: now + lifetime_ms * REFRESH_AT,
      };
      await client.query(
        `insert into supplier_tokens (supplier, access_token_sealed, expires_at, refreshed_at)
         values ($1, $2, $3, $4)
         on conflict (supplier) do update set access_token_sealed = excluded.access_token_sealed,
           expires_at = excluded.expires_at, refreshed_at = excluded.refreshed_at`,
        [
          SUPPLIER,
          this.#box.seal(SUPPLIER, issued.access_token),
          new Date(held.expires_at_ms),
          new Date(now),
        ],
      );
      return this.#hold(held);
    });
  }

  #hold(held: Held): string {
    this.#held = held;
    return held.token;
  }

  /** The stored token if it is usable (readable, not due, not the one a 401 condemned); else null. */
  async #read(db: Pick<pg.Pool, "query">): Promise<Held | null> {
    const result = await db.query<{ access_token_sealed: string; expires_at: Date; refreshed_at: Date }>(
      "select access_token_sealed, expires_at, refreshed_at from supplier_tokens where supplier = $1",
      [SUPPLIER],
    );
    const row = result.rows[0];
    if (!row) return null;
    const expires_at_ms = row.expires_at.getTime();
    const refreshed_at_ms = row.refreshed_at.getTime();
    const due_at_ms = refreshed_at_ms + (expires_at_ms - refreshed_at_ms) * REFRESH_AT;
    if (this.#now() >= due_at_ms) return null;
    let token: string;
    try {
      token = this.#box.open(SUPPLIER, row.access_token_sealed);
    } catch {
      return null; // sealed under another client secret (rotated): refresh
    }
    if (token === this.#rejected) return null;
    return { token, due_at_ms, expires_at_ms };
  }
}
