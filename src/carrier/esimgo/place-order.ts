// One purchase or top-up at eSIM Go, exactly once over an API without idempotency keys and without
// a client reference on orders (docs/suppliers/esimgo.md §3, §6: "No idempotency key is documented"):
//
//   1. our intent is stored (esimgo_orders) before anything is sent; a second call for the
//      reference finds it;
//   2. a reference already answered or refused answers from the row, without calling eSIM Go;
//   3. a reference whose POST may have reached eSIM Go (`requested_at` set: sent, and neither
//      answered nor said "not made") is looked up first (recovery.ts). Found: that order is ours.
//      Not found: nothing is posted again until the POST is older than the in-flight window
//      (`in_flight_ms`, 15 minutes by default); after it, the claim is released and we post;
//   4. the right to POST is one claim (esimgo.sql.ts claimPost) under a per-bundle lock: of two
//      callers of one reference, one posts; and while another reference of the same bundle has an
//      unresolved POST, we wait for it (a live POST answers within `timeout_ms`), then resolve it
//      ourselves by its lookup (found: recorded for it; absent or ambiguous: it holds us back no
//      longer), so a lookup of a lost answer does not find two unattributed orders of ours but in a
//      double fault, and then answers unknown for an operator;
//   5. the answer: an order is recorded, then our reference is written as the eSIM's customerRef
//      (PUT /esims) so later lookups are exact; a 400 is a refusal (nothing made: eSIM Go validates
//      before it orders); "not made" (401, 403, 429) releases the claim; anything else (5xx, a
//      timeout, a cut connection) leaves it, so the next call looks up first.
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import type { CarrierOutcome, ProvisionedProfile, TopUpResult } from "../carrier.ts";
import { type EsimGoClient, reasonOf, type Verdict } from "./client.ts";
import {
  attributedOrders,
  type Claim,
  claimPost,
  databaseNow,
  type IntentRow,
  knownIccids,
  markAmbiguous,
  markCustomerRefSet,
  recordOrder,
  recordProfile,
  recordRefusal,
  releaseClaim,
  selectIntent,
} from "./esimgo.sql.ts";
import { findOrder } from "./recovery.ts";
import { type EsimGoOrder, parseInstallDetails, parseOrder, parseProfile } from "./shapes.ts";

export type PlaceDeps = { pool: pg.Pool; client: EsimGoClient; in_flight_ms: number; timeout_ms: number };

type Value = ProvisionedProfile | TopUpResult;

/** How often a caller waiting for another reference of its bundle looks again. */
const RIVAL_POLL_MS = 100;
/** Claims tried by one call: each round waits, or resolves one rival. */
const MAX_CLAIM_ROUNDS = 200;
/** Rivals whose lookup one call runs; more, and it answers unavailable (the next call goes on). */
const MAX_RIVALS_LOOKED_UP = 1;

/** The outcome a stored intent already holds, or null when it holds none yet. */
export function settledOutcome(intent: IntentRow): CarrierOutcome<Value> | null {
  if (intent.refusal !== null) return { kind: "refused", reason: intent.refusal };
  if (intent.order_reference === null) return null;
  if (intent.kind === "topup") return { kind: "ok", value: { iccid: intent.iccid! } };
  if (intent.matching_id === null) return null; // ordered, install details not read yet
  return {
    kind: "ok",
    value: { iccid: intent.iccid!, smdp_address: intent.smdp_address!, activation_code: intent.matching_id },
  };
}

export async function placeOnce(
  deps: PlaceDeps,
  intent: IntentRow,
  body: unknown,
): Promise<CarrierOutcome<Value>> {
  const settled = settledOutcome(intent);
  if (settled !== null) {
    await tagEsim(deps, intent);
    return settled;
  }
  if (intent.order_reference !== null) return readInstallDetails(deps, intent);
  if (intent.requested_at !== null) {
    const resolved = await resolveUnanswered(deps, intent);
    if (resolved.kind === "settled") return resolved.outcome;
  }
  const claim = await claimWaitingForRivals(deps, intent);
  if (claim.kind === "taken")
    return {
      kind: "unavailable",
      reason: `another caller is placing ${intent.reference} at eSIM Go right now`,
    };
  if (claim.kind === "rival") {
    return {
      kind: "unavailable",
      reason:
        `${claim.rival.reference}, another order of ours for ${intent.item}, awaits its eSIM Go outcome; ` +
        `${intent.reference} is posted once it is known`,
    };
  }
  const posted = (await selectIntent(deps.pool, intent.reference))!;
  return settleAnswer(deps, posted, await deps.client.call("/orders", { method: "POST", json: body }));
}

