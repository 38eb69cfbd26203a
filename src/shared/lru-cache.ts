// A bounded least-recently-used map, for values that are costly to make and never change for a
// key (a QR image of an eSIM's activation code). A Map keeps insertion order, so re-inserting on
// each hit keeps the least recently used entry first, where eviction takes it.

export class LruCache<V> {
  readonly #entries = new Map<string, V>();
  readonly max_entries: number;

  constructor(max_entries: number) {
    if (!Number.isInteger(max_entries) || max_entries < 1) {
      throw new Error(`LruCache: max_entries ${max_entries} is not a positive integer`);
    }
    this.max_entries = max_entries;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    while (this.#entries.size > this.max_entries) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
