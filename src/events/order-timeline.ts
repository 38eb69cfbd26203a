// Partner use case: the timeline of one order (GET /v1/orders/{orderID}/events, the consoles' order
// pages): every event of the order and of its eSIM, oldest first, in one answer. Events are kept
// 30 days (purge_old_events), and one order has few (completed or failed, refunded; its eSIM's
// installed, activated, thresholds, expiring, expired, deleted), so the bound below is never
// reached in practice; past it the oldest MAX_TIMELINE_EVENTS are answered.
import type { Executor } from "../db/executor.ts";
import { eventsOfOrder } from "./events.sql.ts";
import { type EventBody, renderEvent } from "./render-event.ts";

export const MAX_TIMELINE_EVENTS = 500;

export async function orderTimeline(
  db: Executor,
  input: { partner_id: string; order_id: string; iccid: string | null },
): Promise<EventBody[]> {
  const rows = await eventsOfOrder(db, { ...input, limit: MAX_TIMELINE_EVENTS });
  return rows.map(renderEvent);
}
