// Recording an event: called by the domain that makes a change, inside the transaction that makes
// it, so there is no event without its change and no change without its event, whatever crashes
// when (design.md, "Events are an outbox"). Delivery (webhooks) reads these rows later; nothing
// here waits on a receiver.
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import { deferWrite } from "../db/pool.ts";
import type { Database } from "../db/schema.ts";
import { newId } from "../shared/ids.ts";
import { insertEvent } from "./events.sql.ts";

/** The contract's event types ("Webhooks"). */
export const EVENT_TYPES = [
  "order.completed",
  "order.failed",
  "order.refunded",
  "esim.installed",
  "esim.activated",
  "esim.usage_threshold",
  "esim.expiring",
  "esim.expired",
  "esim.deleted",
  "wallet.credited",
  "wallet.balance_low",
  "webhook.test",
  "package.added",
  "package.updated",
  "package.removed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The catalog's change events (contract "Catalog additions"), made in batches by the webhook loop. */
export const PACKAGE_EVENT_TYPES: readonly EventType[] = [
  "package.added",
  "package.updated",
  "package.removed",
];

/**
 * Whether an endpoint with these event_types receives events of `type`: an empty list is all types
 * (contract "Webhooks"), the catalog's too. An endpoint that wants orders only lists the order types.
 */
export function endpointReceives(event_types: readonly string[], type: string): boolean {
  return event_types.length === 0 || event_types.includes(type);
}

/**
 * An event's `data` is stored as JSON and delivered to webhooks; this bounds what one fact may
 * weigh. The largest fact is a group order's `order.completed`: 50 eSIMs, each with its LPA string
 * and install links, about 2.9 KiB each with the longest SM-DP+ address and activation code the
 * adapters accept (253 and 255 characters): about 145 KiB (test/events.record-event.test.ts).
 * A completion whose event did not fit would fail on every retry and hold the partner's money.
 */
export const MAX_DATA_BYTES = 256 * 1024;

export type EventInput = {
  partner_id: string;
  type: EventType;
  /** The resource as the API would return it now (Order, Esim, or the wallet figures). */
  data: unknown;
  /** Set for once-only facts (e.g. `usage:<order_id>:80`): a second record of it is a no-op. */
  dedup_key?: string;
  /**
   * Set by a caller that makes this event's deliveries itself in the same transaction (a
   * `webhook.test` for one endpoint): the delivery loop then does not hand it to other endpoints.
   */
  dispatched?: boolean;
};

/**
 * Records one event in the caller's transaction. Returns its id, or null when `dedup_key` was
 * already recorded for this partner (nothing inserted).
 */
export async function recordEvent(trx: Transaction<Database>, input: EventInput): Promise<string | null> {
  assert.ok(JSON.stringify(input.data).length <= MAX_DATA_BYTES, "an event's data stays small");
  const event_id = newId("event");
  const inserted = await insertEvent(trx, {
    event_id,
    partner_id: input.partner_id,
    type: input.type,
    data: input.data,
    dedup_key: input.dedup_key ?? null,
    dispatched: input.dispatched ?? false,
  });
  return inserted ? event_id : null;
}

/**
 * Records one event in the caller's transaction, its insert sent with the transaction's next
 * statement or COMMIT (deferWrite): for a caller that needs neither its id nor whether a
 * `dedup_key` made it a no-op. It is committed with the change, or rolled back with it.
 */
export async function recordEventLater(trx: Transaction<Database>, input: EventInput): Promise<void> {
  await deferWrite(() => recordEvent(trx, input));
}
