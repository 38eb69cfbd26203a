// The `purge_old_events` job: events leave GET /v1/events after 30 days (the contract), and are
// then deleted with their deliveries, which until migration 0017 only grew (every purchase records
// an event, and a delivery per endpoint). Scheduled hourly by graphile-worker's crontab in every
// process; graphile-worker runs each scheduled tick once across all of them. An event past the
// window that is not purged yet is already invisible to partners, so purging is housekeeping
// (table and index size) and may lag without harm.
// It lives here, not in src/events, because a delivery must go before its event (its foreign key)
// and only this domain may touch deliveries; events are claimed and deleted through event-feed.ts.
// Once-only events stay once-only when their dedup keys go with them: installed, activated, a
// usage threshold, expired and deleted are recorded when the eSIM's stored state crosses a line it
// never crosses back (a revived eSIM's expiry has a new key), and a refund once per order by the
// order's status. An expiry warning is due only in its bundle's last 24 hours, where its key is
// the guard; the purge deletes the key 30 days after the warning, long after those 24 hours
// (test/webhooks.purge-old-events.test.ts).
import type { Task } from "graphile-worker";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { claimEventsPastWindow, deleteEventsPastWindow } from "../events/event-feed.ts";
import type { AppContext } from "../shared/context.ts";
import { deleteDeliveriesOfEvents, lockEndpointsOfEvents } from "./deliveries.sql.ts";

export const PURGE_OLD_EVENTS_TASK = "purge_old_events";
/** Hourly, at minute 15, apart from the other purges (minutes 0 and 30). */
export const PURGE_OLD_EVENTS_CRONTAB = `15 * * * * ${PURGE_OLD_EVENTS_TASK}`;

/** Events per transaction; with at most 10 endpoints a partner, at most 10,000 deliveries. */
export const EVENTS_PURGE_BATCH_SIZE = 1_000;
/** Batches per run: at most 50,000 events a run; a backlog continues in a follow-up job. */
export const EVENTS_PURGE_MAX_BATCHES = 50;
/** How soon a follow-up run starts when a run stopped at its limit. */
const FOLLOW_UP_DELAY_MS = 60_000;

export type EventsPurgeResult = { events: number; deliveries: number; more: boolean };

/**
 * Deletes events past the window, oldest first, each batch in one short transaction: the events
 * are locked, then their deliveries' endpoints (an endpoint's DELETE is waited for, never
 * deadlocked with), their deliveries deleted, then the events. A dispatcher cannot add a delivery
 * to a locked event meanwhile (its claim skips locked events, and a delivery's foreign key check
 * waits for the lock). `more` when it stopped at its limit with a full last batch.
 */
export async function purgeOldEvents(
  db: Kysely<Database>,
  limits: { batch_size?: number; max_batches?: number } = {},
): Promise<EventsPurgeResult> {
  const batch_size = limits.batch_size ?? EVENTS_PURGE_BATCH_SIZE;
  const max_batches = limits.max_batches ?? EVENTS_PURGE_MAX_BATCHES;
  const total = { events: 0, deliveries: 0 };
  // Each batch starts after the last one's events: the index entries of rows just deleted stay
  // until vacuum, and reading them again each batch would make a run quadratic.
  let after_seq = 0;
  for (let batch = 0; batch < max_batches; batch++) {
    const done = await db.transaction().execute(async (trx) => {
      const claimed = await claimEventsPastWindow(trx, after_seq, batch_size);
      await lockEndpointsOfEvents(trx, claimed.event_ids);
      const deliveries = await deleteDeliveriesOfEvents(trx, claimed.event_ids);
      const events = await deleteEventsPastWindow(trx, claimed.event_ids);
      return { events, deliveries, last_seq: claimed.last_seq };
    });
    total.events += done.events;
    total.deliveries += done.deliveries;
    after_seq = done.last_seq;
    if (done.events < batch_size) return { ...total, more: false };
  }
  return { ...total, more: true };
}

export function purgeOldEventsTask(ctx: AppContext): Task {
  return async (_payload, helpers) => {
    const result = await purgeOldEvents(ctx.db);
    helpers.logger.info(`purged ${result.events} events past 30 days and ${result.deliveries} deliveries`);
    if (result.more) {
      // One follow-up at a time, whatever number of runs stop at their limit.
      await helpers.addJob(
        PURGE_OLD_EVENTS_TASK,
        {},
        { jobKey: "purge_old_events:follow-up", runAt: new Date(Date.now() + FOLLOW_UP_DELAY_MS) },
      );
    }
  };
}
