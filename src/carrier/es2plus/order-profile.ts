// A new eSIM's profile from the SM-DP+, exactly once over a protocol without idempotency keys
// (design.md, "A real carrier is two systems"):
//   1. one transaction stores our intent: an ICCID of the package taken from the operator's
//      inventory and a matching ID we generate; a second call for the reference finds it;
//   2. DownloadOrder(iccid, profileType), recorded before it is sent: done, or "8.2.1/3.3 already
//      in use" (SGP.22 5.3.1; some vendors say "8.2.1/3.7 unavailable") for our own ICCID after an
//      earlier DownloadOrder of ours (it allocated it: its answer was lost) -> go on; the same
//      answer to our first DownloadOrder names another requester's profile -> refused;
//   3. ConfirmOrder(iccid, matchingId, releaseFlag true): done, or "8.2.1/3.5 invalid transition"
//      (an earlier ConfirmOrder of ours went through) -> ReleaseProfile, which is done or says the
//      profile is already past RELEASED: either way released;
//   4. the intent is marked released; the activation code is LPA:1$<smdpAddress>$<matchingId>.
// A refusal while the SM-DP+ may hold the profile is stored before CancelOrder and finished first by
// every later call (finishRefusal), so a cancelled profile is never released after all.
// Every unknown outcome leaves the intent as it is, and the next call (a retry, the resolver)
// walks the same steps for the same ICCID and matching ID: never a second profile for one order.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { inTransaction } from "../../db/pool.ts";
import { crashPoint } from "../../lib/crash-points.ts";
import type { CarrierOutcome, ProvisionedProfile } from "../carrier.ts";
import {
  type IntentRow,
  insertIntent,
  lockReference,
  markDownloadOrdered,
  markRefused,
  markReleased,
  markWithdrawing,
  selectIntent,
  takeIccid,
} from "./es2plus.sql.ts";
import type { Es2Answer, Es2PlusClient } from "./es2plus-client.ts";
import { describeStatus, isStatus, normalizeIccid, STATUS, type StatusCodeData } from "./messages.ts";

export type Es2PlusDeps = {
  pool: pg.Pool;
  client: Es2PlusClient;
  /** The SM-DP+ address for activation codes when ConfirmOrder does not name one. */
  smdp_address: string;
  /** Sandbox only: adds ICCIDs to a package whose inventory ran out (the built-in SM-DP+). */
  restock?: (external_package_id: string) => Promise<void>;
  /**
   * The budget of the operation the calls belong to (Es2PlusCarrier sets one per provisioning or
   * cancel): every call of it gives up when it runs out, so the whole operation fits its lease.
   */
  deadline?: AbortSignal;
};

type Step = { kind: "done" } | { kind: "refused"; reason: string } | { kind: "unavailable"; reason: string };

export async function orderProfile(
  deps: Es2PlusDeps,
  reference: string,
  external_package_id: string,
): Promise<CarrierOutcome<ProvisionedProfile>> {
  let intent = await recordIntent(deps.pool, reference, external_package_id);
  if (intent === null && deps.restock) {
    await deps.restock(external_package_id);
    intent = await recordIntent(deps.pool, reference, external_package_id);
  }
  if (intent === null) {
    return { kind: "refused", reason: `no profile left in the inventory of package ${external_package_id}` };
  }
  if (intent.state === "refused")
    return { kind: "refused", reason: intent.refusal ?? "refused by the SM-DP+" };
  // A refusal decided earlier whose CancelOrder is not confirmed yet: finish taking the profile back
  // (DownloadOrder/ConfirmOrder again would read a cancelled profile's 3.3 (or 3.7) and 3.5 as
  // "ours, done").
  if (intent.refusal !== null) return finishRefusal(deps, intent, intent.refusal);
  if (intent.state === "released" || intent.state === "cancelled")
    return { kind: "ok", value: profileOf(intent) };

  const allocated = await downloadOrder(deps, intent);
  if (allocated.kind !== "done") return settleStep(deps.pool, reference, allocated);
  crashPoint("after_download_order");
  const confirmed = await confirmOrder(deps, intent);
  if (confirmed.kind === "refused") return finishRefusal(deps, intent, confirmed.reason);
  if (confirmed.kind !== "done") return settleStep(deps.pool, reference, confirmed);
  await markReleased(deps.pool, reference, deps.smdp_address);
  return { kind: "ok", value: profileOf({ ...intent, smdp_address: deps.smdp_address }) };
}

