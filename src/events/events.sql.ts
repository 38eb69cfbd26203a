// SQL of events (migration 0005): append-only facts, one row per change a partner may hear about.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

export type NewEvent = {
  event_id: string;
  partner_id: string;
  type: string;
  data: unknown;
  dedup_key: string | null;
};

/**
 * Inserts the event; with a `dedup_key` already recorded for this partner, inserts nothing and
 * returns false (a once-only fact, such as a usage threshold, seen again).
 */
export async function insertEvent(db: Executor, event: NewEvent): Promise<boolean> {
  const result = await sql`
    insert into events (event_id, partner_id, type, data, dedup_key)
    values (${event.event_id}, ${event.partner_id}, ${event.type}, ${JSON.stringify(event.data)}::jsonb,
            ${event.dedup_key})
    on conflict (partner_id, dedup_key) where dedup_key is not null do nothing`.execute(db);
  return Number(result.numAffectedRows) === 1;
}
