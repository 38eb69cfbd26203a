// In-process cache of rendered Esim bodies (the exact bytes GET /v1/esims/{iccid} sends), so the
// hottest eSIM read is a Map lookup instead of a query and a render (bench/README.md, esim-read).
//
// Keyed by ICCID (unique across partners) and served only to the partner stored with the entry:
// another partner's request for the same ICCID runs its own query and gets 404 esim_not_found.
// Only found eSIMs are cached. A request that comes in while a query runs shares its result, or its
// database error, but not a "not found": it runs its own query then. Bounded (LRU,
// MAX_CACHED_ESIMS) and short-lived (ESIM_CACHE_TTL_MS).
//
// Freshness, across processes: every transaction that changes what an eSIM renders notifies
// `esim_changed` with its ICCID (delivered at commit); each process LISTENs and drops the entry.
// The purchase that creates an eSIM does not: before its commit no process can hold the eSIM.
// The writing process also drops it right after its commit, so it reads its own writes at once.
// A lost LISTEN connection clears the whole cache; the TTL bounds what a missed notice can cost.
import type { Pool } from "../db/pool.ts";
import { ApiError } from "../shared/errors.ts";
import { LruCache } from "../shared/lru-cache.ts";

/** The NOTIFY channel; the payload is the ICCID. */
export const ESIM_CHANGED_CHANNEL = "esim_changed";
/** Entries kept per pool: about 2 KB each, so at most about 20 MB. */
export const MAX_CACHED_ESIMS = 10_000;
/** Safety net: how long an entry is served at most, should a notification be missed. */
export const ESIM_CACHE_TTL_MS = 3_000;

type Entry = { partner_id: string; body: Buffer; expires_at_ms: number };
/** A load in flight; `stale` once a change was notified while it ran (its rows may predate it). */
type Load = { partner_id: string; stale: boolean; body: Promise<Buffer> };

export class EsimCache {
  readonly #entries: LruCache<Entry>;
  /** One load per ICCID in flight, so a cold entry under load queries once. */
  readonly #loads = new Map<string, Load>();
  readonly ttl_ms: number;

  constructor(max_entries = MAX_CACHED_ESIMS, ttl_ms = ESIM_CACHE_TTL_MS) {
    this.#entries = new LruCache(max_entries);
    this.ttl_ms = ttl_ms;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The body for the partner's eSIM: cached, or made by `load` (which throws esim_not_found). */
  body(partner_id: string, iccid: string, load: () => Promise<Buffer>): Buffer | Promise<Buffer> {
    const now_ms = Date.now();
    const entry = this.#entries.get(iccid);
    if (entry && entry.expires_at_ms > now_ms) {
      // Another partner's eSIM: never served from here; its own query answers (404).
      return entry.partner_id === partner_id ? entry.body : load();
    }
    if (entry) this.#entries.delete(iccid);
    const running = this.#loads.get(iccid);
    if (running) {
      if (running.partner_id !== partner_id) return load();
      // A load that found nothing may have read before the eSIM's purchase committed, a purchase
      // this request may have seen answered (and a purchase notifies no change). So "not found" is
      // never shared: this request runs its own query instead. Other failures (the database's)
      // are shared, so that they do not multiply the queries when the database is struggling.
      return running.body.catch((error: unknown) => (isNotFound(error) ? load() : Promise.reject(error)));
    }
    const pending: Load = { partner_id, stale: false, body: Promise.resolve(Buffer.alloc(0)) };
    const settle = () => {
      if (this.#loads.get(iccid) === pending) this.#loads.delete(iccid);
    };
    pending.body = load().then(
      (body) => {
        settle();
        // The TTL counts from before the query: the rows are at least that old.
        if (!pending.stale)
          this.#entries.set(iccid, { partner_id, body, expires_at_ms: now_ms + this.ttl_ms });
        return body;
      },
      (error: unknown) => {
        settle();
        throw error;
      },
    );
    this.#loads.set(iccid, pending);
    return pending.body;
  }

  /** The eSIM changed: drop its entry, and keep a load already running from storing what it read. */
  changed(iccid: string): void {
    this.#entries.delete(iccid);
    const running = this.#loads.get(iccid);
    if (running) {
      running.stale = true;
      this.#loads.delete(iccid);
    }
  }

  /** Notifications may have been missed: forget everything. */
  clear(): void {
    this.#entries.clear();
    for (const running of this.#loads.values()) running.stale = true;
    this.#loads.clear();
  }
}

function isNotFound(error: unknown): boolean {
  // invalid_iccid: a supplier-shaped ICCID not found (iccid-param.ts unknownEsim), a "not found" too.
  return error instanceof ApiError && (error.code === "esim_not_found" || error.code === "invalid_iccid");
}

// One cache per database per process (keyed by pool), as the catalog cache.
const caches = new WeakMap<Pool, EsimCache>();

export function esimCacheOf(pool: Pool): EsimCache {
  let cache = caches.get(pool);
  if (!cache) {
    cache = new EsimCache();
    caches.set(pool, cache);
  }
  return cache;
}

/** From the `esim_changed` LISTEN handler (payload: the ICCID), and after a local commit. */
export function esimChanged(pool: Pool, iccid: string): void {
  caches.get(pool)?.changed(iccid);
}

/** From the listener when its connection was lost or re-established. */
export function esimNoticesMissed(pool: Pool): void {
  caches.get(pool)?.clear();
}
