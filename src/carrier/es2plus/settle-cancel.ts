// An operator's verdict on a held cancel (cancel-profile.ts): CancelOrder answered 8.2.1/3.5 after
// our earlier CancelOrder's answer was lost, and no download notification came. The operator asks
// the SM-DP+'s own operator (its portal, its support) what became of the ICCID, then records it:
//   cancelled -> the intent is cancelled: the refund's next attempt finishes (and credits, once);
//   installed -> the hold is lifted and nothing of ours is in flight: the next attempt asks
//                CancelOrder afresh, whose 3.5 then refuses the refund (esim_installed).
// A download notification outranks the operator: "cancelled" for a profile the SM-DP+ reported
// downloaded is not recorded. Also the listing of held cancels, for the operator's console and CLI.
import type pg from "pg";
import type { CancelRequest, CancelVerdict, SettledCancel } from "../carrier.ts";
import {
  type AmbiguousCancel,
  clearCancelRequested,
  countAmbiguousCancels,
  markCancelled,
  selectAmbiguousCancels,
  selectIntent,
  wasDownloaded,
} from "./es2plus.sql.ts";

export type { AmbiguousCancel };

export async function settleHeldCancel(
  pool: pg.Pool,
  request: CancelRequest,
  verdict: CancelVerdict,
): Promise<SettledCancel> {
  const intent = await selectIntent(pool, request.reference);
  if (intent === null || intent.iccid !== request.iccid) return "not_held";
  if (intent.state !== "released" || intent.cancel_ambiguous_at === null) return "not_held";
  if (verdict === "installed") {
    await clearCancelRequested(pool, intent.reference);
    return "settled";
  }
  if (await wasDownloaded(pool, intent.iccid)) return "downloaded";
  await markCancelled(pool, intent.reference);
  return "settled";
}

/** Held cancels, oldest first: each is a refund that stays pending until it is settled. */
export function heldCancels(pool: pg.Pool, limit: number): Promise<AmbiguousCancel[]> {
  return selectAmbiguousCancels(pool, limit);
}

export function heldCancelCount(pool: pg.Pool): Promise<number> {
  return countAmbiguousCancels(pool);
}
