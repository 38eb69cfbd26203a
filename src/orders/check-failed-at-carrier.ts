// The follow-up on orders failed without the carrier's word (issue 32 review; migration 0036): the
// resolver's last look that could not ask the carrier, an operator's `failed` settle while the
// carrier was unreachable or had no record yet, a cancel the carrier did not confirm. Their holds
// are voided at once, so if the carrier did make the profile or bundle after all (its answer lost,
// a call of a dead process landing late) the partner would have an eSIM it never paid for. Once
// CARRIER_CHECK_AFTER_S has passed (far longer than any call of ours can be in flight), each is
// looked up again by reference and whatever the carrier made is cancelled; the outcome is kept on
// the order (carrier_check). What the carrier made and will not cancel (an eSIM installed
// meanwhile), or what it never answered for within MAX_CHECK_ATTEMPTS, stays `refused` /
// `unavailable`: the operator's to reconcile (an error log line names each; README).
import type { CancelOutcome } from "../carrier/carrier.ts";
import type { AppContext } from "../shared/context.ts";
import {
  type CarrierCheckWord,
  claimDueChecks,
  type DueCheck,
  settleCarrierCheck,
} from "./carrier-checks.sql.ts";

/** How long after the failure the carrier is asked again: no call of ours is in flight by then. */
export const CARRIER_CHECK_AFTER_S = 10 * 60;
/** Between looks while the carrier cannot be asked: the run's own period (every ten minutes). */
const CHECK_RETRY_S = 10 * 60;
/** A day of looks ten minutes apart; then the order is left `unavailable` for the operator. */
const MAX_CHECK_ATTEMPTS = 144;
/** Orders looked at per run: each is one or two carrier calls. */
const MAX_CHECKS_PER_RUN = 50;

/** What the carrier's record of the order's reference leaves of it; null: ask again later. */
async function checkOne(ctx: AppContext, check: DueCheck): Promise<CarrierCheckWord | null> {
  const carrier = await ctx.carrier.lookUpOutcome(check.order_id, check.supplier);
  if (carrier.kind === "not_found" || carrier.kind === "refused") return "nothing_made";
  if (carrier.kind === "unavailable") return null;
  const request = { reference: check.order_id, iccid: carrier.value.iccid, supplier: check.supplier };
  const cancelled: CancelOutcome =
    check.type === "esim"
      ? await ctx.carrier.cancelProfile(request)
      : await ctx.carrier.cancelBundle(request);
  if (cancelled.kind === "ok") return "cancelled";
  return cancelled.kind === "refused" ? "refused" : null;
}

/** Looks up the due orders; returns how many got a final word this run. */
export async function checkFailedAtCarrier(
  ctx: AppContext,
  log: (message: string) => void,
  limit = MAX_CHECKS_PER_RUN,
): Promise<number> {
  const due = await claimDueChecks(ctx.db, limit, CHECK_RETRY_S);
  let settled = 0;
  for (const check of due) {
    const word =
      (await checkOne(ctx, check)) ??
      (check.carrier_check_attempts >= MAX_CHECK_ATTEMPTS ? "unavailable" : null);
    if (word === null) continue;
    await settleCarrierCheck(ctx.db, check.order_id, word);
    settled++;
    if (word === "refused" || word === "unavailable") {
      log(
        `order ${check.order_id} failed (its hold voided) but the carrier ${word === "refused" ? "made it and will not cancel it" : "never answered for it"}: ` +
          "reconcile it with the carrier (the partner may hold an eSIM it did not pay for)",
      );
    }
  }
  return settled;
}
