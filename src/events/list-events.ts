// Partner use case: the partner's events of the last 30 days, newest first, by keyset pages, and one
// event by id. Another partner's event answers exactly as an unknown one.
import { type Static, Type } from "typebox";
import type { Executor } from "../db/executor.ts";
import { ApiError } from "../shared/errors.ts";
import { seqCursor } from "../shared/seq-cursor.ts";
import { type EventRow, eventById, pageOfEvents } from "./events.sql.ts";
import { Event, type EventBody, renderEvent } from "./render-event.ts";

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

const cursor = seqCursor("v1");

export const EventPage = Type.Object(
  {
    data: Type.Array(Event),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: "Pass as `cursor` for the next page.",
    }),
  },
  { additionalProperties: false },
);

export type EventPage = Static<typeof EventPage>;

export async function listEvents(
  db: Executor,
  input: { partner_id: string; type: string | null; limit: number; cursor: string | null },
): Promise<EventPage> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_PAGE_SIZE) {
    throw new Error(`listEvents: limit ${input.limit} outside 1-${MAX_PAGE_SIZE}`);
  }
  const before_seq = input.cursor === null ? null : cursor.decode(input.cursor);
  // One extra row tells whether another page exists, without a count.
  const rows: EventRow[] = await pageOfEvents(db, { ...input, before_seq, limit: input.limit + 1 });
  const page = rows.slice(0, input.limit);
  const has_more = rows.length > input.limit;
  return {
    data: page.map(renderEvent),
    has_more,
    next_cursor: has_more ? cursor.encode(page.at(-1)!.seq) : null,
  };
}

export async function getEvent(db: Executor, partner_id: string, event_id: string): Promise<EventBody> {
  const row = await eventById(db, partner_id, event_id);
  if (row === null)
    throw new ApiError("event_not_found", "No such event for this partner in the last 30 days.");
  return renderEvent(row);
}
