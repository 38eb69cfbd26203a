// A refund's cancellation of a released profile: ES2+ CancelOrder (finalProfileStatusIndicator
// "Unavailable": an ICCID of ours is never handed out twice). The SM-DP+ refuses it with
// "8.2.1/3.5 invalid transition" once the profile was downloaded or installed: the refund is
// refused (esim_installed), as the lifecycle says. Idempotent by our reference: a cancel whose
// answer was lost is asked again, and its 3.5 then means "cancelled by us", told apart from
// "downloaded meanwhile" by cancel_requested_at and the SM-DP+'s own download notifications.
import type { CancelOutcome, CancelRequest } from "../carrier.ts";
import {
  clearCancelRequested,
  markCancelled,
  markCancelRequested,
  selectIntent,
  wasDownloaded,
} from "./es2plus.sql.ts";
import { describeStatus, isStatus, STATUS } from "./messages.ts";
import type { Es2PlusDeps } from "./order-profile.ts";

export async function cancelProfileOrder(deps: Es2PlusDeps, request: CancelRequest): Promise<CancelOutcome> {
  const intent = await selectIntent(deps.pool, request.reference);
  if (intent === null || intent.iccid !== request.iccid) {
    return { kind: "refused", reason: "no profile of this order at the SM-DP+" };
  }
  if (intent.state === "cancelled") return { kind: "ok" };
  if (intent.state !== "released") return { kind: "refused", reason: `profile order is ${intent.state}` };
  const asked_before = intent.cancel_requested_at !== null;
  await markCancelRequested(deps.pool, intent.reference);
  const answer = await deps.client.call(
    "cancelOrder",
    { iccid: intent.iccid, matchingId: intent.matching_id, finalProfileStatusIndicator: "Unavailable" },
    deps.deadline,
  );
  if (answer.kind === "unknown") return { kind: "unavailable", reason: `CancelOrder: ${answer.reason}` };
  const cancelled =
    answer.kind === "executed" ||
    (isStatus(answer.status.statusCodeData, STATUS.invalidTransition) &&
      asked_before &&
      !(await wasDownloaded(deps.pool, intent.iccid)));
  if (cancelled) {
    await markCancelled(deps.pool, intent.reference);
    return { kind: "ok" };
  }
  if (answer.kind === "failed" && answer.retryable) {
    return { kind: "unavailable", reason: `SM-DP+ CancelOrder: ${describeStatus(answer.status)}` };
  }
  // A definite refusal: our CancelOrder did not happen, so a later refund's 3.5 must not read as
  // "cancelled by our earlier call" (the order stays completed and may be asked to refund again).
  await clearCancelRequested(deps.pool, intent.reference);
  if (answer.kind === "failed" && isStatus(answer.status.statusCodeData, STATUS.invalidTransition)) {
    return { kind: "refused", reason: "esim_installed" };
  }
  return { kind: "refused", reason: `SM-DP+ CancelOrder: ${describeStatus(answer.status)}` };
}
