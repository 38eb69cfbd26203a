// The `purge_idempotency_keys` job: deletes Idempotency-Keys past their expires_at (created +
// IDEMPOTENCY_TTL_HOURS, at least 24 h). Scheduled hourly by graphile-worker's crontab in every
// process; graphile-worker runs each scheduled tick once across all of them. An expired key that
// is not purged yet already behaves as a new key (submit-topup.ts), so purging is housekeeping
// (table and index size), never correctness, and may lag without harm.
import type { Task } from "graphile-worker";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import type { AppContext } from "../shared/context.ts";
import { deleteExpiredKeys } from "./idempotency-keys.sql.ts";

export const PURGE_IDEMPOTENCY_KEYS_TASK = "purge_idempotency_keys";
/** Hourly, at minute 0 (graphile-worker crontab syntax). */
export const PURGE_IDEMPOTENCY_KEYS_CRONTAB = `0 * * * * ${PURGE_IDEMPOTENCY_KEYS_TASK}`;

/** Rows per DELETE: each batch is its own short statement, so no lock is held for long. */
export const PURGE_BATCH_SIZE = 5_000;
/** Batches per run: at most 100,000 rows a run; a backlog continues in a follow-up job. */
export const PURGE_MAX_BATCHES = 20;
/** How soon a follow-up run starts when a run stopped at its limit. */
const FOLLOW_UP_DELAY_MS = 60_000;

export type PurgeResult = { deleted: number; more: boolean };

/** Deletes expired keys in bounded batches; `more` when it stopped at the limit with rows left. */
export async function purgeExpiredIdempotencyKeys(
  db: Kysely<Database>,
  limits: { batch_size?: number; max_batches?: number } = {},
): Promise<PurgeResult> {
  const batch_size = limits.batch_size ?? PURGE_BATCH_SIZE;
  const max_batches = limits.max_batches ?? PURGE_MAX_BATCHES;
  let deleted = 0;
  for (let batch = 0; batch < max_batches; batch++) {
    const count = await deleteExpiredKeys(db, batch_size);
    deleted += count;
    if (count < batch_size) return { deleted, more: false };
  }
  return { deleted, more: true };
}

export function purgeIdempotencyKeysTask(ctx: AppContext): Task {
  return async (_payload, helpers) => {
    const result = await purgeExpiredIdempotencyKeys(ctx.db);
    helpers.logger.info(`purged ${result.deleted} expired idempotency keys`);
    if (result.more) {
      // One follow-up at a time, whatever number of runs stop at their limit.
      await helpers.addJob(
        PURGE_IDEMPOTENCY_KEYS_TASK,
        {},
        { jobKey: "purge_idempotency_keys:follow-up", runAt: new Date(Date.now() + FOLLOW_UP_DELAY_MS) },
      );
    }
  };
}
