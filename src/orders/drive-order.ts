// Driving a pending order to its outcome (design.md steps 2 and 3): ask the carrier with the
// order id as reference, then record what it said. Used by the request that created the order,
// by a retry that finds it abandoned, and by the resolver job: the carrier is idempotent by
// reference and every transition below is guarded by `status = 'pending'`, so however many of
// them race, the order completes or fails exactly once and is charged at most once.
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import type { CarrierOutcome, ProvisionedProfile, TopUpResult } from "../carrier/carrier.ts";
import type { Database } from "../db/schema.ts";
import { esimChanged } from "../esims/esim-cache.ts";
import { pullSoon } from "../esims/sync-esims.ts";
import { recordEvent } from "../events/record-event.ts";
import { resolveHold } from "../ledger/transfers.ts";
import type { AppContext } from "../shared/context.ts";
import { crashPoint } from "../shared/crash-points.ts";
import { esimProfile } from "./esims.sql.ts";
import type { OrderFinish } from "./finish.ts";
import type { OrderRow } from "./order.ts";
import {
  claimLease,
  insertBundle,
  insertEsim,
  insertPurchase,
  markCompleted,
  markFailed,
  orderById,
  releaseLease,
} from "./orders.sql.ts";
import { renderOrder } from "./render-order.ts";

/** A little longer than one carrier call: nobody else drives the order meanwhile. */
export function leaseMs(ctx: AppContext): number {
  return ctx.config.carrier_timeout_ms + 1_000;
}

async function askCarrier(
  ctx: AppContext,
  order: OrderRow,
): Promise<CarrierOutcome<ProvisionedProfile | TopUpResult>> {
  // The order's own copy of the terms, never the catalog row: an import may have changed it since.
  if (order.type === "esim") {
    return ctx.carrier.provisionProfile({
      reference: order.order_id,
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
 * a profile just sold has nothing to report yet).
 */
export async function complete(
  trx: Transaction<Database>,
  order: OrderRow,
  value: ProvisionedProfile | TopUpResult,
  finish: OrderFinish,
  first_sync_after_s: number,
) {
  const iccid = order.type === "esim" ? (value as ProvisionedProfile).iccid : order.iccid!;
  if (!(await markCompleted(trx, order.order_id, iccid))) return;
  let profile: { smdp_address: string; activation_code: string };
  if (order.type === "esim") {
    profile = value as ProvisionedProfile;
    await insertEsim(trx, {
      ...profile,
      iccid,
      partner_id: order.partner_id,
      order_id: order.order_id,
      package_id: order.package_id,
      first_sync_after_s,
    });
  } else {
    const esim = await esimProfile(trx, iccid);
    assert.ok(esim, `top-up ${order.order_id} is for a known eSIM`);
    profile = esim;
    await pullSoon(trx, iccid);
  }
  const purchase = {
    order_id: order.order_id,
    position: 0,
    package_id: order.package_id,
    iccid,
    smdp_address: profile.smdp_address,
    activation_code: profile.activation_code,
    start_date: order.start_date,
  };
  await insertPurchase(trx, purchase);
  await insertBundle(trx, order, iccid);
  assert.ok(await resolveHold(trx, order.order_id, "posted"), "a pending order has a pending hold to post");
  // The Order as GET /v1/orders/{orderID} now renders it, from what this transaction wrote: no read.
  const data = renderOrder({ ...order, status: "completed", iccid }, [purchase]);
  await recordEvent(trx, { partner_id: order.partner_id, type: "order.completed", data });
  // Only here, so only on the first completion.
  await finish.completed(trx, order.order_id);
}

/** Records a definitive failure and voids the hold: exactly once, guarded by the status. */
export async function fail(
  trx: Transaction<Database>,
  order: OrderRow,
  reason: string,
  finish: OrderFinish,
  failure_code = "carrier_error",
) {
  if (!(await markFailed(trx, order.order_id, failure_code, reason))) return;
  assert.ok(await resolveHold(trx, order.order_id, "voided"), "a pending order has a pending hold to void");
  const data = renderOrder({ ...order, status: "failed" }, []);
  await recordEvent(trx, { partner_id: order.partner_id, type: "order.failed", data });
  await finish.failed(trx, order.order_id);
}

/**
 * Calls the carrier for an order whose lease the caller holds, records the outcome with the
 * steps `finish` adds for this order's type, and returns the order.
 */
export async function driveOrder(ctx: AppContext, order: OrderRow, finish: OrderFinish): Promise<OrderRow> {
  assert.equal(order.status, "pending");
  const outcome = await askCarrier(ctx, order);
  crashPoint("after_carrier_answer");
  if (outcome.kind === "ok") {
    await ctx.db
      .transaction()
      .execute((trx) => complete(trx, order, outcome.value, finish, ctx.config.usage_sync_min_interval_s));
    crashPoint("after_completion_commit");
    // A top-up's new bundle: other processes hear of it by NOTIFY, this one drops its copy now.
    if (order.iccid !== null) esimChanged(ctx.pool, order.iccid);
  } else if (outcome.kind === "refused") {
    await ctx.db.transaction().execute((trx) => fail(trx, order, outcome.reason, finish));
  } else {
    // Unknown outcome: let the next retry (or the resolver) ask again at once with the same reference.
    await releaseLease(ctx.db, order.order_id, order.lease_token);
  }
  const after = await orderById(ctx.db, order.order_id);
  assert.ok(after, "the order still exists");
  return after;
}

/** Drives an abandoned pending order if nobody holds its lease; null when someone else is driving it. */
export async function driveIfAbandoned(
  ctx: AppContext,
  order_id: string,
  finish: OrderFinish,
): Promise<OrderRow | null> {
  const claimed = await claimLease(ctx.db, order_id, leaseMs(ctx));
  return claimed ? driveOrder(ctx, claimed, finish) : null;
}
