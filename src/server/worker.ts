// Background work of a worker process (ROLE=worker or all). Two kinds:
// - Sweeps (shared/sweep.ts): rows that need work are claimed with FOR UPDATE SKIP LOCKED, the
//   claim being a lease, woken by a short timer: the resolver of pending orders and the
//   confirmation email outbox. No job row per order; N processes share the rows.
// - Scheduled maintenance, run by graphile-worker's crontab (each tick once across processes):
//   purges and the give-up report. A job that a killed process had locked would wait
//   graphile-worker's 4-hour lock expiry; the sweeper below unlocks it much sooner, which is safe
//   because every task here is idempotent.
import { Logger, type Runner, run, type TaskList } from "graphile-worker";
import { sql } from "kysely";
import type { Logger as Pino } from "pino";
import {
  PURGE_AUDIT_LOG_CRONTAB,
  PURGE_AUDIT_LOG_TASK,
  purgeAuditLogTask,
} from "../audit/purge-audit-log.ts";
import {
  PURGE_EXPIRED_CARTS_CRONTAB,
  PURGE_EXPIRED_CARTS_TASK,
  purgeExpiredCartsTask,
} from "../carts/purge-expired-carts.ts";
import {
  REPEAT_SUPPLIER_SYNCS_CRONTAB,
  REPEAT_SUPPLIER_SYNCS_TASK,
  repeatSupplierSyncsTask,
} from "../catalog/repeat-supplier-syncs.ts";
import type { Pool } from "../db/pool.ts";
import { markBundlesForNotice } from "../esims/mark-bundles-for-notice.ts";
import { syncDueEsims } from "../esims/sync-esims.ts";
import type { Mailer } from "../notifications/mailer.ts";
import { DeliveryRecorder } from "../notifications/record-deliveries.ts";
import {
  type EmailJob,
  emailClaimCapacity,
  releaseConfirmationEmails,
} from "../notifications/send-confirmation-emails.ts";
import { claimDueEmailJobs, ResendRecorder } from "../notifications/send-resent-emails.ts";
import { travellerNoticeRound } from "../notifications/send-traveller-notices.ts";
import { cartHasOrder } from "../orders/cart-has-order.ts";
import { ordersForEmail } from "../orders/order-for-email.ts";
import {
  FLAG_GIVEN_UP_ORDERS_CRONTAB,
  FLAG_GIVEN_UP_ORDERS_TASK,
  flagGivenUpOrdersTask,
  resolveDueOrders,
} from "../orders/resolve-pending-orders.ts";
import { loadSenders, partnersWithNotices } from "../partners/traveller-settings.ts";
import {
  PURGE_USER_TOKENS_CRONTAB,
  PURGE_USER_TOKENS_TASK,
  purgeUserTokensTask,
} from "../people/purge-user-tokens.ts";
import type { AppContext } from "../shared/context.ts";
import { startSweep } from "../shared/sweep.ts";
import { orderFinishers } from "../topups/order-finishers.ts";
import {
  PURGE_IDEMPOTENCY_KEYS_CRONTAB,
  PURGE_IDEMPOTENCY_KEYS_TASK,
  purgeIdempotencyKeysTask,
} from "../topups/purge-idempotency-keys.ts";
import {
  PURGE_OLD_EVENTS_CRONTAB,
  PURGE_OLD_EVENTS_TASK,
  purgeOldEventsTask,
} from "../webhooks/purge-old-events.ts";

export type WorkerDeps = {
  ctx: AppContext;
  log: Pino;
  extraTasks?: TaskList;
  /**
   * The pool graphile-worker takes its jobs through and LISTENs on (ctx.pool when absent): a direct
   * one when ctx.pool goes through a transaction-mode pooler (main.ts). The tasks use ctx.
   */
  jobs_pool?: Pool;
};

