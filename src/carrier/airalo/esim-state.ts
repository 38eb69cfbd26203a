// After the sale: one eSIM's state at Airalo as our EsimSignal. Airalo exposes no profile state
// (installed or not) and no per-bundle usage on these endpoints: GET /v2/sims/{iccid} says whether
// the eSIM exists and was recycled; GET /v2/sims/{iccid}/usage gives the eSIM's totals (its package
// plus top-ups, in MB) and a status (docs/suppliers/airalo.md §5). So:
//   profile:  NOT_ACTIVE -> released; RECYCLED -> deleted (at recycled_at); otherwise installed
//             (data was used: a device holds the profile; when is not said, so installed_at null);
//   bundles:  one per order of ours on the eSIM (the eSIM's own, then its top-ups, oldest first),
//             with our package's data; the used MB (total - remaining) fill them oldest first;
//             NOT_ACTIVE all queued, EXPIRED all expired, FINISHED all depleted, ACTIVE the full
//             ones depleted and the others active; unlimited: data_mb null, nothing counted used.
//   UNKNOWN:  unavailable (Airalo does not know either).
// The usage endpoint allows 10 calls a minute per ICCID and 5 a second per account, and Airalo
// caches its answer 20 minutes (§5): the lifecycle's pull schedule (USAGE_SYNC_MIN_INTERVAL_S)
// should not be shorter than that; our buckets (rate-limit.ts) keep us under the limits whatever it is.

import type pg from "pg";
import { isValidIccid } from "../../lib/luhn.ts";
import type { CarrierBundle, EsimSignal, EsimStateOutcome } from "../carrier.ts";
import { ordersOfEsim } from "./airalo.sql.ts";
import { type AiraloClient, dataOf, isObject, type Verdict } from "./client.ts";
import { referenceIn } from "./config.ts";
import { type AiraloUsage, airaloInstant, parseUsage } from "./shapes.ts";

export type StateDeps = { pool: pg.Pool; client: AiraloClient; client_id: string };

export async function esimState(deps: StateDeps, iccid: string): Promise<EsimStateOutcome> {
  if (!isValidIccid(iccid)) return { kind: "not_found" };
  const sim = await deps.client.call(`/sims/${encodeURIComponent(iccid)}`);
  if (sim.kind === "not_found") return { kind: "not_found" };
  if (sim.kind !== "ok") return unavailable(sim);
  const usageAnswer = await deps.client.call(`/sims/${encodeURIComponent(iccid)}/usage`, {
    limits: [
      ["usage_iccid", iccid],
      ["usage_company", deps.client_id],
    ],
  });
  if (usageAnswer.kind === "not_found") return { kind: "not_found" };
  if (usageAnswer.kind !== "ok") return unavailable(usageAnswer);
  const usage = parseUsage(dataOf(usageAnswer.body));
  if (usage === null) return { kind: "unavailable", reason: "Airalo answered a malformed usage" };
  if (usage.status === "UNKNOWN")
    return { kind: "unavailable", reason: "Airalo reports the eSIM's usage as UNKNOWN" };
  const data = dataOf(sim.body) ?? {};
  const ours = await ordersOfEsim(deps.pool, iccid);
  const slots =
    ours.length > 0
      ? ours.map((row) => ({ reference: row.reference, data_mb: row.data_mb }))
      : [
          {
            reference: foreignReference(data),
            data_mb: usage.is_unlimited || usage.total_mb === 0 ? null : usage.total_mb,
          },
        ];
  const signal: EsimSignal = {
    iccid,
    as_of: new Date().toISOString(),
    profile: profileOf(usage, data),
    bundles: bundlesOf(usage, slots),
  };
  return { kind: "ok", value: signal };
}

function unavailable(verdict: Exclude<Verdict, { kind: "ok" } | { kind: "not_found" }>): EsimStateOutcome {
  return { kind: "unavailable", reason: verdict.reason };
}

/** An eSIM bought outside this service: named by the tag in its order's description, or Airalo's order id. */
function foreignReference(sim: Record<string, unknown>): string {
  const order = isObject(sim.simable) ? sim.simable : {};
  return referenceIn(order.description) ?? `airalo-order-${String(order.id ?? "unknown").slice(0, 30)}`;
}

function profileOf(usage: AiraloUsage, sim: Record<string, unknown>): EsimSignal["profile"] {
  if (usage.status === "RECYCLED" || sim.recycled === true) {
    const at = airaloInstant(typeof sim.recycled_at === "string" ? sim.recycled_at : null);
    return { state: "deleted", installed_at: null, deleted_at: at };
  }
  if (usage.status === "NOT_ACTIVE") return { state: "released", installed_at: null, deleted_at: null };
  return { state: "installed", installed_at: null, deleted_at: null };
}

function bundlesOf(
  usage: AiraloUsage,
  slots: { reference: string; data_mb: number | null }[],
): CarrierBundle[] {
  const expires_at = airaloInstant(usage.expired_at);
  let left_mb = usage.is_unlimited ? 0 : Math.max(0, usage.total_mb - usage.remaining_mb);
  return slots.map((slot, index) => {
    const last = index === slots.length - 1;
    const cap = slot.data_mb;
    const used = cap === null || last ? left_mb : Math.min(cap, left_mb);
    left_mb -= used;
    const full = cap !== null && used >= cap;
    const bundle = { reference: slot.reference, data_mb: cap, data_used_mb: used, activated_at: null };
    switch (usage.status) {
      case "NOT_ACTIVE":
        return { ...bundle, status: "queued", data_used_mb: 0, expires_at: null };
      case "EXPIRED":
      case "RECYCLED":
        return { ...bundle, status: "expired", expires_at };
      case "FINISHED":
        return { ...bundle, status: "depleted", data_used_mb: cap ?? used, expires_at };
      default:
        return { ...bundle, status: full ? "depleted" : "active", expires_at };
    }
  });
}