/** The stored intent, or a new one; null when the package's inventory is empty. */
async function recordIntent(
  pool: pg.Pool,
  reference: string,
  external_package_id: string,
): Promise<IntentRow | null> {
  const stored = await selectIntent(pool, reference);
  if (stored) return stored;
  return inTransaction(pool, async (client) => {
    await lockReference(client, reference);
    const raced = await selectIntent(client, reference);
    if (raced) return raced;
    const taken = await takeIccid(client, reference, external_package_id);
    if (taken === null) return null;
    return insertIntent(client, { reference, ...taken, matching_id: newMatchingId() });
  });
}

async function downloadOrder(deps: Es2PlusDeps, intent: IntentRow): Promise<Step> {
  const ordered_before = await markDownloadOrdered(deps.pool, intent.reference);
  const answer = await deps.client.call(
    "downloadOrder",
    { iccid: intent.iccid, profileType: intent.profile_type },
    deps.deadline,
  );
  if (answer.kind === "executed") {
    const iccid = typeof answer.body.iccid === "string" ? normalizeIccid(answer.body.iccid) : null;
    return iccid === intent.iccid
      ? { kind: "done" }
      : { kind: "unavailable", reason: "SM-DP+ DownloadOrder answered another ICCID" };
  }
  // Our ICCID, reserved to this reference alone: "not available" means our earlier call allocated
  // it. SGP.22 says 3.3 (already in use); some SM-DP+s say 3.7 (unavailable): both are ours, but
  // only if an earlier DownloadOrder of ours may have reached the SM-DP+. Before our first one it
  // is another requester's profile (an inventory shared or imported by mistake): going on would
  // confirm theirs with our matching ID, or sell a code the SM-DP+ never heard of. Refused, and
  // nothing is cancelled (it is not ours to cancel).
  if (answer.kind === "failed" && isTakenAnswer(answer.status.statusCodeData)) {
    if (ordered_before) return { kind: "done" };
    return {
      kind: "refused",
      reason:
        `SM-DP+ DownloadOrder: ${describeStatus(answer.status)}; ICCID ${intent.iccid} was not available ` +
        "before our first DownloadOrder of it: another requester's profile (check the inventory)",
    };
  }
  return notDone("DownloadOrder", answer);
}

/** DownloadOrder's "this ICCID is not available", in SGP.22's words (3.3) or a vendor's (3.7). */
function isTakenAnswer(data: StatusCodeData | undefined): boolean {
  return isStatus(data, STATUS.iccidInUse) || isStatus(data, STATUS.iccidUnavailable);
}

async function confirmOrder(deps: Es2PlusDeps, intent: IntentRow): Promise<Step> {
  const answer = await deps.client.call(
    "confirmOrder",
    { iccid: intent.iccid, matchingId: intent.matching_id, releaseFlag: true },
    deps.deadline,
  );
  if (answer.kind === "executed") {
    return answer.body.matchingId === undefined || answer.body.matchingId === intent.matching_id
      ? { kind: "done" }
      : { kind: "unavailable", reason: "SM-DP+ ConfirmOrder answered another matching ID" };
  }
  if (answer.kind === "failed" && isStatus(answer.status.statusCodeData, STATUS.invalidTransition)) {
    // Past ALLOCATED: our earlier ConfirmOrder went through. Released already, or released now.
    const release = await deps.client.call("releaseProfile", { iccid: intent.iccid }, deps.deadline);
    if (release.kind === "executed") return { kind: "done" };
    if (release.kind === "failed" && isStatus(release.status.statusCodeData, STATUS.invalidTransition)) {
      return { kind: "done" };
    }
    return notDone("ReleaseProfile", release);
  }
  return notDone("ConfirmOrder", answer);
}

