// Recording sent confirmation emails in batches, as a group commit: a delivery is written at once
// when no write is running, and the deliveries that finish during a write go together in the next
// one. Under load that is one statement for many emails instead of one each (each waiting for a
// pooled connection behind the purchases); alone it is one statement, as before. Each caller's
// promise settles once its own delivery is recorded, or rejects with the error of the write's last try.
import { setTimeout as delay } from "node:timers/promises";
import type pg from "pg";
import { type Delivery, recordDeliveries } from "./email-outbox.sql.ts";

/** Deliveries per statement at most: a bound on its parameters and its locks. */
const MAX_BATCH = 500;
/** Pauses before each further try of a failed write. */
const RETRY_PAUSES_MS = [250, 1_000];
/** No further try starts this long after the first (a write that timed out is not tried again). */
const RETRY_WITHIN_MS = 2_000;

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
    writeWithRetries(
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

/**
 * The write, tried again after a short pause when it fails: every email of the batch was accepted
 * by the relay, and a delivery not recorded is an email sent twice (a whole batch of them), so a
 * blip of the database (a dropped connection, a failover) must not cost that. Bounded in time, a
 * small share of the lease's margin (emailClaimCapacity keeps a tenth of it): a send's slot is held
 * meanwhile, and the emails queued behind it must still start within their claims.
 */
async function writeWithRetries(pool: pg.Pool, deliveries: readonly Delivery[]): Promise<void> {
  const started_at = performance.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await recordDeliveries(pool, deliveries);
    } catch (error) {
      const pause_ms = RETRY_PAUSES_MS[attempt];
      if (pause_ms === undefined || performance.now() - started_at + pause_ms > RETRY_WITHIN_MS) throw error;
      await delay(pause_ms);
    }
  }
}
