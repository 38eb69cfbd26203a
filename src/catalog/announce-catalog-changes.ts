// What the webhooks domain asks of the change log to send package.* events: the next changes each
// subscribed partner is owed, rendered as that partner sees the package now, and a position to
// save in the same transaction as the events it records. Pairs (change, partner) are handed out
// in (seq, partner_id) order, at most `max_events` per call, so a catalog-wide change owed to
// thousands of partners is spread over as many calls as it takes, each one bounded.
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import {
  type ChangeKind,
  type ChangeRow,
  changesFrom,
  type FanOutPosition,
  lockFanOutPosition,
  saveFanOutPosition,
} from "./catalog-changes.sql.ts";
import { type CatalogChange, type ChangeFor, renderChanges } from "./render-catalog-change.ts";

/** Changes read per call: the log is read forward once, whoever is subscribed. */
const WINDOW_CHANGES = 500;

/** A partner with endpoints listing package events: per kind, when its first such endpoint was made. */
export type ChangeSubscriber = { partner_id: string; since: Partial<Record<ChangeKind, Date>> };

export type Announcement = { partner_id: string; change: CatalogChange };

export type ClaimedAnnouncements = {
  announcements: Announcement[];
  /** False: nothing was left to read in the log. */
  read_any: boolean;
  /** Saves how far this call got; in the same transaction as the events recorded. */
  save: () => Promise<void>;
};

function owed(subscriber: ChangeSubscriber, change: ChangeRow, from: FanOutPosition): boolean {
  if (change.partner_id !== null && change.partner_id !== subscriber.partner_id) return false;
  const done =
    change.seq < from.last_seq ||
    (change.seq === from.last_seq &&
      (from.last_partner_id === null || subscriber.partner_id <= from.last_partner_id));
  if (done) return false;
  // An endpoint hears of changes made after it was, as it does of other events.
  const since = subscriber.since[change.kind];
  return since !== undefined && since <= change.created_at;
}

/** The owed pairs after `from`, up to `max_events`, and where the next call starts. */
function pairsAfter(
  window: ChangeRow[],
  subscribers: ChangeSubscriber[],
  from: FanOutPosition,
  max_events: number,
): { pairs: ChangeFor[]; next: FanOutPosition } {
  const pairs: ChangeFor[] = [];
  for (const change of window) {
    for (const subscriber of subscribers) {
      if (!owed(subscriber, change, from)) continue;
      pairs.push({ partner_id: subscriber.partner_id, change });
      if (pairs.length === max_events)
        return { pairs, next: { last_seq: change.seq, last_partner_id: subscriber.partner_id } };
    }
  }
  const last = window.at(-1);
  return { pairs, next: last === undefined ? from : { last_seq: last.seq, last_partner_id: null } };
}

/**
 * Locks the position (null when another process is announcing: it is skipped, never waited for)
 * and hands out the next owed changes. `subscribers` (in any order) is asked only when there are
 * changes to hand out: most rounds of the loop find none.
 */
export async function claimChangesToAnnounce(
  trx: Transaction<Database>,
  subscribers: () => Promise<ChangeSubscriber[]>,
  max_events: number,
): Promise<ClaimedAnnouncements | null> {
  const from = await lockFanOutPosition(trx);
  if (from === null) return null;
  const window = await changesFrom(trx, from, WINDOW_CHANGES);
  if (window.length === 0) return { announcements: [], read_any: false, save: async () => undefined };
  // Code-unit order, the same on every call: the position compares partner ids this way.
  const ordered = (await subscribers()).sort((a, b) => (a.partner_id < b.partner_id ? -1 : 1));
  const { pairs, next } = pairsAfter(window, ordered, from, max_events);
  const rendered = await renderChanges(trx, pairs);
  return {
    announcements: rendered.map((change, i) => ({ partner_id: pairs[i]!.partner_id, change })),
    read_any: window.length > 0,
    save: () => saveFanOutPosition(trx, next),
  };
}
