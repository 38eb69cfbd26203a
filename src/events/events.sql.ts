// SQL of events (migration 0005): append-only facts, one row per change a partner may hear about.
import { sql, type Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";

export type NewEvent = {
  event_id: string;
  partner_id: string;
  type: string;
  data: unknown;
  dedup_key: string | null;
  /** True when the caller makes the event's deliveries itself (a test event for one endpoint). */
  dispatched: boolean;
};

export type EventRow = { event_id: string; seq: number; type: string; data: unknown; created_at: Date };

/** What GET /v1/events shows: the last 30 days. */
export const EVENT_WINDOW_DAYS = 30;

/**
 * Inserts the event; with a `dedup_key` already recorded for this partner, inserts nothing and
 * returns false (a once-only fact, such as a usage threshold, seen again).
 */
export async function insertEvent(db: Executor, event: NewEvent): Promise<boolean> {
  const result = await sql`
    insert into events (event_id, partner_id, type, data, dedup_key, dispatched_at)
    values (${event.event_id}, ${event.partner_id}, ${event.type}, ${JSON.stringify(event.data)}::jsonb,
            ${event.dedup_key}, ${event.dispatched ? sql`now()` : null})
    on conflict (partner_id, dedup_key) where dedup_key is not null do nothing`.execute(db);
  return Number(result.numAffectedRows) === 1;
}

/** A newest-first page of a partner's events of the last 30 days (keyset on seq). */
export async function pageOfEvents(
  db: Executor,
  input: { partner_id: string; type: string | null; before_seq: number | null; limit: number },
): Promise<EventRow[]> {
  const result = await sql<EventRow>`
    select event_id, seq, type, data, created_at from events
    where partner_id = ${input.partner_id}
      and created_at > now() - make_interval(days => ${EVENT_WINDOW_DAYS})
      ${input.type === null ? sql`` : sql`and type = ${input.type}`}
      ${input.before_seq === null ? sql`` : sql`and seq < ${input.before_seq}`}
    order by seq desc
    limit ${input.limit}`.execute(db);
  return result.rows;
}

/** One of the partner's events of the last 30 days; another partner's is null like an unknown one. */
export async function eventById(
  db: Executor,
  partner_id: string,
  event_id: string,
): Promise<EventRow | null> {
  const result = await sql<EventRow>`
    select event_id, seq, type, data, created_at from events
    where event_id = ${event_id} and partner_id = ${partner_id}
      and created_at > now() - make_interval(days => ${EVENT_WINDOW_DAYS})`.execute(db);
  return result.rows[0] ?? null;
}

export type UndispatchedEvent = { event_id: string; partner_id: string; type: string; created_at: Date };

/**
 * Claims up to `limit` events nobody has handed to webhook endpoints yet, oldest first, and stamps
 * them dispatched, in the caller's transaction: its deliveries must commit with the stamp. Rows
 * another process is claiming are skipped, never waited for.
 */
export async function claimUndispatchedEvents(
  trx: Transaction<Database>,
  limit: number,
): Promise<UndispatchedEvent[]> {
  const result = await sql<UndispatchedEvent>`
    with claimed as (
      select event_id from events where dispatched_at is null
      order by seq limit ${limit}
      for update skip locked)
    update events e set dispatched_at = now()
    from claimed where e.event_id = claimed.event_id
    returning e.event_id, e.partner_id, e.type, e.created_at`.execute(trx);
  return result.rows;
}

/**
 * Locks up to `limit` of the events past the window (created EVENT_WINDOW_DAYS ago or earlier) that
 * come after `after_seq` (0: from the start), for their deletion in `trx`; with the highest seq
 * locked (`after_seq` when none). It reads only the next `limit` events by seq, never the whole
 * table: seq is taken at the insert and created_at when its transaction began, at most a
 * transaction's length apart, so the old events are the head, and a head that holds a recent one
 * ends the purge (an old one behind it goes the next hour). Rows another transaction holds (the
 * dispatcher claiming them) are skipped, never waited for.
 */
export async function lockEventsPastWindow(
  trx: Transaction<Database>,
  after_seq: number,
  limit: number,
): Promise<{ event_ids: string[]; last_seq: number }> {
  const result = await sql<{ event_id: string; seq: number }>`
    select event_id, seq from events
    where event_id in (select event_id from events where seq > ${after_seq} order by seq limit ${limit})
      and created_at <= now() - make_interval(days => ${EVENT_WINDOW_DAYS})
    for update skip locked`.execute(trx);
  const last_seq = result.rows.reduce((last, row) => Math.max(last, row.seq), after_seq);
  return { event_ids: result.rows.map((row) => row.event_id), last_seq };
}

/**
 * Deletes these events, which lockEventsPastWindow locked in `trx`: its window again, at the same
 * now(), so it deletes what was locked.
 */
export async function deleteEventsPastWindow(
  trx: Transaction<Database>,
  event_ids: string[],
): Promise<number> {
  if (event_ids.length === 0) return 0;
  const result = await sql`
    delete from events
    where event_id = any(${event_ids}::text[])
      and created_at <= now() - make_interval(days => ${EVENT_WINDOW_DAYS})`.execute(trx);
  return Number(result.numAffectedRows);
}

/** The events with these ids, for their deliveries' bodies. */
export async function eventsByIds(db: Executor, event_ids: string[]): Promise<EventRow[]> {
  if (event_ids.length === 0) return [];
  const result = await sql<EventRow>`
    select event_id, seq, type, data, created_at from events
    where event_id = any(${event_ids}::text[])`.execute(db);
  return result.rows;
}

/**
 * The partner's events about one order (order.*: data is the Order) and its eSIM (esim.*: data is
 * the Esim), oldest first, at most `limit`; through the timeline indexes of migration 0029.
 */
export async function eventsOfOrder(
  db: Executor,
  input: { partner_id: string; order_id: string; iccid: string | null; limit: number },
): Promise<EventRow[]> {
  const result = await sql<EventRow>`
    select event_id, seq, type, data, created_at from (
      select event_id, seq, type, data, created_at, partner_id from events
      where type like 'order.%' and data ->> 'orderID' = ${input.order_id}
      union all
      select event_id, seq, type, data, created_at, partner_id from events
      where type like 'esim.%' and data ->> 'iccid' = ${input.iccid}::text
    ) e
    where e.partner_id = ${input.partner_id}
    order by seq
    limit ${input.limit}`.execute(db);
  return result.rows;
}
