// The pull side of the eSIM lifecycle: eSIMs that can still change are asked about, oldest due
// first, each no more often than USAGE_SYNC_MIN_INTERVAL_S, at most USAGE_SYNC_MAX_PER_SECOND per
// process. It is what catches a signal the carrier never delivered (our process was down, the
// callback was lost) and the time-driven facts (an expiry warning). Each pull is applied like a
// callback (apply-signal.ts).
import type { Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import { deferWrite } from "../db/pool.ts";
import type { Database, PackageSupplier } from "../db/schema.ts";
import type { AppContext } from "../shared/context.ts";
import { applySignal, withJitter } from "./apply-signal.ts";
import { claimDueEsims, dueNow, markSyncFailed, releaseClaims } from "./sync-esims.sql.ts";

/** A failing eSIM is retried with doubling pauses, never more than this apart. */
const MAX_RETRY_AFTER_S = 6 * 3_600;

/**
 * A supplier that fails this many pulls in a row is down (or out of its rate limit): the rest of
 * its eSIMs in the round wait for the next one; other suppliers' eSIMs are still pulled.
 */
export const MAX_CONSECUTIVE_UNAVAILABLE = 3;

export type SyncRound = { claimed: number; synced: number; failed: number; released: number };

type Pulled = "synced" | "failed" | "unavailable";

/**
 * A top-up's completion, in its transaction, before the bundle is inserted (the lock order of a
 * signal: the eSIM, then its bundles): the eSIM is pulled at once, so a depleted or expired one
 * shows usable again within a sync tick of the 200, even when the carrier's callback is lost or
 * callbacks are off. The status is not re-derived here: that needs the eSIM's row lock, which
 * would make concurrent top-ups of one eSIM deadlock; the pull re-derives it (a pull that was
 * already in flight does too: the merge counts the new queued bundle).
 */
export async function pullSoon(trx: Executor, iccid: string): Promise<void> {
  await dueNow(trx, iccid);
}

/**
 * pullSoon sent in front of the transaction's next statement (deferWrite): a round trip fewer for
 * a top-up's completion. The lock order holds, since PostgreSQL runs what is sent in the order sent:
 * when the update writes (the eSIM was not due yet), the eSIM row is locked before that next
 * statement (the bundle insert) runs, as with pullSoon.
 */
export async function pullSoonLater(trx: Transaction<Database>, iccid: string): Promise<void> {
  await deferWrite(() => dueNow(trx, iccid));
}

/** One round: claims up to `limit` due eSIMs and pulls each, one at a time (the rate bound). */
export async function syncDueEsims(ctx: AppContext, limit: number): Promise<SyncRound> {
  // The claim outlives the whole round (every pull may take the carrier timeout) with a margin;
  // then a dead process's claims become due again.
  // A supplier's pull is two calls (Airalo: the eSIM and its usage), each with its own timeout.
  const pull_ms = 2 * Math.max(ctx.config.carrier_timeout_ms, ctx.config.supplier_timeout_ms);
  const lease_s = Math.ceil((limit * pull_ms) / 1000) + 30;
  const due = await claimDueEsims(ctx.db, limit, lease_s);
  const round: SyncRound = { claimed: due.length, synced: 0, failed: 0, released: 0 };
  // Per supplier: Airalo's usage calls are rate limited (its adapter's buckets answer unavailable
  // when spent), and one supplier down must not stop the pulls from the others.
  const unavailable = new Map<PackageSupplier, number>();
  const skipped: string[] = [];
  for (const { iccid, supplier } of due) {
    if ((unavailable.get(supplier) ?? 0) >= MAX_CONSECUTIVE_UNAVAILABLE) {
      skipped.push(iccid);
      continue;
    }
    const pulled = await syncEsim(ctx, iccid, supplier);
    if (pulled === "synced") round.synced++;
    else round.failed++;
    unavailable.set(supplier, pulled === "unavailable" ? (unavailable.get(supplier) ?? 0) + 1 : 0);
  }
  // Not one more timeout each: the unpulled claims are due again at once, for the next round.
  round.released = await releaseClaims(ctx.db, skipped);
  return round;
}

/** Pulls one eSIM's state and applies it; a failure is recorded on the eSIM. */
async function syncEsim(ctx: AppContext, iccid: string, supplier: PackageSupplier): Promise<Pulled> {
  const outcome = await ctx.carrier.esimState(iccid, supplier);
  let error: string;
  if (outcome.kind === "ok") {
    try {
      await applySignal(ctx, outcome.value, "pull");
      return "synced";
    } catch (cause) {
      // One eSIM whose signal cannot be applied must not jam the round: it is backed off like an
      // unreachable one, and the operator sees why in `esims unreachable`.
      error = `applying the signal failed: ${cause instanceof Error ? cause.message : String(cause)}`;
    }
  } else {
    error = outcome.kind === "not_found" ? "the carrier has no such ICCID" : outcome.reason;
  }
  await markSyncFailed(ctx.db, iccid, error, {
    interval_s: ctx.config.usage_sync_min_interval_s,
    max_s: MAX_RETRY_AFTER_S,
    jitter: withJitter(1),
  });
  return outcome.kind === "unavailable" ? "unavailable" : "failed";
}
