// The refund sweep: refunds whose driver died (a crash between the intent and the commit) or whose
// carrier did not answer are finished here, like pending purchases by their resolver. Every
// REFUND_SWEEP_INTERVAL_MS each worker claims due intents (lease expired) with FOR UPDATE SKIP
// LOCKED, leases each for its turn, and drives each whose lease it still holds when its turn comes
// (renewed then, for one operation): no job row per refund, and a turn never starts on a lease
// another driver may hold. An unknown carrier answer backs the refund off (1 s doubling to 5 min),
// and so does a top-up of the eSIM still pending (the carrier's cancel is asked again each time).
import type { Logger } from "pino";
import type { AppContext } from "../shared/context.ts";
import { holderOf } from "../shared/liveness.ts";
import { driveRefund } from "./drive-refund.ts";
import { refundLeaseMs } from "./refund-order.ts";
import { claimDueRefunds, renewLease } from "./refunds.sql.ts";

/** Refunds claimed per round; each is one carrier operation, so each turn stays within its lease. */
const MAX_PER_ROUND = 10;
const SWEEP_REQUEST_ID = "refund-sweep";

export type SweepRound = { claimed: number; finished: number; unknown: number };

/** One round: claim, then drive each claimed refund in turn. */
export async function sweepRefunds(ctx: AppContext, limit = MAX_PER_ROUND): Promise<SweepRound> {
  // Each refund's lease covers its turn: it waits for the ones before it (claimDueRefunds). Its
  // turn starts with a full lease, or not at all if the ones before took so long that it ran out.
  const lease_ms = refundLeaseMs(ctx);
  const leases = await claimDueRefunds(ctx.db, limit, lease_ms, holderOf(ctx.liveness));
  let finished = 0;
  for (const lease of leases) {
    if (!(await renewLease(ctx.db, lease, lease_ms))) continue;
    const driven = await driveRefund(ctx, lease, SWEEP_REQUEST_ID, true);
    if (driven !== null && driven !== "topup_pending") finished++;
  }
  return { claimed: leases.length, finished, unknown: leases.length - finished };
}

/** Runs the sweep in this process; a round that runs long delays the next (never two at once). */
export function startRefundSweep(ctx: AppContext, log: Logger): { close: () => Promise<void> } {
  let round: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    if (round !== null) return;
    round = sweepRefunds(ctx)
      .then((done) => {
        if (done.claimed > 0) log.info(done, "refund sweep round");
      })
      .catch((error: unknown) => log.warn({ err: error }, "refund sweep round failed"))
      .finally(() => {
        round = null;
      });
  }, ctx.config.refund_sweep_interval_ms);
  timer.unref();
  return {
    close: async () => {
      clearInterval(timer);
      await round;
    },
  };
}
