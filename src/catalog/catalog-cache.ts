// In-process cache of serialized discovery responses, one per destination and price list, and of
// each partner's price list, all tagged with the catalog version they were read at (a pricing
// change bumps the version too, so the same invalidation covers both). The discovery endpoint is the hottest read of the API and the catalog
// changes only at imports, so a request normally costs a Map lookup and no database round trip.
//
// Freshness, across processes: every catalog change bumps catalog_version and notifies
// `catalog_changed` in the same transaction. The app LISTENs and calls catalogChanged(); and since
// a notification can be missed (connection dropped, listener not wired yet), each process also
// re-reads the version at most every VERSION_RECHECK_MS, so stale data lives at most that long.
import type { Pool } from "../db/pool.ts";

/** How long a process trusts its last known catalog version before reading it again. */
export const VERSION_RECHECK_MS = 2_000;
/**
 * Entries kept per pool: 676 two-letter codes per distinct price list, plus a price list per
 * partner seen. Partners with the same pricing share their destination entries.
 */
export const MAX_CACHED_ENTRIES = 16_384;

export type CachedResponse = { found: true; body: Buffer; etag: string } | { found: false };

export type LoadedResponse = Loaded<CachedResponse>;

export type Loaded<T> = { version: number; response: T };

type Entry = { version: number; response: unknown };

type CatalogCache = {
  version: number | null;
  checked_at_ms: number;
  /** One version read in flight at a time, however many requests arrive meanwhile. */
  version_check: Promise<number> | null;
  entries: Map<string, Entry>;
  /** One load per version and key in flight, so a cold cache under load queries once per key. */
  loads: Map<string, Promise<unknown>>;
};

// Keyed by pool: one cache per database per process, and nothing shared between two test apps
// that talk to different databases.
const caches = new WeakMap<Pool, CatalogCache>();

function cacheFor(pool: Pool): CatalogCache {
  let cache = caches.get(pool);
  if (!cache) {
    cache = { version: null, checked_at_ms: 0, version_check: null, entries: new Map(), loads: new Map() };
    caches.set(pool, cache);
  }
  return cache;
}

function adoptVersion(cache: CatalogCache, version: number): void {
  if (cache.version === version) return;
  cache.version = version;
  cache.entries.clear();
}

/**
 * Tells this process's cache that the catalog changed. Call it from the `catalog_changed`
 * LISTEN handler with the notification payload (the new version); without a usable payload the
 * next request re-reads the version. Notifications only move the version forward.
 */
export function catalogChanged(pool: Pool, version?: number | string): void {
  const cache = caches.get(pool);
  if (!cache) return;
  const parsed = Number(version);
  if (!Number.isSafeInteger(parsed)) {
    cache.checked_at_ms = 0;
    return;
  }
  if (cache.version === null || parsed > cache.version) adoptVersion(cache, parsed);
  cache.checked_at_ms = Date.now();
}

/**
 * The catalog version this process trusts now without a read (a notification or a read less than
 * VERSION_RECHECK_MS ago), or null when the next request must read it: what lets a hit skip every
 * promise (list-destination-packages.ts).
 */
export function trustedCatalogVersion(pool: Pool): number | null {
  const cache = caches.get(pool);
  if (cache === undefined || cache.version === null) return null;
  return Date.now() - cache.checked_at_ms < VERSION_RECHECK_MS ? cache.version : null;
}

function currentVersion(
  cache: CatalogCache,
  pool: Pool,
  readVersion: (pool: Pool) => Promise<number>,
): number | Promise<number> {
  if (cache.version !== null && Date.now() - cache.checked_at_ms < VERSION_RECHECK_MS) return cache.version;
  if (!cache.version_check) {
    cache.version_check = readVersion(pool)
      .then((version) => {
        // A read of the table is the truth, even backwards (a database restored from a backup).
        adoptVersion(cache, version);
        cache.checked_at_ms = Date.now();
        return version;
      })
      .finally(() => {
        cache.version_check = null;
      });
  }
  return cache.version_check;
}

function store(cache: CatalogCache, key: string, loaded: Loaded<unknown>): void {
  // A load reads the version in the same snapshot as its rows; a newer one means we were behind.
  if (cache.version === null || loaded.version > cache.version) adoptVersion(cache, loaded.version);
  if (loaded.version !== cache.version) return;
  if (!cache.entries.has(key) && cache.entries.size >= MAX_CACHED_ENTRIES) {
    const oldest = cache.entries.keys().next().value;
    if (oldest !== undefined) cache.entries.delete(oldest);
  }
  cache.entries.set(key, { version: loaded.version, response: loaded.response });
}

/**
 * The cached value for `key` at the current catalog version, loading it with `load` on a miss.
 * `load` must read the catalog version in the same statement (snapshot) as the data.
 */
export async function cachedCatalogValue<T>(
  pool: Pool,
  key: string,
  readVersion: (pool: Pool) => Promise<number>,
  load: () => Promise<Loaded<T>>,
): Promise<T> {
  const cache = cacheFor(pool);
  const version = await currentVersion(cache, pool, readVersion);
  const entry = cache.entries.get(key);
  if (entry && entry.version === version) return entry.response as T;
  const loadKey = `${version}:${key}`;
  let pending = cache.loads.get(loadKey) as Promise<T> | undefined;
  if (!pending) {
    pending = load()
      .then((loaded) => {
        store(cache, key, loaded);
        return loaded.response;
      })
      .finally(() => cache.loads.delete(loadKey));
    cache.loads.set(loadKey, pending);
  }
  return pending;
}

/** The cached discovery response for `key` (see cachedCatalogValue). */
export async function cachedCatalogResponse(
  pool: Pool,
  key: string,
  readVersion: (pool: Pool) => Promise<number>,
  load: () => Promise<LoadedResponse>,
): Promise<CachedResponse> {
  return cachedCatalogValue(pool, key, readVersion, load);
}
