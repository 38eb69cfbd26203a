// The resolver's last look at an order (issue 32): one pending for PENDING_FAIL_AFTER_HOURS, whose
// carrier never answered for it (the sandbox's unavailable@carrier.test, a carrier down for days),
// ends instead of holding the partner's money forever. The carrier is asked one last time, by
// reference, with a look-up that provisions nothing, and its record wins: what it made is
// completed (the partner gets the eSIM it paid for), what it refused fails; with no record, or no
// answer at all, the order fails as `given_up` and its hold is voided. So long after the order was
// placed no call of ours can still be in flight at the carrier (each ends within CARRIER_TIMEOUT_MS),
// but with no answer at all the carrier may have made the profile and lost its reply: such an order
// is owed a later look (check-failed-at-carrier.ts), which cancels whatever the carrier made. Exactly once, under the lease the sweep claimed, like
// every driver.
import type { LookedUpOutcome } from "../carrier/carrier.ts";
import type { AppContext } from "../shared/context.ts";
import { oweCarrierCheck } from "./carrier-checks.sql.ts";
import { CARRIER_CHECK_AFTER_S } from "./check-failed-at-carrier.ts";
import { giveUpGroup } from "./drive-group.ts";
import type { OrderFinish } from "./finish.ts";
import type { OrderRow } from "./order.ts";
import { lockOwnLease, releaseLease } from "./orders.sql.ts";
import { complete, fail } from "./record-outcome.ts";

/** failure_code of an order the resolver gave up on (the partner sees `failed`, its hold voided). */
export const GIVEN_UP = "given_up";

/** Whether the resolver gives this order up rather than asking the carrier again. */
export function pastFailAge(ctx: AppContext, order: OrderRow): boolean {
  const age_ms = Date.now() - new Date(order.created_at).getTime();
  return age_ms >= ctx.config.pending_fail_after_hours * 3_600_000;
}

function detailOf(ctx: AppContext, carrier: LookedUpOutcome): string {
  const said =
    carrier.kind === "unavailable" ? `could not be asked (${carrier.reason})` : "has no record of it";
  return (
    `the carrier did not answer for ${ctx.config.pending_fail_after_hours} h (PENDING_FAIL_AFTER_HOURS) ` +
    `and ${said}: given up, the hold voided`
  );
}

/**
 * Ends a leased order past the fail age, whose lease was claimed at `leased_at`; returns what it
 * became (`pending` if it was taken over). A group order is looked at line by line (drive-group.ts).
 */
export async function giveUpOrder(
  ctx: AppContext,
  order: OrderRow,
  finish: OrderFinish,
  leased_at: number,
): Promise<"completed" | "failed" | "pending"> {
  if (order.quantity > 1) {
    const detail = (carrier: LookedUpOutcome) => detailOf(ctx, carrier);
    return giveUpGroup(ctx, order, finish, leased_at, { failure_code: GIVEN_UP, detail });
  }
  const carrier = await ctx.carrier.lookUpOutcome(order.order_id, order.supplier);
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      if (!(await lockOwnLease(trx, order.order_id, order.lease_token))) return "pending";
      if (carrier.kind === "ok") {
        const sync_s = ctx.config.usage_sync_min_interval_s;
        return (await complete(trx, order, carrier.value, finish, sync_s)) ? "completed" : "pending";
      }
      if (carrier.kind === "refused")
        return (await fail(trx, order, carrier.reason, finish)) ? "failed" : "pending";
      if (!(await fail(trx, order, detailOf(ctx, carrier), finish, GIVEN_UP))) return "pending";
      // Without the carrier's word it may have made the profile (its answer lost): looked up again later.
      if (carrier.kind === "unavailable") await oweCarrierCheck(trx, order.order_id, CARRIER_CHECK_AFTER_S);
      return "failed";
    });
  } finally {
    await releaseLease(ctx.db, order.order_id, order.lease_token);
  }
}