/**
 * Refuses an order whose profile the SM-DP+ may hold: the refusal is stored first, then CancelOrder;
 * final only once the SM-DP+ confirms the withdrawal, until then the order stays pending.
 */
export async function finishRefusal(
  deps: Es2PlusDeps,
  intent: IntentRow,
  reason: string,
): Promise<CarrierOutcome<never>> {
  await markWithdrawing(deps.pool, intent.reference, reason);
  if (!(await withdrawProfile(deps, intent))) {
    return { kind: "unavailable", reason: `${reason}; CancelOrder not confirmed yet` };
  }
  await markRefused(deps.pool, intent.reference, reason);
  return { kind: "refused", reason };
}

/**
 * Takes back a profile whose order is refused. Its code never left us, so "8.2.1/3.5 invalid
 * transition" means it is cancelled already (or was never allocated) and "unknown ICCID" that there
 * is nothing to take back. Only a confirmed withdrawal makes the refusal final: until then the order
 * stays pending and is asked again.
 * A released profile (the bundle system refused the plan) holds our matching ID: CancelOrder names
 * it and returns the profile to the SM-DP+'s pool ("Available"; our inventory still never hands the
 * ICCID out again). A 3.10 "not this profile's matching ID" then means our earlier cancel returned it
 * and the SM-DP+ gave it out anew: withdrawn. One never released (ConfirmOrder refused) holds no
 * matching ID and is cancelled without one, so it is retired ("Unavailable"): returned to the pool
 * it could be allocated to another requester before a retry, whose cancel without a matching ID
 * would then take that requester's order.
 */
export async function withdrawProfile(deps: Es2PlusDeps, intent: IntentRow): Promise<boolean> {
  const released = intent.state === "released";
  const cancel = { iccid: intent.iccid, finalProfileStatusIndicator: released ? "Available" : "Unavailable" };
  let answer = await deps.client.call(
    "cancelOrder",
    { ...cancel, matchingId: intent.matching_id },
    deps.deadline,
  );
  if (answer.kind === "failed" && isStatus(answer.status.statusCodeData, STATUS.matchingIdMismatch)) {
    if (released) return true;
    // ConfirmOrder was refused: the allocated profile holds no matching ID, so it cannot match ours.
    answer = await deps.client.call("cancelOrder", cancel, deps.deadline);
  }
  if (answer.kind === "executed") return true;
  if (answer.kind === "unknown" || answer.retryable) return false;
  const data = answer.status.statusCodeData;
  return isStatus(data, STATUS.invalidTransition) || isStatus(data, STATUS.iccidUnknown);
}

function notDone(fn: string, answer: Exclude<Es2Answer, { kind: "executed" }>): Step {
  if (answer.kind === "unknown") return { kind: "unavailable", reason: `${fn}: ${answer.reason}` };
  const said = `SM-DP+ ${fn}: ${describeStatus(answer.status)}`;
  return answer.retryable ? { kind: "unavailable", reason: said } : { kind: "refused", reason: said };
}

async function settleStep(
  pool: pg.Pool,
  reference: string,
  step: Exclude<Step, { kind: "done" }>,
): Promise<CarrierOutcome<never>> {
  if (step.kind === "refused") await markRefused(pool, reference, step.reason);
  return step;
}

export function profileOf(intent: IntentRow): ProvisionedProfile {
  return {
    iccid: intent.iccid,
    smdp_address: intent.smdp_address ?? "",
    activation_code: intent.matching_id,
  };
}

/** SGP.22 matching IDs: uppercase letters, digits, hyphens; 4 groups of 5 from 100 random bits. */
export function newMatchingId(): string {
  // 32 symbols (no I, O, Y, Z), so 5 bits of each random byte pick one without bias.
  const alphabet = "0123456789ABCDEFGHJKLMNPQRSTUVWX";
  const bytes = randomBytes(20);
  const chars = [...bytes].map((byte) => alphabet[byte & 31]);
  return [0, 5, 10, 15].map((start) => chars.slice(start, start + 5).join("")).join("-");
}
