// Background jobs, run by graphile-worker inside every API process. Workers share jobs through
// PostgreSQL (SKIP LOCKED), so N processes are N workers and a killed process loses nothing:
// its jobs are picked up by another process, or by itself after the restart.
import { Logger, type Runner, run, type TaskList } from "graphile-worker";
import type { Logger as Pino } from "pino";
import type { AppContext } from "./http/types.ts";
import type { Mailer } from "./notifications/mailer.ts";
import {
  SEND_CONFIRMATION_EMAIL_TASK,
  sendConfirmationEmailTask,
} from "./notifications/send-confirmation-email.ts";
import { RESOLVE_PENDING_ORDER_TASK, resolvePendingOrderTask } from "./orders/resolve-pending-order.ts";
import {
  PURGE_IDEMPOTENCY_KEYS_CRONTAB,
  PURGE_IDEMPOTENCY_KEYS_TASK,
  purgeIdempotencyKeysTask,
} from "./topups/purge-idempotency-keys.ts";

export type WorkerDeps = { ctx: AppContext; mailer: Mailer; log: Pino; extraTasks?: TaskList };

export function taskList(deps: WorkerDeps): TaskList {
  return {
    [SEND_CONFIRMATION_EMAIL_TASK]: sendConfirmationEmailTask({ pool: deps.ctx.pool, mailer: deps.mailer }),
    [RESOLVE_PENDING_ORDER_TASK]: resolvePendingOrderTask(deps.ctx),
    [PURGE_IDEMPOTENCY_KEYS_TASK]: purgeIdempotencyKeysTask(deps.ctx),
    ...deps.extraTasks,
  };
}

function workerLogger(log: Pino): Logger {
  return new Logger((scope) => (level, message, meta) => {
    const fields = {
      scope: { label: scope.label, task: scope.taskIdentifier, job_id: scope.jobId },
      ...meta,
    };
    if (level === "error") log.error(fields, message);
    else if (level === "warning") log.warn(fields, message);
    else log.debug(fields, message);
  });
}

/** Recurring jobs (graphile-worker crontab syntax); each tick runs once across all processes. */
export const CRONTAB = [PURGE_IDEMPOTENCY_KEYS_CRONTAB].join("\n");

export async function startWorker(deps: WorkerDeps, crontab = CRONTAB): Promise<Runner> {
  return run({
    pgPool: deps.ctx.pool,
    taskList: taskList(deps),
    concurrency: deps.ctx.config.worker_concurrency,
    // LISTEN/NOTIFY wakes workers at once; polling is only the fallback.
    pollInterval: 1_000,
    noHandleSignals: true,
    logger: workerLogger(deps.log),
    crontab,
  });
}