export function taskList(deps: WorkerDeps): TaskList {
  return {
    [FLAG_GIVEN_UP_ORDERS_TASK]: flagGivenUpOrdersTask(deps.ctx),
    [PURGE_EXPIRED_CARTS_TASK]: purgeExpiredCartsTask(deps.ctx.db, cartHasOrder),
    [PURGE_IDEMPOTENCY_KEYS_TASK]: purgeIdempotencyKeysTask(deps.ctx),
    [PURGE_OLD_EVENTS_TASK]: purgeOldEventsTask(deps.ctx),
    [PURGE_AUDIT_LOG_TASK]: purgeAuditLogTask(deps.ctx),
    [PURGE_USER_TOKENS_TASK]: purgeUserTokensTask(deps.ctx),
    [REPEAT_SUPPLIER_SYNCS_TASK]: repeatSupplierSyncsTask(deps.ctx),
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
export const CRONTAB = [
  PURGE_IDEMPOTENCY_KEYS_CRONTAB,
  FLAG_GIVEN_UP_ORDERS_CRONTAB,
  PURGE_EXPIRED_CARTS_CRONTAB,
  PURGE_OLD_EVENTS_CRONTAB,
  PURGE_AUDIT_LOG_CRONTAB,
  PURGE_USER_TOKENS_CRONTAB,
  REPEAT_SUPPLIER_SYNCS_CRONTAB,
].join("\n");

/** This process's graphile-worker, kept running (startWorker). */
export type Worker = { stop: () => Promise<void> };

/** The pause before a runner that stopped by itself is started again. */
const RUNNER_RESTART_PAUSE_MS = 1_000;

/**
 * Starts graphile-worker and keeps it running. Its runner rides out a PostgreSQL restart for
 * fetching jobs (retried every poll) and for its LISTEN connection (reconnected), but a job that
 * finishes while the database is away cannot be marked complete: graphile-worker then shuts its
 * whole pool down, and this process would run no scheduled job until it restarted (issue 37;
 * before, unbatched, it ended the process). So a runner that stops without stop() being called is
 * started again, every RUNNER_RESTART_PAUSE_MS until it starts; the unfinished job is unlocked by
 * the stale job sweeper and run again (every task here is idempotent).
 */
export async function startWorker(deps: WorkerDeps, crontab = CRONTAB): Promise<Worker> {
  const options = {
    pgPool: deps.jobs_pool ?? deps.ctx.pool,
    taskList: taskList(deps),
    concurrency: deps.ctx.config.worker_concurrency,
    // LISTEN/NOTIFY wakes workers at once; polling is only the fallback.
    pollInterval: 1_000,
    noHandleSignals: true,
    logger: workerLogger(deps.log),
    crontab,
    // Unbatched (the default), a job's completion that fails (PostgreSQL away) is a promise
    // graphile-worker never awaits: an unhandled rejection, which ends the whole process.
    // Batched, the failure reaches graphile-worker's own handler, which shuts the runner down
    // cleanly, and we start it again (below). A delay of 0 batches only what finishes together.
    preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  };
  let stopping = false;
  let runner: Runner = await run(options);
  let restarting: Promise<void> | null = null;
  const restart = async (): Promise<void> => {
    while (!stopping) {
      await new Promise((resolve) => setTimeout(resolve, RUNNER_RESTART_PAUSE_MS));
      if (stopping) return;
      try {
        runner = await run(options);
        supervise(runner);
        return;
      } catch (error) {
        deps.log.warn({ err: error }, "graphile-worker did not start again; trying again");
      }
    }
  };
  const supervise = (current: Runner): void => {
    const ended = (error: unknown) => {
      if (stopping || current !== runner) return;
      deps.log.error(
        { err: error },
        "graphile-worker stopped by itself (the database went away?); starting it again",
      );
      restarting = restart().finally(() => {
        restarting = null;
      });
    };
    current.promise.then(() => ended(null), ended);
  };
  supervise(runner);
  return {
    stop: async () => {
      stopping = true;
      await restarting;
      await runner.stop().catch((error: unknown) => {
        // A runner that had stopped by itself says so again here: nothing is left to stop.
        deps.log.debug({ err: error }, "graphile-worker stop");
      });
    },
  };
}

/**
 * Unlocks jobs locked for longer than any of our tasks can legitimately run (their worker died).
 * Uses graphile-worker's own force_unlock_workers, the function behind WorkerUtils.forceUnlockWorkers.
 */
export async function unlockStaleJobs(ctx: AppContext): Promise<string[]> {
  const stale = await sql<{ locked_by: string }>`
    select distinct locked_by from graphile_worker.jobs
    where locked_by is not null and locked_at < now() - make_interval(secs => ${ctx.config.stale_job_after_ms / 1000})
    limit 100`.execute(ctx.db);
  const workers = stale.rows.map((row) => row.locked_by);
  if (workers.length > 0)
    await sql`select graphile_worker.force_unlock_workers(${workers}::text[])`.execute(ctx.db);
  return workers;
}

/**
 * The eSIM pull sync in this process: each second, at most USAGE_SYNC_MAX_PER_SECOND due eSIMs,
 * one after the other; a round that runs long delays the next (never two rounds at once).
 */
export function startEsimSync(ctx: AppContext, log: Pino): { close: () => Promise<void> } {
  const per_second = ctx.config.usage_sync_max_per_second;
  if (per_second === 0) return { close: async () => undefined };
  let round: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    if (round !== null) return;
    round = syncDueEsims(ctx, per_second)
      .then((done) => {
        if (done.failed > 0) log.info(done, "eSIM sync round: some eSIMs could not be reached");
      })
      .catch((error: unknown) => log.warn({ err: error }, "eSIM sync round failed"))
      .finally(() => {
        round = null;
      });
  }, 1_000);
  timer.unref();
  return {
    close: async () => {
      clearInterval(timer);
      await round;
    },
  };
}

