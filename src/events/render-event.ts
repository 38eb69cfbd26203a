// The Event object of the contract ("Webhooks"): what GET /v1/events shows and what a webhook
// delivery posts, byte for byte the same rendering.
import { type Static, Type } from "typebox";
import { rfc3339 } from "../shared/time.ts";
import type { EventRow } from "./events.sql.ts";
import { EVENT_TYPES } from "./record-event.ts";

export const EventTypeSchema = Type.Union(
  EVENT_TYPES.map((type) => Type.Literal(type)),
  { description: "The event types of the contract." },
);

export const Event = Type.Object(
  {
    id: Type.String({ description: "`evt_…`: the `webhook-id` of its deliveries; deduplicate by it." }),
    type: EventTypeSchema,
    created_at: Type.String({ format: "date-time" }),
    data: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          "The resource as the API returned it when the event happened: an `Order` (order.*), an `Esim` " +
          "(esim.*; `esim.usage_threshold` adds `threshold_percent`), `{balance, threshold}` (wallet.*), or " +
          "`{endpoint_id, message}` (webhook.test). The OpenAPI `webhooks` section has each payload.",
      },
    ),
  },
  { additionalProperties: false },
);

export type EventBody = Static<typeof Event>;

export function renderEvent(row: Pick<EventRow, "event_id" | "type" | "data" | "created_at">): EventBody {
  return {
    id: row.event_id,
    type: row.type as EventBody["type"],
    created_at: rfc3339(row.created_at),
    data: row.data as EventBody["data"],
  };
}