type Resolved = { kind: "open" } | { kind: "settled"; outcome: CarrierOutcome<Value> };

/**
 * A reference whose POST may have landed: found → recorded; absent and older than the in-flight
 * window → released (open: the caller may post); otherwise settled as unavailable.
 */
export async function resolveUnanswered(deps: PlaceDeps, intent: IntentRow): Promise<Resolved> {
  const recovered = await recover(deps, intent);
  if (recovered.kind === "settled") return recovered;
  const waited_ms = (await databaseNow(deps.pool)).getTime() - intent.requested_at!.getTime();
  if (waited_ms >= deps.in_flight_ms) {
    await releaseClaim(deps.pool, intent.reference, intent.posts);
    return { kind: "open" };
  }
  return {
    kind: "settled",
    outcome: {
      kind: "unavailable",
      reason:
        `eSIM Go has no order for ${intent.reference} yet, but our POST of ${intent.requested_at!.toISOString()} ` +
        `may still land; not posted again before ${Math.ceil(deps.in_flight_ms / 60_000)} min have passed`,
    },
  };
}

/**
 * Claims the POST. While another reference of the bundle has one unresolved, waits for it as long
 * as a live POST may take (`timeout_ms` + 1 s); past that its answer is lost, and its lookup is
 * run here once: found, it is recorded for its owner; absent or ambiguous, it holds us back no
 * longer (`cleared`). Safe: should its POST land later, or its window already hold two orders,
 * and our own answer be lost too, our lookup sees several candidates and answers unknown for an
 * operator (never a guess, never a second POST); and one lost answer does not stop the bundle's
 * sales for the in-flight window, nor an ambiguous one until an operator comes.
 */
async function claimWaitingForRivals(deps: PlaceDeps, intent: IntentRow): Promise<Claim> {
  const live_ms = deps.timeout_ms + 1_000;
  const deadline_ms = Date.now() + live_ms + 1_000;
  const cleared: string[] = [];
  for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
    const current = (await selectIntent(deps.pool, intent.reference))!;
    if (current.requested_at !== null || settledOutcome(current) !== null) return { kind: "taken" };
    const claim = await claimPost(deps.pool, current, current.posts, cleared);
    if (claim.kind !== "rival") return claim;
    const age_ms = (await databaseNow(deps.pool)).getTime() - claim.rival.requested_at.getTime();
    if (age_ms >= live_ms) {
      // Each lookup is a few calls: the operation's lease (operation_ms) allows one rival's. An
      // ambiguous rival is marked by its lookup and no longer counts (esimgo.sql.ts claimPost).
      if (cleared.length >= MAX_RIVALS_LOOKED_UP) return claim;
      const rival = await selectIntent(deps.pool, claim.rival.reference);
      if (rival !== null && rival.requested_at !== null && rival.order_reference === null) {
        await resolveUnanswered(deps, rival);
      }
      cleared.push(claim.rival.reference);
      continue;
    }
    if (Date.now() + RIVAL_POLL_MS > deadline_ms) return claim;
    await sleep(RIVAL_POLL_MS);
  }
  return { kind: "taken" };
}

async function settleAnswer(
  deps: PlaceDeps,
  intent: IntentRow,
  verdict: Verdict,
): Promise<CarrierOutcome<Value>> {
  switch (verdict.kind) {
    case "ok": {
      const order = parseOrder(verdict.body);
      if (order === null)
        return {
          kind: "unavailable",
          reason: "eSIM Go answered 2xx without a readable order; looked up next",
        };
      return recordFound(deps, intent, order);
    }
    case "rejected": {
      const reason = `eSIM Go refused the order: ${verdict.message}`;
      await recordRefusal(deps.pool, intent.reference, reason);
      return { kind: "refused", reason };
    }
    case "not_done":
      await releaseClaim(deps.pool, intent.reference, intent.posts);
      return { kind: "unavailable", reason: verdict.reason };
    default:
      return {
        kind: "unavailable",
        reason: `${reasonOf(verdict)}; eSIM Go is asked what it did before any repeat`,
      };
  }
}

type RecoveredOutcome = { kind: "absent" } | { kind: "settled"; outcome: CarrierOutcome<Value> };

