// A refund's cancellation of a released profile: ES2+ CancelOrder with finalProfileStatusIndicator
// "Available" (SGP.22 5.3.3; pySim es2p.py:166): the SM-DP+ executes CancelOrder only for a profile never downloaded
// (ALLOCATED to RELEASED), and such a profile goes back to its pool with its matching ID cleared, so
// the activation code the partner holds is dead and nothing is burnt for a refund. (Our own
// inventory does not hand the ICCID out again: an eSIM is keyed by its ICCID in a partner's history.)
//
// Idempotent by our reference: a cancel whose answer was lost is asked again. Its answer then may be
// "8.2.1/3.5 invalid transition", which ES2+ v2 gives both for "already cancelled" (by our lost
// call) and for "downloaded" (the traveller took it meanwhile); the code cannot tell them apart:
//   - 8.2.6/3.10 (another matching ID) to a repeat: our lost cancel returned the profile to the
//     pool and the SM-DP+ gave it out anew -> cancelled;
//   - 3.5 to a first cancel (none of ours in flight): the profile is past RELEASED, on a device ->
//     refused (esim_installed);
//   - 3.5 to a repeat, and the SM-DP+ told us of a download (HandleDownloadProgressInfo 3, 4, 5) ->
//     refused (esim_installed);
//   - 3.5 to a repeat and no download notification: ambiguous. Never read as "cancelled" (a slow
//     notification would otherwise credit a refund for a profile on a phone): the cancel is held
//     (cancel_ambiguous_at) and answered unavailable, so the refund stays pending and credits
//     nothing. Asking the SM-DP+ again cannot help (it answers 3.5 either way); the hold is settled
//     from later evidence only: a download notification refuses it, an operator's decision after
//     checking with the SM-DP+ settles it (settle-cancel.ts). Silence never credits.
import type { CancelOutcome, CancelRequest } from "../carrier.ts";
import {
  clearCancelRequested,
  type IntentRow,
  markCancelAmbiguous,
  markCancelled,
  markCancelRequested,
  selectIntent,
  wasDownloaded,
} from "./es2plus.sql.ts";
import { describeStatus, isStatus, STATUS } from "./messages.ts";
import type { Es2PlusDeps } from "./order-profile.ts";

/** The reason of a held cancel's answer; the refund keeps it as its last error for the operator. */
export const AMBIGUOUS_CANCEL =
  "cancel held: CancelOrder answered 8.2.1/3.5 (cancelled or downloaded) after our earlier CancelOrder's " +
  "answer was lost, and no download notification arrived; settled by a download notification or by " +
  "an operator (npm run cli -- refunds settle)";

export async function cancelProfileOrder(deps: Es2PlusDeps, request: CancelRequest): Promise<CancelOutcome> {
  const intent = await selectIntent(deps.pool, request.reference);
  if (intent === null || intent.iccid !== request.iccid) {
    return { kind: "refused", reason: "no profile of this order at the SM-DP+" };
  }
  if (intent.state === "cancelled") return { kind: "ok" };
  if (intent.state !== "released") return { kind: "refused", reason: `profile order is ${intent.state}` };
  if (intent.cancel_ambiguous_at !== null) return heldCancel(deps, intent);
  const asked_before = intent.cancel_requested_at !== null;
  await markCancelRequested(deps.pool, intent.reference);
  const answer = await deps.client.call(
    "cancelOrder",
    { iccid: intent.iccid, matchingId: intent.matching_id, finalProfileStatusIndicator: "Available" },
    deps.deadline,
  );
  if (answer.kind === "unknown") return { kind: "unavailable", reason: `CancelOrder: ${answer.reason}` };
  if (answer.kind === "executed") {
    await markCancelled(deps.pool, intent.reference);
    return { kind: "ok" };
  }
  if (answer.retryable) {
    return { kind: "unavailable", reason: `SM-DP+ CancelOrder: ${describeStatus(answer.status)}` };
  }
  if (asked_before && isStatus(answer.status.statusCodeData, STATUS.matchingIdMismatch)) {
    // Our profile was released under our matching ID; only a CancelOrder to Available clears it, and
    // the SM-DP+ has given the profile out anew since: our lost cancel went through, and the code
    // the partner holds is dead (a downloaded profile is never given out again).
    await markCancelled(deps.pool, intent.reference);
    return { kind: "ok" };
  }
  if (isStatus(answer.status.statusCodeData, STATUS.invalidTransition)) {
    if (asked_before && !(await wasDownloaded(deps.pool, intent.iccid))) {
      await markCancelAmbiguous(deps.pool, intent.reference);
      return { kind: "unavailable", reason: AMBIGUOUS_CANCEL };
    }
    await clearCancelRequested(deps.pool, intent.reference);
    return { kind: "refused", reason: "esim_installed" };
  }
  // A definite refusal: our CancelOrder did not happen, so a later refund's 3.5 must not read as
  // "cancelled by our earlier call" (the order stays completed and may be asked to refund again).
  await clearCancelRequested(deps.pool, intent.reference);
  return { kind: "refused", reason: `SM-DP+ CancelOrder: ${describeStatus(answer.status)}` };
}

/**
 * A held cancel, asked again (a retry, the refund sweep): no call, since the SM-DP+ would answer the
 * same 3.5. A download notification received since refuses the refund; otherwise it stays held.
 */
async function heldCancel(deps: Es2PlusDeps, intent: IntentRow): Promise<CancelOutcome> {
  if (await wasDownloaded(deps.pool, intent.iccid)) {
    await clearCancelRequested(deps.pool, intent.reference);
    return { kind: "refused", reason: "esim_installed" };
  }
  return { kind: "unavailable", reason: AMBIGUOUS_CANCEL };
}
