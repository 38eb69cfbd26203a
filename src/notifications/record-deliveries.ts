// Recording sent confirmation emails in batches, as a group commit: a delivery is written at once
// when no write is running, and the deliveries that finish during a write go together in the next
// one. Under load that is one statement for many emails instead of one each (each waiting for a
// pooled connection behind the purchases); alone it is one statement, as before. Each caller's
// promise settles once its own delivery is recorded, or rejects with the write's error.
import type pg from "pg";
import { type Delivery, recordDeliveries } from "./email-outbox.sql.ts";

/** Deliveries per statement at most: a bound on its parameters and its locks. */
const MAX_BATCH = 500;

type Waiting = { delivery: Delivery; resolve: () => void; reject: (error: unknown) => void };

export class DeliveryRecorder {
  readonly #pool: pg.Pool;
  readonly #waiting: Waiting[] = [];
  #writing = false;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  record(delivery: Delivery): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ delivery, resolve, reject });
      this.#write();
    });
  }

  #write(): void {
    if (this.#writing || this.#waiting.length === 0) return;
    this.#writing = true;
    const batch = this.#waiting.splice(0, MAX_BATCH);
    recordDeliveries(
      this.#pool,
      batch.map((waiting) => waiting.delivery),
    )
      .then(
        () => {
          for (const waiting of batch) waiting.resolve();
        },
        (error: unknown) => {
          for (const waiting of batch) waiting.reject(error);
        },
      )
      .finally(() => {
        this.#writing = false;
        this.#write();
      });
  }
}
