// Catalog changes become package.* events (contract "Catalog additions") for the partners whose
// enabled endpoints list those types; the normal fan-out (dispatch-events.ts) then makes their
// deliveries. Not in the transaction that changes the catalog: an import that changes 500
// packages for 1,000 subscribed partners would write 500,000 events in one request. The change
// log is written there instead (catalog/record-catalog-changes.ts), and this loop turns it into
// events in bounded batches, each batch's events and its position committed together: a crash
// repeats nothing and loses nothing (the dedup key makes a repeat a no-op besides).
import { type ChangeSubscriber, claimChangesToAnnounce } from "../catalog/announce-catalog-changes.ts";
import type { Executor } from "../db/executor.ts";
import { recordEvent } from "../events/record-event.ts";
import type { AppContext } from "../shared/context.ts";
import { PACKAGE_SUBSCRIPTIONS_PAGE, packageSubscriptions, partnersWithEndpoints } from "./endpoints.sql.ts";

/** Events recorded per transaction. */
export const ANNOUNCE_BATCH = 200;

const KINDS = {
  "package.added": "added",
  "package.updated": "updated",
  "package.removed": "removed",
} as const;

function subscribersOf(
  rows: Array<{ partner_id: string; event_type: string; since: Date }>,
): ChangeSubscriber[] {
  const byPartner = new Map<string, ChangeSubscriber>();
  for (const row of rows) {
    const kind = KINDS[row.event_type as keyof typeof KINDS];
    if (kind === undefined) continue;
    const subscriber = byPartner.get(row.partner_id) ?? { partner_id: row.partner_id, since: {} };
    subscriber.since[kind] = row.since;
    byPartner.set(row.partner_id, subscriber);
  }
  return [...byPartner.values()];
}

/**
 * Every partner's package subscriptions, read by pages of partners (keyset on partner_id): any
 * number of partners is covered, none left out, each page a bounded read.
 */
async function allSubscribers(db: Executor, page: number): Promise<ChangeSubscriber[]> {
  const subscribers: ChangeSubscriber[] = [];
  let after: string | null = null;
  for (;;) {
    const partners = await partnersWithEndpoints(db, after, page);
    subscribers.push(...subscribersOf(await packageSubscriptions(db, partners)));
    if (partners.length < page) return subscribers;
    after = partners[partners.length - 1]!;
  }
}

/** One batch; `more` when the log had changes left to read (call again). */
export async function announceCatalogChanges(
  ctx: AppContext,
  options: { subscriptions_page?: number } = {},
): Promise<{ events: number; more: boolean }> {
  const page = options.subscriptions_page ?? PACKAGE_SUBSCRIPTIONS_PAGE;
  return ctx.db.transaction().execute(async (trx) => {
    const subscribers = () => allSubscribers(trx, page);
    const claimed = await claimChangesToAnnounce(trx, subscribers, ANNOUNCE_BATCH);
    if (claimed === null) return { events: 0, more: false };
    for (const { partner_id, change } of claimed.announcements) {
      await recordEvent(trx, {
        partner_id,
        type: `package.${change.kind}`,
        data: change,
        dedup_key: `catalog_change:${change.change_id}`,
      });
    }
    await claimed.save();
    return { events: claimed.announcements.length, more: claimed.read_any };
  });
}