/** Runs the sweeper in this process every half stale period; every process runs one. */
export function startStaleJobSweeper(ctx: AppContext, log: Pino): { close: () => Promise<void> } {
  const timer = setInterval(() => {
    unlockStaleJobs(ctx)
      .then((workers) => {
        if (workers.length > 0) log.warn({ workers }, "unlocked jobs of workers that stopped answering");
      })
      .catch((error: unknown) => log.warn({ err: error }, "stale job sweep failed"));
  }, ctx.config.stale_job_after_ms / 2);
  timer.unref();
  return { close: async () => clearInterval(timer) };
}

type Closable = { close: () => Promise<void> };

/** `fn` on the first call only. */
function once(fn: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    fn();
  };
}

/** Pending orders one resolver round claims at most (each is a carrier call, side by side). */
const RESOLVE_BATCH = 32;
/** A sweep's timer: how long a due row waits at most when its round found nothing before. */
const SWEEP_EVERY_MS = 250;

/**
 * The resolver sweep in this process: pending orders past RESOLVE_AFTER_MS whose lease expired
 * (their request died or the carrier did not answer), and at once those whose lease holder stopped
 * beating (its process crashed: shared/liveness.ts), driven again with the same reference. Its
 * timer (a second at most) is what bounds a takeover nobody retries: LIVE_WITHIN_MS plus a round.
 */
export function startResolverSweep(ctx: AppContext, log: Pino): Closable {
  // The resolver drives any order: it finishes each as the domain that created it would.
  const finishers = orderFinishers(ctx.config);
  return startSweep({
    name: "resolver",
    limit: RESOLVE_BATCH,
    // Orders come due by time only (RESOLVE_AFTER_MS, backoff): a timer is the whole wake-up.
    every_ms: Math.min(1_000, ctx.config.resolve_after_ms),
    round: (limit) => resolveDueOrders(ctx, finishers, limit, log),
    onError: (error) => log.warn({ err: error }, "resolver round failed"),
  });
}

/**
 * The confirmation emails this process has claimed: waiting in a queue, or started and not yet
 * recorded (`in_flight`), `sending` of them at the relay, EMAIL_CONCURRENCY at most. A slot frees
 * when its send is over: the recording waits for a pooled connection behind the purchases, and a
 * slot sends nothing then. Each freed slot starts the next queued email, and claims again at once
 * when the queue runs low and the last claim took all it asked for (`more`: more may be due).
 */
class EmailSlots {
  readonly queue: EmailJob[] = [];
  readonly in_flight = new Set<Promise<void>>();
  /** The last claim took all it asked for; otherwise new rows wait for the timer (SWEEP_EVERY_MS). */
  more = false;
  #sending = 0;
  // Once closing no send starts (a send begun after SIGTERM may outlast the grace, and a process
  // killed mid-send is the window where an email goes out twice): the queue is given back.
  #closing = false;

  readonly #concurrency: number;
  readonly #log: Pino;
  /** Runs a claim round now (the sweep's wake). */
  readonly #claimSoon: () => void;

  constructor(concurrency: number, log: Pino, claimSoon: () => void) {
    this.#concurrency = concurrency;
    this.#log = log;
    this.#claimSoon = claimSoon;
  }

