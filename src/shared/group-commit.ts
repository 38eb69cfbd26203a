// Writes in batches, as a group commit: an item is written at once when no write is running, and
// the items that arrive during a write go together in the next one. Under load that is one
// statement for many items instead of one each (each waiting for a pooled connection behind the
// purchases); alone it is one statement, as before. Each caller's promise settles with its batch's
// answer once its own item is written, or rejects with the error of the write's last try.
//
// A failed write is tried again after a short pause: what is batched here (an email the relay
// accepted, a webhook the receiver acknowledged) is done, and not recording it means doing it
// twice, a whole batch of them, so a blip of the database (a dropped connection, a failover) must
// not cost that. Bounded in time, a small share of the leases' margins: the work queued behind a
// write must still start within its claim.
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";

export type GroupCommitOptions = {
  /** Items per write at most: a bound on its parameters and its locks. */
  max_batch: number;
  /** Pauses before each further try of a failed write. */
  retry_pauses_ms: readonly number[];
  /** No further try starts this long after the first (a write that timed out is not tried again). */
  retry_within_ms: number;
};

export const GROUP_COMMIT_DEFAULTS: GroupCommitOptions = {
  max_batch: 500,
  retry_pauses_ms: [250, 1_000],
  retry_within_ms: 2_000,
};

/**
 * For recording work already done (an email the relay accepted, a webhook the receiver answered
 * 2xx): the write is tried again for `retry_within_ms` (2 s at least), so a PostgreSQL restart or
 * failover shorter than that sends nothing twice (issue 37). Pauses of 250 ms, 500 ms, then 1 s:
 * once the database is back, the record lands within a second. The caller bounds the window by its
 * claim's lease: past the lease another process may send the work again anyway.
 */
export function recordingRetries(retry_within_ms: number): GroupCommitOptions {
  const within_ms = Math.max(retry_within_ms, GROUP_COMMIT_DEFAULTS.retry_within_ms);
  const retry_pauses_ms = [250, 500];
  for (let total_ms = 750; total_ms < within_ms; total_ms += 1_000) retry_pauses_ms.push(1_000);
  return { ...GROUP_COMMIT_DEFAULTS, retry_pauses_ms, retry_within_ms: within_ms };
}

type Waiting<T, R> = { item: T; resolve: (answer: R) => void; reject: (error: unknown) => void };

export class GroupCommit<T, R = void> {
  readonly #write: (items: readonly T[]) => Promise<R>;
  readonly #options: GroupCommitOptions;
  readonly #waiting: Waiting<T, R>[] = [];
  #writing = false;

  constructor(
    write: (items: readonly T[]) => Promise<R>,
    options: GroupCommitOptions = GROUP_COMMIT_DEFAULTS,
  ) {
    assert.ok(Number.isInteger(options.max_batch) && options.max_batch > 0, "max_batch is a positive count");
    this.#write = write;
    this.#options = options;
  }

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#next();
    });
  }

  #next(): void {
    if (this.#writing || this.#waiting.length === 0) return;
    this.#writing = true;
    const batch = this.#waiting.splice(0, this.#options.max_batch);
    this.#writeWithRetries(batch.map((waiting) => waiting.item))
      .then(
        (answer) => {
          for (const waiting of batch) waiting.resolve(answer);
        },
        (error: unknown) => {
          for (const waiting of batch) waiting.reject(error);
        },
      )
      .finally(() => {
        this.#writing = false;
        this.#next();
      });
  }

  async #writeWithRetries(items: readonly T[]): Promise<R> {
    const started_at = performance.now();
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#write(items);
      } catch (error) {
        const pause_ms = this.#options.retry_pauses_ms[attempt];
        if (
          pause_ms === undefined ||
          performance.now() - started_at + pause_ms > this.#options.retry_within_ms
        )
          throw error;
        await delay(pause_ms);
      }
    }
  }
}
