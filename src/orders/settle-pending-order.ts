// Operator use case: settle an order whose outcome stayed unknown (`npm run cli -- orders settle
// ORDER --completed|--failed`). The resolver never guesses, so an order the carrier never answers
// for would hold the partner's money forever; past PENDING_GIVE_UP_HOURS the operator decides.
//
// The operator's word never overrules the carrier's: the carrier is asked first, by reference,
// with a look-up that provisions nothing. Provisioned: only --completed, through the resolver's
// own completion (eSIM stored, hold posted, email queued). Refused, or no record at all: only
// --failed, which voids the hold; "no record" only once the order is past the give-up age, when
// no call of ours can still be in flight at the carrier. Unreachable: nothing is decided.
//
// Exactly once: the settlement takes the order's lease like any driver (the resolver, a retry),
// and records under a row lock that checks the lease is still its own, guarded by
// `status = 'pending'` like every transition.
import assert from "node:assert/strict";
import type { LookedUpOutcome } from "../carrier/carrier.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import type { FinishByType } from "./finish.ts";
import { leaseClaim } from "./lease.ts";
import type { OrderRow } from "./order.ts";
import { claimLease, lockOwnLease, orderById, releaseLease } from "./orders.sql.ts";
import { complete, fail } from "./record-outcome.ts";

export type Settlement = "completed" | "failed";

/** failure_code of an order the operator settled as failed after the carrier said it had no record. */
export const SETTLED_NEVER_PROVISIONED = "settled_never_provisioned";

export type SettlementRefusalCode =
  | "order_not_pending"
  | "order_busy"
  | "carrier_unavailable"
  | "carrier_disagrees"
  | "not_given_up_yet"
  | "group_order";

/** An expected refusal: the order is left exactly as it was. */
export class SettlementRefused extends Error {
  readonly code: SettlementRefusalCode;
  constructor(code: SettlementRefusalCode, message: string) {
    super(message);
    this.name = "SettlementRefused";
    this.code = code;
  }
}

type Decision =
  | { record: "completed"; value: Extract<LookedUpOutcome, { kind: "ok" }>["value"] }
  | {
      record: "failed";
      reason: string;
      failure_code: string;
    };

function ageHours(order: OrderRow): number {
  return (Date.now() - new Date(order.created_at).getTime()) / 3_600_000;
}

/** What the carrier's answer allows; throws SettlementRefused when it contradicts the operator. */
function decide(ctx: AppContext, order: OrderRow, carrier: LookedUpOutcome, wanted: Settlement): Decision {
  const id = order.order_id;
  if (carrier.kind === "unavailable") {
    throw new SettlementRefused(
      "carrier_unavailable",
      `The carrier could not be asked about ${id}: ${carrier.reason}.`,
    );
  }
  if (carrier.kind === "ok") {
    if (order.type === "esim" && !("smdp_address" in carrier.value)) {
      throw new SettlementRefused("carrier_unavailable", `The carrier's answer for ${id} is not a profile.`);
    }
    if (wanted === "completed") return { record: "completed", value: carrier.value };
    throw new SettlementRefused(
      "carrier_disagrees",
      `The carrier provisioned ${id}: only --completed is allowed.`,
    );
  }
  if (wanted === "completed") {
    const said = carrier.kind === "refused" ? "refused it" : "has no record of it (never provisioned)";
    throw new SettlementRefused(
      "carrier_disagrees",
      `The carrier ${said}: only --failed is allowed for ${id}.`,
    );
  }
  if (carrier.kind === "refused") {
    return { record: "failed", reason: carrier.reason, failure_code: "carrier_error" };
  }
  const give_up_hours = ctx.config.pending_give_up_hours;
  if (ageHours(order) < give_up_hours) {
    throw new SettlementRefused(
      "not_given_up_yet",
      `The carrier has no record of ${id} yet, but it is younger than PENDING_GIVE_UP_HOURS (${give_up_hours} h): ` +
        "a call may still be in flight; the resolver keeps asking.",
    );
  }
  return {
    record: "failed",
    reason: "settled by the operator: the carrier has no record of this reference",
    failure_code: SETTLED_NEVER_PROVISIONED,
  };
}

/** Takes the order's lease, or says why not (already final, or someone is driving it now). */
export async function takeLease(ctx: AppContext, order_id: string): Promise<OrderRow> {
  const claimed = await claimLease(ctx.db, order_id, leaseClaim(ctx));
  if (claimed && claimed.quantity > 1) {
    // Each eSIM of a group has its own carrier reference and ends on its own: the resolver asks the
    // carrier about each, and past PENDING_FAIL_AFTER_HOURS ends the lines without a record
    // (give-up-order.ts). One word for the whole order could not be the carrier's for every line.
    await releaseLease(ctx.db, order_id, claimed.lease_token);
    throw new SettlementRefused(
      "group_order",
      `Order ${order_id} is a group order: the resolver settles each of its eSIMs with the carrier's word.`,
    );
  }
  if (claimed) return claimed;
  const order = await orderById(ctx.db, order_id);
  if (!order) throw new ApiError("order_not_found", `No order ${order_id}.`);
  if (order.status !== "pending") {
    throw new SettlementRefused("order_not_pending", `Order ${order_id} is already ${order.status}.`);
  }
  throw new SettlementRefused(
    "order_busy",
    `Order ${order_id} is being driven right now; try again in a minute.`,
  );
}

/**
 * Settles one pending order as the carrier allows, finishing it with the steps of its type (as
 * the resolver would); returns the order as it now is.
 */
export async function settlePendingOrder(
  ctx: AppContext,
  order_id: string,
  wanted: Settlement,
  finishers: FinishByType,
): Promise<OrderRow> {
  const order = await takeLease(ctx, order_id);
  try {
    const decision = decide(ctx, order, await ctx.carrier.lookUpOutcome(order_id, order.supplier), wanted);
    const finish = finishers[order.type];
    await ctx.db.transaction().execute(async (trx) => {
      if (!(await lockOwnLease(trx, order_id, order.lease_token))) {
        throw new SettlementRefused("order_busy", `Order ${order_id} was taken over meanwhile; try again.`);
      }
      if (decision.record === "completed")
        await complete(trx, order, decision.value, finish, ctx.config.usage_sync_min_interval_s);
      else await fail(trx, order, decision.reason, finish, decision.failure_code);
    });
  } finally {
    // A no-op once the order is final; after a refusal, the resolver may drive it again at once.
    await releaseLease(ctx.db, order_id, order.lease_token);
  }
  const settled = await orderById(ctx.db, order_id);
  assert.ok(settled, "the order still exists");
  return settled;
}