  /** How many to claim now (none while the queue holds enough for every slot). */
  wanted(capacity: number): number {
    if (this.queue.length >= this.#concurrency) return 0;
    return Math.max(0, capacity - this.in_flight.size - this.queue.length);
  }

  /** Starts queued emails while a slot is free. */
  start(): void {
    while (!this.#closing && this.#sending < this.#concurrency && this.queue.length > 0) {
      this.#sending += 1;
      const freeSlot = once(() => {
        this.#sending -= 1;
        this.#refill();
      });
      const tracked: Promise<void> = this.queue
        .shift()!
        .run(freeSlot)
        .catch((error: unknown) => this.#log.warn({ err: error }, "confirmation email not recorded"))
        .finally(() => {
          this.in_flight.delete(tracked);
          this.#refill();
        });
      this.in_flight.add(tracked);
    }
  }

  /** No send starts from now on. */
  stop(): void {
    this.#closing = true;
  }

  #refill(): void {
    this.start();
    if (this.more && this.queue.length < this.#concurrency) this.#claimSoon();
  }
}

/**
 * The confirmation email sweep in this process: EMAIL_CONCURRENCY sends in flight at most, fed from a
 * queue of claimed emails (EmailSlots). A round claims a batch (one statement, and one to read its
 * orders) only when the queue runs low: under load the database sees a few statements per batch
 * instead of three per email, and one slow send (a relay, a disk flush) holds up one slot, not a
 * batch. Deliveries are recorded by one shared recorder, in as few statements as the pace of sends
 * allows (notifications/record-deliveries.ts).
 */
export function startEmailSweep(ctx: AppContext, mailer: Mailer, log: Pino): Closable {
  // As for a job: a claim this old belongs to a dead process (production: well above a send).
  const lease_ms = ctx.config.stale_job_after_ms;
  const deps = {
    pool: ctx.pool,
    mailer,
    findOrders: (order_ids: string[]) => ordersForEmail(ctx.db, order_ids, ctx.config.public_base_url),
    findSenders: (partner_ids: string[]) => loadSenders(ctx.db, partner_ids),
    log,
    lease_ms,
    // Recording a sent email outlasts a PostgreSQL restart of up to half the lease (issue 37).
    recorder: new DeliveryRecorder(ctx.pool, lease_ms / 2),
    resend_recorder: new ResendRecorder(ctx.pool, lease_ms / 2),
  };
  const capacity = emailClaimCapacity(ctx.config.email_concurrency, lease_ms);
  const slots = new EmailSlots(ctx.config.email_concurrency, log, () => sweep.wake());
  const sweep = startSweep({
    name: "confirmation emails",
    limit: capacity,
    every_ms: SWEEP_EVERY_MS,
    round: async () => {
      const wanted = slots.wanted(capacity);
      if (wanted > 0) {
        // Resends first: a backlog of confirmations never holds back one a person waits on.
        const claimed = await claimDueEmailJobs(deps, wanted);
        slots.more = claimed.length === wanted;
        slots.queue.push(...claimed);
      }
      slots.start();
      return 0;
    },
    onError: (error) => log.warn({ err: error }, "confirmation email round failed"),
  });
  return {
    close: async () => {
      slots.stop();
      await sweep.close();
      // Claimed but never started (a round under way may have added some): due again at once for
      // the next process, not after the lease.
      await releaseConfirmationEmails(ctx.pool, slots.queue.splice(0)).catch((error: unknown) =>
        log.warn({ err: error }, "confirmation email claims not released; they come due after their lease"),
      );
      await Promise.all(slots.in_flight);
    },
  };
}

/** How often a process looks for notices due: a notice is about hours, not seconds. */
const NOTICE_SWEEP_EVERY_MS = 2_000;
/** Notices one round queues of each kind at most; it sends at most EMAIL_CONCURRENCY. */
const NOTICES_QUEUED_PER_ROUND = 500;

/**
 * The traveller notice sweep (notifications/send-traveller-notices.ts): each round queues the
 * notices now due (80% used, 24 hours before expiry) and sends up to EMAIL_CONCURRENCY, through the
 * same mailer as the confirmations. Every process runs one; SKIP LOCKED shares the work.
 */
export function startTravellerNoticeSweep(ctx: AppContext, mailer: Mailer, log: Pino): Closable {
  const deps = {
    db: ctx.db,
    pool: ctx.pool,
    mailer,
    partnersWithNotices: (after: string | null, limit: number) => partnersWithNotices(ctx.db, after, limit),
    rotation: { after: null },
    markDueBundles: markBundlesForNotice,
    findOrders: (order_ids: string[]) => ordersForEmail(ctx.db, order_ids, ctx.config.public_base_url),
    findSenders: (partner_ids: string[]) => loadSenders(ctx.db, partner_ids),
    public_base_url: ctx.config.public_base_url,
    log,
    lease_ms: ctx.config.stale_job_after_ms,
  };
  const sweep = startSweep({
    name: "traveller notices",
    limit: ctx.config.email_concurrency,
    every_ms: NOTICE_SWEEP_EVERY_MS,
    round: (limit) => travellerNoticeRound(deps, { queue: NOTICES_QUEUED_PER_ROUND, send: limit }),
    onError: (error) => log.warn({ err: error }, "traveller notice round failed"),
  });
  return { close: () => sweep.close() };
}
