// One purchase or top-up at Airalo, exactly once over an API without idempotency keys
// (docs/suppliers/airalo.md §6, "No idempotency or client-reference uniqueness is documented"):
//
//   1. our intent is stored (airalo_orders) before anything is sent; a second call for the
//      reference finds it;
//   2. a reference already answered or refused answers from the row, without calling Airalo;
//   3. a reference whose POST may have reached Airalo (`requested_at` set: sent, and neither
//      answered nor said "not made") is looked up first (recovery.ts). Found: that order is ours.
//      Not found: nothing is posted again until the POST is older than the in-flight window
//      (`in_flight_ms`, 15 minutes by default): a request from a process that died mid-call, or one
//      queued at Airalo, could still land before then, and a lookup cannot see the future;
//   4. the right to POST is one conditional UPDATE (claimPost): of two callers racing (a retry and
//      the resolver, two processes), one posts and the other answers "unavailable";
//   5. the answer: an order is recorded; a refusal is recorded (nothing made); "not made" (429,
//      401, code 13) releases the claim; anything else leaves it, so the next call looks up first.

import type pg from "pg";
import type { CarrierOutcome, ProvisionedProfile, TopUpResult } from "../carrier.ts";
import {
  answeredTopUpCount,
  claimedOrderIds,
  claimPost,
  databaseNow,
  type IntentRow,
  recordAnswer,
  recordRefusal,
  releaseClaim,
  unansweredTopUps,
} from "./airalo.sql.ts";
import { type AiraloClient, dataOf, type Verdict } from "./client.ts";
import { findOrder, type Recovered } from "./recovery.ts";
import { type AiraloOrder, parseOrder, parseProfile } from "./shapes.ts";

export type PlaceDeps = { pool: pg.Pool; client: AiraloClient; in_flight_ms: number };

type Value = ProvisionedProfile | TopUpResult;

/** The outcome a stored intent already holds, or null when it holds none yet. */
export function settledOutcome(intent: IntentRow): CarrierOutcome<Value> | null {
  if (intent.refusal !== null) return { kind: "refused", reason: intent.refusal };
  if (intent.airalo_order_id === null) return null;
  if (intent.kind === "topup") return { kind: "ok", value: { iccid: intent.iccid! } };
  return {
    kind: "ok",
    value: { iccid: intent.iccid!, smdp_address: intent.smdp_address!, activation_code: intent.matching_id! },
  };
}

export async function placeOnce(
  deps: PlaceDeps,
  intent: IntentRow,
  post: () => Promise<Verdict>,
): Promise<CarrierOutcome<Value>> {
  const settled = settledOutcome(intent);
  if (settled !== null) return settled;
  const seen = intent.requested_at;
  if (seen !== null) {
    const recovered = await recover(deps, intent);
    if (recovered.kind !== "absent") return recovered.outcome;
    const waited_ms = (await databaseNow(deps.pool)).getTime() - seen.getTime();
    if (waited_ms < deps.in_flight_ms) {
      return {
        kind: "unavailable",
        reason:
          `Airalo has no order for ${intent.reference} yet, but our POST of ${seen.toISOString()} may still ` +
          `land; not posted again before ${Math.ceil(deps.in_flight_ms / 60_000)} min have passed`,
      };
    }
  }
  if (!(await claimPost(deps.pool, intent.reference, intent.posts))) {
    return {
      kind: "unavailable",
      reason: `another caller is placing ${intent.reference} at Airalo right now`,
    };
  }
  return settleAnswer(deps, intent, await post());
}

async function settleAnswer(
  deps: PlaceDeps,
  intent: IntentRow,
  verdict: Verdict,
): Promise<CarrierOutcome<Value>> {
  switch (verdict.kind) {
    case "ok": {
      const order = parseOrder(dataOf(verdict.body));
      if (order === null)
        return { kind: "unavailable", reason: "Airalo answered 2xx without a readable order" };
      return recordFound(deps, intent, order);
    }
    case "refused":
      await recordRefusal(deps.pool, intent.reference, verdict.reason);
      return { kind: "refused", reason: verdict.reason };
    case "not_done":
      await releaseClaim(deps.pool, intent.reference);
      return { kind: "unavailable", reason: verdict.reason };
    case "not_found":
      return {
        kind: "unavailable",
        reason: "Airalo answered 404 to an order; it is looked up before any repeat",
      };
    case "unknown":
      return {
        kind: "unavailable",
        reason: `${verdict.reason}; Airalo is asked what it did before any repeat`,
      };
  }
}

type RecoveredOutcome = { kind: "absent" } | { kind: "settled"; outcome: CarrierOutcome<Value> };

/** What Airalo did with the reference, recorded when it made an order. */
export async function recover(deps: PlaceDeps, intent: IntentRow): Promise<RecoveredOutcome> {
  const found: Recovered = await findOrder(deps.client, intent, {
    claimedElsewhere: (ids) => claimedOrderIds(deps.pool, ids),
    unansweredTopUps: () => unansweredTopUps(deps.pool, intent.iccid!, intent.package_id),
    answeredTopUps: () => answeredTopUpCount(deps.pool, intent.iccid!, intent.package_id),
  });
  if (found.kind === "absent") return { kind: "absent" };
  if (found.kind === "unknown")
    return { kind: "settled", outcome: { kind: "unavailable", reason: found.reason } };
  if (found.order.status === "failed") {
    const reason = `Airalo order ${found.order.id} for ${intent.reference} failed`;
    await recordRefusal(deps.pool, intent.reference, reason);
    return { kind: "settled", outcome: { kind: "refused", reason } };
  }
  return { kind: "settled", outcome: await recordFound(deps, intent, found.order) };
}

/**
 * Records the order found for the reference. An Airalo order is one reference's at most (a unique
 * key): one another reference of ours took meanwhile (a racing top-up recovery) is not ours.
 */
async function recordFound(
  deps: PlaceDeps,
  intent: IntentRow,
  order: AiraloOrder,
): Promise<CarrierOutcome<Value>> {
  try {
    return await recordOrder(deps, intent, order);
  } catch (error) {
    if ((error as { code?: string }).code !== "23505") throw error;
    return {
      kind: "unavailable",
      reason: `Airalo order ${order.id} is recorded for another reference of ours`,
    };
  }
}

async function recordOrder(
  deps: PlaceDeps,
  intent: IntentRow,
  order: AiraloOrder,
): Promise<CarrierOutcome<Value>> {
  if (intent.kind === "topup") {
    if (order.type !== "topup")
      return { kind: "unavailable", reason: `Airalo order ${order.id} is not a top-up` };
    const stored = await recordAnswer(deps.pool, intent.reference, {
      airalo_order_id: order.id,
      iccid: null,
      smdp_address: null,
      matching_id: null,
    });
    return settledOutcome(stored) ?? { kind: "unavailable", reason: "the top-up's answer was not recorded" };
  }
  const profile = parseProfile(order.sims[0]);
  if (profile === null || order.sims.length !== 1) {
    return { kind: "unavailable", reason: `Airalo order ${order.id} has no single well-formed eSIM` };
  }
  const stored = await recordAnswer(deps.pool, intent.reference, {
    airalo_order_id: order.id,
    iccid: profile.iccid,
    smdp_address: profile.smdp_address,
    matching_id: profile.activation_code,
  });
  // The row's answer, not this one: a concurrent recovery may have recorded it first (the same order).
  return settledOutcome(stored) ?? { kind: "unavailable", reason: "the order's answer was not recorded" };
}