/** What eSIM Go did with the reference, recorded when it made an order. */
export async function recover(deps: PlaceDeps, intent: IntentRow): Promise<RecoveredOutcome> {
  const found = await findOrder(
    {
      client: deps.client,
      in_flight_ms: deps.in_flight_ms,
      attributedElsewhere: async (references) => {
        const taken = await attributedOrders(deps.pool, references);
        if (intent.order_reference !== null) taken.delete(intent.order_reference);
        return taken;
      },
      knownIccids: (iccids) => knownIccids(deps.pool, iccids),
    },
    intent,
  );
  if (found.kind === "absent") return { kind: "absent" };
  if (found.kind === "ambiguous") await markAmbiguous(deps.pool, intent.reference);
  if (found.kind === "unknown" || found.kind === "ambiguous")
    return { kind: "settled", outcome: { kind: "unavailable", reason: found.reason } };
  return { kind: "settled", outcome: await recordFound(deps, intent, found.order) };
}

/**
 * Records the order found for the reference. An eSIM Go order is one reference's at most (a unique
 * key): one another reference of ours took meanwhile is not ours.
 */
async function recordFound(
  deps: PlaceDeps,
  intent: IntentRow,
  order: EsimGoOrder,
): Promise<CarrierOutcome<Value>> {
  const line = order.lines[0];
  if (order.lines.length !== 1 || line === undefined || line.item !== intent.item) {
    return {
      kind: "unavailable",
      reason: `eSIM Go order ${order.reference} is not one line of ${intent.item}`,
    };
  }
  if (intent.kind === "topup" && (line.iccids.length !== 1 || line.iccids[0] !== intent.iccid)) {
    // allowReassign is false: eSIM Go must not put our top-up elsewhere; an operator looks at it.
    return {
      kind: "unavailable",
      reason: `eSIM Go order ${order.reference} put ${intent.item} on ${line.iccids.join(", ") || "no eSIM"}, not ${intent.iccid}`,
    };
  }
  const profile = intent.kind === "esim" && line.esims.length === 1 ? parseProfile(line.esims[0]) : null;
  let stored: IntentRow;
  try {
    stored = await recordOrder(deps.pool, intent.reference, {
      order_reference: order.reference,
      iccid: profile?.iccid ?? null,
      smdp_address: profile?.smdp_address ?? null,
      matching_id: profile?.activation_code ?? null,
    });
  } catch (error) {
    if ((error as { code?: string }).code !== "23505") throw error;
    return {
      kind: "unavailable",
      reason: `eSIM Go order ${order.reference} is recorded for another reference of ours`,
    };
  }
  if (stored.order_reference !== order.reference) {
    return settledOutcome(stored) ?? { kind: "unavailable", reason: "another answer was recorded first" };
  }
  const settled = settledOutcome(stored);
  if (settled === null) return readInstallDetails(deps, stored);
  await tagEsim(deps, stored);
  return settled;
}

/**
 * An order recorded without its eSIM (still processing, or a line without `esims`): the install
 * details, GET /esims/assignments?reference=<orderReference> in JSON (CSV is the default, §3).
 */
async function readInstallDetails(deps: PlaceDeps, intent: IntentRow): Promise<CarrierOutcome<Value>> {
  const verdict = await deps.client.call("/esims/assignments", {
    query: { reference: intent.order_reference! },
  });
  if (verdict.kind !== "ok") {
    return {
      kind: "unavailable",
      reason: `eSIM Go order ${intent.order_reference} is made; its install details are not readable yet: ${reasonOf(verdict)}`,
    };
  }
  const profiles = parseInstallDetails(verdict.body);
  if (profiles === null || profiles.length !== 1) {
    return {
      kind: "unavailable",
      reason: `eSIM Go order ${intent.order_reference} has no single well-formed eSIM`,
    };
  }
  const profile = profiles[0]!;
  const stored = await recordProfile(deps.pool, intent.reference, {
    iccid: profile.iccid,
    smdp_address: profile.smdp_address,
    matching_id: profile.activation_code,
  });
  await tagEsim(deps, stored);
  return settledOutcome(stored) ?? { kind: "unavailable", reason: "the install details were not recorded" };
}

/**
 * Writes our reference as the new eSIM's customerRef (PUT /esims), once: later lookups by
 * customerRef are exact. Best effort: our row already holds the answer; a failure is tried again
 * on the reference's next call.
 */
async function tagEsim(deps: PlaceDeps, intent: IntentRow): Promise<void> {
  if (intent.kind !== "esim" || intent.customer_ref_set || intent.iccid === null) return;
  const verdict = await deps.client.call("/esims", {
    method: "PUT",
    json: { iccid: intent.iccid, customerRef: intent.reference },
  });
  if (verdict.kind === "ok") await markCustomerRefSet(deps.pool, intent.reference);
}
