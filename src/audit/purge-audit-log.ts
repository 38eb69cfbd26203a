// The `purge_audit_log` job: the audit log is kept AUDIT_RETENTION_DAYS (at least a year, the
// contract; config.ts refuses less), then deleted, so the table does not only grow. Scheduled hourly
// by graphile-worker's crontab in every process (src/server/worker.ts), each tick run once across
// them; an entry past retention that is not purged yet harms nobody, so a purge may lag.
import type { Task } from "graphile-worker";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import type { AppContext } from "../shared/context.ts";
import { deleteAuditEntriesBefore } from "./audit.sql.ts";

export const PURGE_AUDIT_LOG_TASK = "purge_audit_log";
/** Hourly, at minute 45, apart from the other purges (minutes 0, 15 and 30). */
export const PURGE_AUDIT_LOG_CRONTAB = `45 * * * * ${PURGE_AUDIT_LOG_TASK}`;

/** Entries per transaction: a short delete that never holds many row locks. */
export const AUDIT_PURGE_BATCH_SIZE = 1_000;
/** Batches per run: at most 50,000 entries a run; a backlog continues in a follow-up job. */
export const AUDIT_PURGE_MAX_BATCHES = 50;
/** How soon a follow-up run starts when a run stopped at its limit. */
const FOLLOW_UP_DELAY_MS = 60_000;
const DAY_MS = 86_400_000;

export type AuditPurgeResult = { entries: number; more: boolean };

/**
 * Deletes entries created more than `retention_days` before `now`, oldest first, in batches of
 * one transaction each (each a statement of its own: autocommit). `more` when it stopped at its
 * limit with a full last batch.
 */
export async function purgeAuditLog(
  db: Kysely<Database>,
  retention_days: number,
  limits: { batch_size?: number; max_batches?: number; now?: Date } = {},
): Promise<AuditPurgeResult> {
  const batch_size = limits.batch_size ?? AUDIT_PURGE_BATCH_SIZE;
  const max_batches = limits.max_batches ?? AUDIT_PURGE_MAX_BATCHES;
  const before = new Date((limits.now ?? new Date()).getTime() - retention_days * DAY_MS);
  let entries = 0;
  for (let batch = 0; batch < max_batches; batch++) {
    const deleted = await deleteAuditEntriesBefore(db, before, batch_size);
    entries += deleted;
    if (deleted < batch_size) return { entries, more: false };
  }
  return { entries, more: true };
}

export function purgeAuditLogTask(ctx: AppContext): Task {
  return async (_payload, helpers) => {
    const result = await purgeAuditLog(ctx.db, ctx.config.audit_retention_days);
    helpers.logger.info(
      `purged ${result.entries} audit log entries older than ${ctx.config.audit_retention_days} days`,
    );
    if (result.more) {
      // One follow-up at a time, whatever number of runs stop at their limit.
      await helpers.addJob(
        PURGE_AUDIT_LOG_TASK,
        {},
        { jobKey: "purge_audit_log:follow-up", runAt: new Date(Date.now() + FOLLOW_UP_DELAY_MS) },
      );
    }
  };
}
