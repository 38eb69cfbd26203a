// An order's lease (design.md step 2): whoever drives a pending order (the request that created it,
// a retry finding it abandoned, the resolver, the operator's settlement) holds its lease while a
// carrier call may be in flight, so nobody else calls the carrier for it meanwhile.
import type { PackageSupplier } from "../db/schema.ts";
import type { AppContext } from "../shared/context.ts";
import { holderOf } from "../shared/liveness.ts";
import type { OrderRow } from "./order.ts";
import { type LeaseClaim, renewOwnLease } from "./orders.sql.ts";

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
export async function mayCallCarrier(ctx: AppContext, order: OrderRow, leased_at: number): Promise<boolean> {
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
