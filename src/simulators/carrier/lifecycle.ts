// The carrier over time (README "Lifecycle"): a profile is downloaded (installed), its first bundle
// starts on the first data use (first attach), data is used bundle after bundle, a bundle is
// depleted when its data is used up and expires when its validity has run out; a queued top-up
// starts when the bundle before it ends; a profile can be deleted from the device. Time is the
// simulator's own clock; `advance` applies what time alone has done before anything else.
import type pg from "pg";
import type { EsimSignal, SimulatedEvent } from "../../protocols/carrier-api.ts";
import {
  expireAllBundles,
  expireLapsedAndSelectBundles,
  lockProfileState,
  markDeleted,
  markInstalled,
  type SimBundleRow,
  type SimProfileState,
  selectBundles,
  selectProfileWithBundles,
  setBundleUsage,
  startBundle,
} from "./lifecycle.sql.ts";

/** Bundles read per eSIM; the signal's own bound. */
const MAX_BUNDLES = 1_000;

/** A deleted profile does nothing more: an event on it changes nothing and is still "ok". */
export type LifecycleOutcome = { kind: "ok" } | { kind: "not_found" };

/**
 * What time alone did to one eSIM up to `now`: running bundles past their validity expire, and the
 * next queued bundle starts when the one before it ended (at that moment), once the eSIM has been
 * in use. Call with the profile locked.
 */
export async function advance(client: pg.PoolClient, profile: SimProfileState, now: Date): Promise<void> {
  for (let step = 0; step < MAX_BUNDLES; step++) {
    const bundles = await expireLapsedAndSelectBundles(client, profile.iccid, now, MAX_BUNDLES);
    if (bundles.some((bundle) => bundle.status === "active")) return;
    const ended = bundles.filter((bundle) => bundle.status === "depleted" || bundle.status === "expired");
    const next = bundles.find((bundle) => bundle.status === "queued");
    // A queued bundle waits for the first data use of the eSIM, or for the one before it to end.
    if (!next || ended.length === 0 || profile.deleted_at !== null) return;
    await startBundle(client, next.id, startOfNext(ended, next, now));
  }
}

/**
 * The next bundle starts when the last one ended: at its expiry, or now when it was used up; and
 * never before it was bought, so a top-up bought after every bundle had ended starts at once (it
 * used to start at the old expiry, in the past, and could be born expired).
 */
function startOfNext(ended: SimBundleRow[], next: SimBundleRow, now: Date): Date {
  const last = ended[ended.length - 1]!;
  if (last.status !== "expired" || last.expires_at === null || last.expires_at >= now) return now;
  return last.expires_at > next.created_at ? last.expires_at : next.created_at;
}

/** One sandbox event, under the profile's lock, after time has been applied. */
export async function applySimulatedEvent(
  client: pg.PoolClient,
  iccid: string,
  event: SimulatedEvent,
  now: Date,
): Promise<LifecycleOutcome> {
  const profile = await lockProfileState(client, iccid);
  if (!profile) return { kind: "not_found" };
  await advance(client, profile, now);
  if (profile.deleted_at !== null) return { kind: "ok" };
  if (event.event === "delete") {
    await markDeleted(client, iccid, now);
  } else if (event.event === "install") {
    await markInstalled(client, iccid, now);
  } else if (event.event === "expire") {
    await expireAllBundles(client, iccid, now);
  } else {
    // Data on a device means the profile is on it: a use before an install installs it too.
    await markInstalled(client, iccid, now);
    await useData(client, iccid, event.data_mb ?? 0, now);
  }
  return { kind: "ok" };
}

/** Uses `data_mb` from the running bundle, then the next ones; what no bundle covers is not carried. */
async function useData(client: pg.PoolClient, iccid: string, data_mb: number, now: Date): Promise<void> {
  let remaining = data_mb;
  for (let step = 0; step < MAX_BUNDLES && remaining > 0; step++) {
    const bundles = await selectBundles(client, iccid, MAX_BUNDLES);
    let running = bundles.find((bundle) => bundle.status === "active");
    if (!running) {
      running = bundles.find((bundle) => bundle.status === "queued");
      if (!running) return;
      await startBundle(client, running.id, now);
    }
    const room = running.data_mb === null ? remaining : running.data_mb - running.data_used_mb;
    const take = Math.min(room, remaining);
    remaining -= take;
    const used = running.data_used_mb + take;
    await setBundleUsage(client, running.id, used, running.data_mb !== null && used >= running.data_mb);
  }
}

/** The eSIM as a signal: what a callback carries and GET /esims/:iccid answers. */
export async function snapshot(
  db: pg.Pool | pg.PoolClient,
  iccid: string,
  now: Date,
): Promise<EsimSignal | null> {
  const found = await selectProfileWithBundles(db, iccid, MAX_BUNDLES);
  if (!found) return null;
  const { profile, bundles } = found;
  const iso = (date: Date | null) => (date === null ? null : date.toISOString());
  return {
    iccid,
    as_of: now.toISOString(),
    profile: {
      state:
        profile.deleted_at !== null ? "deleted" : profile.installed_at !== null ? "installed" : "released",
      installed_at: iso(profile.installed_at),
      deleted_at: iso(profile.deleted_at),
    },
    bundles: bundles.map((bundle) => ({
      reference: bundle.reference,
      status: bundle.status,
      data_mb: bundle.data_mb,
      data_used_mb: bundle.data_used_mb,
      activated_at: iso(bundle.activated_at),
      expires_at: iso(bundle.expires_at),
    })),
  };
}
