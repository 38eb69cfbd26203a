// What the webhook loop reads of events, through this domain: new events to hand to endpoints, and
// the bodies to post. The body is the Event exactly as GET /v1/events/{event_id} renders it. And the
// events past GET /v1/events' window, which the webhooks domain deletes after their deliveries.
import type { Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import {
  claimUndispatchedEvents,
  deleteEventsPastWindow as deletePastWindow,
  eventsByIds,
  lockEventsPastWindow,
  type UndispatchedEvent,
} from "./events.sql.ts";
import { renderEvent } from "./render-event.ts";

export type { UndispatchedEvent };

/** Claims and stamps up to `limit` undispatched events in `trx`, oldest first (SKIP LOCKED). */
export function claimEventsToDispatch(
  trx: Transaction<Database>,
  limit: number,
): Promise<UndispatchedEvent[]> {
  return claimUndispatchedEvents(trx, limit);
}

/** The JSON bodies of these events, by id. */
export async function eventBodies(db: Executor, event_ids: string[]): Promise<Map<string, string>> {
  const rows = await eventsByIds(db, event_ids);
  return new Map(rows.map((row) => [row.event_id, JSON.stringify(renderEvent(row))]));
}

/**
 * Locks up to `limit` of the oldest events past the 30 days GET /v1/events shows, after `after_seq`
 * (SKIP LOCKED); `last_seq` is where the next batch starts.
 */
export function claimEventsPastWindow(
  trx: Transaction<Database>,
  after_seq: number,
  limit: number,
): Promise<{ event_ids: string[]; last_seq: number }> {
  return lockEventsPastWindow(trx, after_seq, limit);
}

/** Deletes events `trx` claimed past the window; their deliveries must be gone first. */
export function deleteEventsPastWindow(trx: Transaction<Database>, event_ids: string[]): Promise<number> {
  return deletePastWindow(trx, event_ids);
}
