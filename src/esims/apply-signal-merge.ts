// The merge at the heart of the eSIM lifecycle (design.md, "a one-way state machine"): a carrier
// signal is folded into the stored state so that the result never moves backwards, whatever order
// signals arrive in and however often: every field merges commutatively and idempotently (bundle
// statuses by rank, usage by the greatest, the time of each fact by the earliest), and the eSIM's
// status is derived from the merged bundles and profile. Pure: the caller reads and writes.
import type { EsimSignal } from "../carrier/carrier.ts";
import type { BundleStatus, EsimStatus } from "../db/schema.ts";
import type { EventType } from "../events/record-event.ts";

export type StoredEsim = {
  iccid: string;
  status: EsimStatus;
  installed_at: Date | null;
  activated_at: Date | null;
  expires_at: Date | null;
  deleted_at: Date | null;
  usage_updated_at: Date | null;
};

export type StoredBundle = {
  order_id: string;
  /**
   * The carrier reference it was made under, which the carrier's signals name: its order's id, or,
   * for an eSIM of a group order, its line's (`{order_id}-{position}`, migration 0047).
   */
  reference: string;
  status: BundleStatus;
  data_mb: number | null;
  data_used_mb: number;
  activated_at: Date | null;
  expires_at: Date | null;
};

/** A fact to record as an event, once (its dedup_key). */
export type CrossedFact = { type: EventType; dedup_key: string; extra?: Record<string, unknown> };

export type Merged = {
  esim: StoredEsim;
  bundles: StoredBundle[];
  /** Bundles whose stored row must change. */
  changed_bundles: StoredBundle[];
  esim_changed: boolean;
  /** References the carrier named that we hold no bundle for (yet): a later signal brings them. */
  unknown_references: string[];
  facts: CrossedFact[];
};

const BUNDLE_RANK: Record<BundleStatus, number> = {
  queued: 0,
  active: 1,
  depleted: 2,
  expired: 3,
  cancelled: 4,
};
const ESIM_RANK: Record<EsimStatus, number> = {
  released: 0,
  installed: 1,
  active: 2,
  depleted: 3,
  expired: 4,
  deleted: 5,
  cancelled: 6,
};
export const USAGE_THRESHOLDS_PERCENT = [50, 80, 100] as const;
/** `esim.expiring` is announced this long before the eSIM's last bundle expires. */
export const EXPIRING_NOTICE_MS = 24 * 3_600_000;

const earliest = (a: Date | null, b: Date | null) => (a === null ? b : b === null || a <= b ? a : b);
const latest = (a: Date | null, b: Date | null) => (a === null ? b : b === null || a >= b ? a : b);
const at = (text: string | null) => (text === null ? null : new Date(text));
const same = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

export function mergeSignal(
  esim: StoredEsim,
  stored: readonly StoredBundle[],
  signal: EsimSignal,
  now: Date,
): Merged {
  const byReference = new Map(signal.bundles.map((bundle) => [bundle.reference, bundle]));
  const known = new Set(stored.map((bundle) => bundle.reference));
  const bundles = stored.map((bundle) => {
    const reported = byReference.get(bundle.reference);
    if (!reported || bundle.status === "cancelled") return bundle;
    return {
      ...bundle,
      status: BUNDLE_RANK[reported.status] > BUNDLE_RANK[bundle.status] ? reported.status : bundle.status,
      data_used_mb: Math.max(bundle.data_used_mb, reported.data_used_mb),
      activated_at: earliest(bundle.activated_at, at(reported.activated_at)),
      expires_at: earliest(bundle.expires_at, at(reported.expires_at)),
    };
  });
  const changed_bundles = bundles.filter((bundle, index) => !sameBundle(bundle, stored[index]!));
  const next = mergeEsim(esim, bundles, signal);
  return {
    esim: next,
    bundles,
    changed_bundles,
    esim_changed: !sameEsim(esim, next),
    unknown_references: signal.bundles.map((b) => b.reference).filter((reference) => !known.has(reference)),
    facts: crossedFacts(esim, next, stored, bundles, now),
  };
}

function mergeEsim(esim: StoredEsim, bundles: readonly StoredBundle[], signal: EsimSignal): StoredEsim {
  const merged: StoredEsim = {
    ...esim,
    installed_at: earliest(esim.installed_at, at(signal.profile.installed_at)),
    deleted_at: earliest(esim.deleted_at, at(signal.profile.deleted_at)),
    activated_at: bundles.reduce((first, bundle) => earliest(first, bundle.activated_at), esim.activated_at),
    expires_at: bundles.reduce<Date | null>((last, bundle) => latest(last, bundle.expires_at), null),
    usage_updated_at: latest(esim.usage_updated_at, at(signal.as_of)),
  };
  // A deleted or installed profile also counts when the carrier reports it without a time.
  if (signal.profile.state === "deleted" && merged.deleted_at === null) merged.deleted_at = at(signal.as_of);
  if (signal.profile.state === "installed" && merged.installed_at === null)
    merged.installed_at = at(signal.as_of);
  // Data used means the profile is on a device, whatever the SM-DP+ has reported so far (the two
  // systems report independently): never an activated eSIM still `released`.
  merged.installed_at = earliest(merged.installed_at, merged.activated_at);
  return { ...merged, status: nextStatus(esim.status, derivedStatus(merged, bundles)) };
}

