// Driving a pending order to its outcome (design.md steps 2 and 3): ask the carrier with the
// order id as reference, then record what it said. Used by the request that created the order,
// by a retry that finds it abandoned, and by the resolver sweep: the carrier is idempotent by
// reference and every transition below is guarded by `status = 'pending'`, so however many of
// them race, the order completes or fails exactly once and is charged at most once.
import assert from "node:assert/strict";
import type { CarrierOutcome, ProvisionedProfile, TopUpResult } from "../carrier/carrier.ts";
import { esimChanged } from "../esims/esim-cache.ts";
import { crashPoint } from "../lib/crash-points.ts";
import type { AppContext } from "../shared/context.ts";
import { driveGroup } from "./drive-group.ts";
import type { OrderFinish } from "./finish.ts";
import { leaseClaim, mayCallCarrier } from "./lease.ts";
import type { OrderRow } from "./order.ts";
import { type CompletedOrder, claimLease, orderById, releaseLease } from "./orders.sql.ts";
import { complete, fail } from "./record-outcome.ts";

export { leaseClaim, leaseMs } from "./lease.ts";
export type { CompletedOrder };

/** An order after a drive: a completion made here carries the purchase it recorded. */
export type DrivenOrder = OrderRow | CompletedOrder;

async function askCarrier(
  ctx: AppContext,
  order: OrderRow,
): Promise<CarrierOutcome<ProvisionedProfile | TopUpResult>> {
  // The order's own copy of the terms, never the catalog row: an import may have changed it since.
  if (order.type === "esim") {
    return ctx.carrier.provisionProfile({
      reference: order.order_id,
      supplier: order.supplier,
      external_package_id: order.external_package_id,
      data_mb: order.data_mb,
      validity_days: order.validity_days,
      start_date: order.start_date,
      end_user_email: order.email,
    });
  }
  assert.ok(order.iccid, "a top-up order names its eSIM");
  return ctx.carrier.topUp({
    reference: order.order_id,
    supplier: order.supplier,
    iccid: order.iccid,
    external_package_id: order.external_package_id,
    data_mb: order.data_mb,
    validity_days: order.validity_days,
    end_user_email: order.email,
  });
}

/**
 * Calls the carrier for an order whose lease the caller took at `leased_at` (performance.now()
 * before the claiming statement was sent), records the outcome with the steps `finish` adds for
 * this order's type, and returns the order. A holder that may no longer call (mayCallCarrier)
 * calls nothing and returns the order as it now is: pending while its new holder drives it.
 */
export async function driveOrder(
  ctx: AppContext,
  order: OrderRow,
  finish: OrderFinish,
  leased_at: number,
): Promise<DrivenOrder> {
  assert.equal(order.status, "pending");
  // A group order: one carrier call per eSIM, each line final on its own (drive-group.ts).
  if (order.quantity > 1) return driveGroup(ctx, order, finish, leased_at);
  if (!(await mayCallCarrier(ctx, order, leased_at))) return orderNow(ctx, order.order_id);
  try {
    const outcome = await askCarrier(ctx, order);
    crashPoint("after_carrier_answer");
    return await record(ctx, order, finish, outcome);
  } catch (error) {
    // A statement of the adapter's or the recording's transaction failed (a deadlock, a cancelled
    // statement: answered 503, "retry"), with no carrier call left in flight: the lease goes with
    // this drive, so the retry drives the order at once (the carrier answers our reference again)
    // instead of a 409 until the lease runs out. An order already final: nothing released.
    await releaseLease(ctx.db, order.order_id, order.lease_token).catch(() => undefined);
    throw error;
  }
}

/** Makes the carrier's answer ours: completed or failed once, or the lease given up (unknown). */
async function record(
  ctx: AppContext,
  order: OrderRow,
  finish: OrderFinish,
  outcome: CarrierOutcome<ProvisionedProfile | TopUpResult>,
): Promise<DrivenOrder> {
  let recorded: DrivenOrder | null = null;
  if (outcome.kind === "ok") {
    recorded = await ctx.db
      .transaction()
      .execute((trx) => complete(trx, order, outcome.value, finish, ctx.config.usage_sync_min_interval_s));
    crashPoint("after_completion_commit");
    // A top-up's new bundle: other processes hear of it by NOTIFY, this one drops its copy now.
    if (order.iccid !== null) esimChanged(ctx.pool, order.iccid);
  } else if (outcome.kind === "refused") {
    recorded = await ctx.db.transaction().execute((trx) => fail(trx, order, outcome.reason, finish));
  } else {
    // Unknown outcome: let the next retry (or the resolver) ask again at once with the same reference.
    await releaseLease(ctx.db, order.order_id, order.lease_token);
  }
  // The statement that made it final returned it; otherwise someone else did, or it is still pending.
  if (recorded !== null) return recorded;
  return orderNow(ctx, order.order_id);
}

async function orderNow(ctx: AppContext, order_id: string): Promise<OrderRow> {
  const now = await orderById(ctx.db, order_id);
  assert.ok(now, "the order still exists");
  return now;
}

/**
 * Drives an abandoned pending order: nobody holds its lease, it ran out, or its holder's process is
 * gone (a crash: taken over at once, liveness.ts). Null when someone alive is driving it.
 */
export async function driveIfAbandoned(
  ctx: AppContext,
  order_id: string,
  finish: OrderFinish,
): Promise<DrivenOrder | null> {
  const leased_at = performance.now();
  const claimed = await claimLease(ctx.db, order_id, leaseClaim(ctx));
  return claimed ? driveOrder(ctx, claimed, finish, leased_at) : null;
}
