// The outcome of a pending order made ours, once (design.md step 3): completed with what the carrier
// made, or failed with its hold voided. Each transition is guarded by `status = 'pending'`, so
// however many drivers race (a retry, the resolver, the operator), it happens exactly once.
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import type { ProvisionedProfile, TopUpResult } from "../carrier/carrier.ts";
import type { Database } from "../db/schema.ts";
import { pullSoonLater } from "../esims/sync-esims.ts";
import { recordEventLater } from "../events/record-event.ts";
import { resolveHoldLater } from "../ledger/transfers.ts";
import type { OrderFinish } from "./finish.ts";
import type { OrderRow } from "./order.ts";
import { type CompletedOrder, completeOrder, markFailed } from "./orders.sql.ts";
import { renderOrder } from "./render-order.ts";

/**
 * Records a provisioning (or top-up) the carrier confirmed: exactly once, guarded by the status.
 * A new eSIM is first pulled from the carrier `first_sync_after_s` later (USAGE_SYNC_MIN_INTERVAL_S:
 * a profile just sold has nothing to report yet). Returns the completed order with its purchase,
 * or null when another finisher completed it first.
 */
export async function complete(
  trx: Transaction<Database>,
  order: OrderRow,
  value: ProvisionedProfile | TopUpResult,
  finish: OrderFinish,
  first_sync_after_s: number,
): Promise<CompletedOrder | null> {
  const profile = order.type === "esim" ? (value as ProvisionedProfile) : null;
  const iccid = profile !== null ? profile.iccid : order.iccid;
  assert.ok(iccid, "a top-up order names its eSIM");
  // A top-up makes its eSIM due for a pull at once (a depleted eSIM reads usable again); one UPDATE
  // of next_sync_at before the bundle insert, the order the concurrent top-up test holds to. Sent
  // with the completion's statement, so run before it.
  if (profile === null) await pullSoonLater(trx, iccid);
  const completed = await completeOrder(trx, {
    order_id: order.order_id,
    iccid,
    profile,
    first_sync_after_s,
    confirmation_email: finish.confirmation_email,
  });
  if (completed === null) return null;
  // A pending order has a pending hold to post: the statement asserts it, sent with the COMMIT.
  await resolveHoldLater(trx, order.order_id, "posted");
  // The Order as GET /v1/orders/{orderID} now renders it, from what this transaction wrote: no read.
  const data = renderOrder(completed, completed.purchases);
  await recordEventLater(trx, { partner_id: order.partner_id, type: "order.completed", data });
  // Only here, so only on the first completion.
  await finish.completed(trx, completed);
  return completed;
}

/** Records a definitive failure and voids the hold: exactly once, guarded by the status. */
export async function fail(
  trx: Transaction<Database>,
  order: OrderRow,
  reason: string,
  finish: OrderFinish,
  failure_code = "carrier_error",
): Promise<OrderRow | null> {
  const failed = await markFailed(trx, order.order_id, failure_code, reason);
  if (failed === null) return null;
  await resolveHoldLater(trx, order.order_id, "voided");
  // The Order as GET /v1/orders/{orderID} renders it, from what this transaction wrote: no read.
  await recordEventLater(trx, {
    partner_id: order.partner_id,
    type: "order.failed",
    data: renderOrder(failed, []),
  });
  await finish.failed(trx, failed);
  return failed;
}