/** What the merged facts say the eSIM is now (contract: `Esim.status`). */
function derivedStatus(esim: StoredEsim, bundles: readonly StoredBundle[]): EsimStatus | null {
  if (esim.deleted_at !== null) return "deleted";
  const counted = bundles.filter((bundle) => bundle.status !== "cancelled");
  if (counted.length === 0) return null;
  if (counted.some((bundle) => bundle.status === "queued" || bundle.status === "active")) {
    if (esim.installed_at === null) return "released";
    return esim.activated_at === null ? "installed" : "active";
  }
  return counted.every((bundle) => bundle.status === "expired") ? "expired" : "depleted";
}

/**
 * Forward only; the one way back is a new bundle (a top-up) on an eSIM whose bundles had all
 * ended: depleted or expired become active or installed again (or released, for an eSIM whose
 * plan ran out before it was ever installed: derived says released only while a bundle is live
 * and the profile was never on a device), or expired becomes depleted when the newer bundle is
 * used up but not yet past its validity. Deleted and cancelled are final.
 */
function nextStatus(old: EsimStatus, derived: EsimStatus | null): EsimStatus {
  if (derived === null || old === "deleted" || old === "cancelled") return old;
  if (ESIM_RANK[derived] >= ESIM_RANK[old]) return derived;
  const revived = old === "depleted" || old === "expired";
  return revived ? derived : old;
}

/** The events this merge crosses: each once (its dedup key), in the order they happened. */
function crossedFacts(
  before: StoredEsim,
  after: StoredEsim,
  stored: readonly StoredBundle[],
  bundles: readonly StoredBundle[],
  now: Date,
): CrossedFact[] {
  const facts: CrossedFact[] = [];
  const iccid = after.iccid;
  if (before.installed_at === null && after.installed_at !== null) {
    facts.push({ type: "esim.installed", dedup_key: `installed:${iccid}` });
  }
  if (before.activated_at === null && after.activated_at !== null) {
    facts.push({ type: "esim.activated", dedup_key: `activated:${iccid}` });
  }
  bundles.forEach((bundle, index) => {
    if (bundle.data_mb === null) return;
    const old_used = stored[index]!.data_used_mb;
    for (const percent of USAGE_THRESHOLDS_PERCENT) {
      const line = (bundle.data_mb * percent) / 100;
      if (old_used < line && bundle.data_used_mb >= line) {
        facts.push({
          type: "esim.usage_threshold",
          // By reference: the eSIMs of a group share their order's id.
          dedup_key: `usage:${bundle.reference}:${percent}`,
          extra: { threshold_percent: percent, bundle_order_id: bundle.order_id },
        });
      }
    }
  });
  const expiring = expiringBundle(after, bundles, now);
  if (expiring) facts.push({ type: "esim.expiring", dedup_key: `expiring:${expiring}` });
  if (after.status === "expired" && before.status !== "expired") {
    const last = bundles[bundles.length - 1]?.reference ?? iccid;
    facts.push({ type: "esim.expired", dedup_key: `expired:${last}` });
  }
  if (after.status === "deleted" && before.status !== "deleted") {
    facts.push({ type: "esim.deleted", dedup_key: `deleted:${iccid}` });
  }
  return facts;
}

/**
 * The bundle whose end is the eSIM's end, when that end is less than 24 hours away and nothing is
 * queued behind it; null otherwise. Time crosses this line, not a signal: it is noticed by the
 * first signal or pull after it (a pull is scheduled just after it: pull-schedule.ts), and
 * recorded once per bundle.
 */
function expiringBundle(esim: StoredEsim, bundles: readonly StoredBundle[], now: Date): string | null {
  if (esim.status !== "active" && esim.status !== "installed") return null;
  if (esim.expires_at === null || bundles.some((bundle) => bundle.status === "queued")) return null;
  const left_ms = esim.expires_at.getTime() - now.getTime();
  if (left_ms <= 0 || left_ms > EXPIRING_NOTICE_MS) return null;
  const last = bundles.find((bundle) => same(bundle.expires_at, esim.expires_at));
  return last?.reference ?? null;
}

function sameBundle(a: StoredBundle, b: StoredBundle): boolean {
  return (
    a.status === b.status &&
    a.data_used_mb === b.data_used_mb &&
    same(a.activated_at, b.activated_at) &&
    same(a.expires_at, b.expires_at)
  );
}

function sameEsim(a: StoredEsim, b: StoredEsim): boolean {
  return (
    a.status === b.status &&
    same(a.installed_at, b.installed_at) &&
    same(a.activated_at, b.activated_at) &&
    same(a.expires_at, b.expires_at) &&
    same(a.deleted_at, b.deleted_at) &&
    same(a.usage_updated_at, b.usage_updated_at)
  );
}
