// Driving a pending order to its outcome (design.md steps 2 and 3): ask the carrier with the
// order id as reference, then record what it said. Used by the request that created the order,
// by a retry that finds it abandoned, and by the resolver sweep: the carrier is idempotent by
// reference and every transition below is guarded by `status = 'pending'`, so however many of
// them race, the order completes or fails exactly once and is charged at most once.
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import type { CarrierOutcome, ProvisionedProfile, TopUpResult } from "../carrier/carrier.ts";
import type { Database, PackageSupplier } from "../db/schema.ts";
import { esimChanged } from "../esims/esim-cache.ts";
import { pullSoonLater } from "../esims/sync-esims.ts";
import { recordEventLater } from "../events/record-event.ts";
import { resolveHoldLater } from "../ledger/transfers.ts";
import { crashPoint } from "../lib/crash-points.ts";
import type { AppContext } from "../shared/context.ts";
import { holderOf } from "../shared/liveness.ts";
import type { OrderFinish } from "./finish.ts";
import type { OrderRow } from "./order.ts";
import {
  type CompletedOrder,
  claimLease,
  completeOrder,
  type LeaseClaim,
  markFailed,
  orderById,
  releaseLease,
  renewOwnLease,
} from "./orders.sql.ts";
import { renderOrder } from "./render-order.ts";

export type { CompletedOrder };

/** An order after a drive: a completion made here carries the purchase it recorded. */
export type DrivenOrder = OrderRow | CompletedOrder;

/**
 * A little longer than the longest operation of the order's supplier: nobody else drives the order
 * meanwhile. Per supplier, so that a carrier order is not held for an eSIM Go lookup's minutes.
 */
export function leaseMs(ctx: AppContext, supplier: PackageSupplier): number {
  return ctx.carrier.operationMsFor(supplier) + 1_000;
}

/**
 * A claim counts as fresh this long after the statement that took it was sent: a carrier call
 * started within it ends before the lease does (half of leaseMs's one-second margin over the
 * operation). Later, the lease is renewed (and so checked) in the database before the call.
 */
const FRESH_CLAIM_MS = 500;

/** The lease this process takes: leaseMs long, held by this process (liveness.ts). */
export function leaseClaim(ctx: AppContext): LeaseClaim {
  const lease_ms = {
    carrier: leaseMs(ctx, "carrier"),
    airalo: leaseMs(ctx, "airalo"),
    esimgo: leaseMs(ctx, "esimgo"),
  };
  return { lease_ms, lease_holder: holderOf(ctx.liveness) };
}

/**
 * Whether the holder of `order`'s lease, taken at `leased_at` (performance.now() before the
 * claiming statement was sent), may call the carrier now. Not while this process's own heartbeat
 * is late (others may be about to take the order over: liveness.ts); and when the claim is not
 * fresh (a stall, a slow phase 1), only once the lease is renewed in the database, which also
 * finds it taken over. On the common path (a call right after the claim) no statement is sent.
 */
async function mayCallCarrier(ctx: AppContext, order: OrderRow, leased_at: number): Promise<boolean> {
  if (ctx.liveness !== undefined && !ctx.liveness.fresh()) return false;
  if (performance.now() - leased_at <= FRESH_CLAIM_MS) return true;
  const renewed = await renewOwnLease(
    ctx.db,
    order.order_id,
    order.lease_token,
    leaseMs(ctx, order.supplier),
  );
  // The renewal's round trip may itself have stalled past the heartbeat's margin.
  return renewed && (ctx.liveness === undefined || ctx.liveness.fresh());
}

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
