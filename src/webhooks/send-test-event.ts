// Partner use case: a `webhook.test` event for one endpoint. The event and its one delivery commit
// together, the event marked dispatched so the delivery loop hands it to no other endpoint.
import { recordEvent } from "../events/record-event.ts";
import type { AppContext } from "../shared/context.ts";
import { newId } from "../shared/ids.ts";
import { insertDeliveries, notifyDeliveriesDue } from "./deliveries.sql.ts";
import { endpointById } from "./endpoints.sql.ts";
import { endpointNotFound } from "./manage-endpoint.ts";

export async function sendTestEvent(
  ctx: AppContext,
  partner_id: string,
  endpoint_id: string,
): Promise<{ event_id: string }> {
  return ctx.db.transaction().execute(async (trx) => {
    if ((await endpointById(trx, partner_id, endpoint_id)) === null) throw endpointNotFound();
    const event_id = await recordEvent(trx, {
      partner_id,
      type: "webhook.test",
      data: { endpoint_id, message: "A test event: your endpoint receives and verifies webhooks." },
      dispatched: true,
    });
    if (event_id === null) throw new Error("a test event has no dedup key and is always recorded");
    const made = await insertDeliveries(trx, [
      { delivery_id: newId("delivery"), endpoint_id, partner_id, event_id, event_type: "webhook.test" },
    ]);
    // Deleted since it was read: nothing is recorded (the event rolls back) and the answer is the
    // one the DELETE's own commit would have given a moment earlier.
    if (made === 0) throw endpointNotFound();
    await notifyDeliveriesDue(trx);
    return { event_id };
  });
}
