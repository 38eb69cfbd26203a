// Fan-out: new events become deliveries, one per enabled endpoint of the event's partner that
// subscribes to its type (no types: all of them) and existed when the event was recorded. Claiming the
// events, stamping them and inserting their deliveries is one transaction: a crash before commit
// leaves the events undispatched for the next round, after it they are all delivered to.
import { claimEventsToDispatch, type UndispatchedEvent } from "../events/event-feed.ts";
import { endpointReceives } from "../events/record-event.ts";
import type { AppContext } from "../shared/context.ts";
import { newId } from "../shared/ids.ts";
import { insertDeliveries, type NewDelivery, notifyDeliveriesDue } from "./deliveries.sql.ts";
import { enabledEndpointsOf, type SubscribedEndpoint } from "./endpoints.sql.ts";

/** Events handed out per transaction. */
export const DISPATCH_BATCH = 200;

function deliveriesFor(events: UndispatchedEvent[], endpoints: SubscribedEndpoint[]): NewDelivery[] {
  const deliveries: NewDelivery[] = [];
  for (const event of events) {
    for (const endpoint of endpoints) {
      if (endpoint.partner_id !== event.partner_id) continue;
      if (endpoint.created_at > event.created_at) continue;
      if (!endpointReceives(endpoint.event_types, event.type)) continue;
      deliveries.push({
        delivery_id: newId("delivery"),
        endpoint_id: endpoint.endpoint_id,
        partner_id: event.partner_id,
        event_id: event.event_id,
        event_type: event.type,
      });
    }
  }
  return deliveries;
}

/** One batch; returns how many events it claimed and how many deliveries it made. */
export async function dispatchEvents(ctx: AppContext): Promise<{ events: number; deliveries: number }> {
  return ctx.db.transaction().execute(async (trx) => {
    const events = await claimEventsToDispatch(trx, DISPATCH_BATCH);
    if (events.length === 0) return { events: 0, deliveries: 0 };
    const partner_ids = [...new Set(events.map((event) => event.partner_id))];
    const endpoints = await enabledEndpointsOf(trx, partner_ids);
    const made = await insertDeliveries(trx, deliveriesFor(events, endpoints));
    // Other processes with free senders hear of them at commit.
    if (made > 0) await notifyDeliveriesDue(trx);
    return { events: events.length, deliveries: made };
  });
}
