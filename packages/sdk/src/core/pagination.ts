// Cursor pages as one async sequence: `for await (const order of client.orders.list())` fetches
// the next page only when the loop gets there, and `toArray({ limit })` stops at a bound.
import type { RequestOptions } from "./transport.ts";

export type CursorPage<T> = { data: T[]; has_more: boolean; next_cursor: string | null };

/** The most items toArray collects when no limit is given. */
export const DEFAULT_TO_ARRAY_LIMIT = 1_000;

export class CursorList<T> implements AsyncIterable<T> {
  readonly #fetchPage: (cursor: string | undefined, options: RequestOptions) => Promise<CursorPage<T>>;
  readonly #options: RequestOptions;

  constructor(
    fetchPage: (cursor: string | undefined, options: RequestOptions) => Promise<CursorPage<T>>,
    options: RequestOptions,
  ) {
    this.#fetchPage = fetchPage;
    this.#options = options;
  }

  /** Page by page, each as the API returned it. */
  async *pages(): AsyncGenerator<CursorPage<T>> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.#fetchPage(cursor, this.#options);
      yield page;
      if (!page.has_more || page.next_cursor === null) return;
      cursor = page.next_cursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** At most `limit` items (default 1,000), fetching no page past the one that reaches it. */
  async toArray(options: { limit?: number } = {}): Promise<T[]> {
    const limit = options.limit ?? DEFAULT_TO_ARRAY_LIMIT;
    if (!Number.isInteger(limit) || limit < 0) throw new RangeError("limit must be a non-negative integer");
    const items: T[] = [];
    if (limit === 0) return items;
    for await (const item of this) {
      items.push(item);
      if (items.length >= limit) break;
    }
    return items;
  }
}
