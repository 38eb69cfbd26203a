// POST /profiles/cancel and POST /bundles/cancel: what a refund asks of the carrier (README
// "Cancellations"). Like a real SM-DP+ and bundle system, the carrier refuses once the profile was
// downloaded (`esim_installed`) or the bundle used (`bundle_used`); a reference already cancelled
// answers ok again, so the caller may always ask twice. Each runs under the profile's row lock, the
// lock a device's use of the eSIM takes too, so a cancel and a first use never both win.
import { type Static, Type } from "typebox";
import { inTransaction } from "../../db/pool.ts";
import { ok, refused, type SimulatorAnswer, type SimulatorContext } from "./answers.ts";
import {
  anyBundleUsed,
  lockProfileForCancel,
  markBundleCancelled,
  markProfileCancelled,
  selectBundleByReference,
} from "./cancel.sql.ts";
import { advance } from "./lifecycle.ts";
import { Reference } from "./provision-profile.ts";

export const CancelBody = Type.Object(
  { reference: Reference, iccid: Type.String({ minLength: 1, maxLength: 32 }) },
  { additionalProperties: false },
);
export type CancelBody = Static<typeof CancelBody>;

const cancelled = (request: CancelBody): SimulatorAnswer =>
  ok({ reference: request.reference, iccid: request.iccid });

/** The profile named by the reference that provisioned it, and its bundles. */
export async function cancelProfile(
  context: SimulatorContext,
  request: CancelBody,
): Promise<SimulatorAnswer> {
  return inTransaction(context.pool, async (client) => {
    const profile = await lockProfileForCancel(client, request.iccid);
    if (profile === null || profile.reference !== request.reference) {
      return refused(`no profile ${request.iccid} provisioned for reference ${request.reference}`);
    }
    if (profile.cancelled_at !== null) return cancelled(request);
    const now = new Date();
    // What time alone did first (a bundle started by an earlier use may have moved on).
    await advance(client, profile, now);
    if (profile.installed_at !== null || profile.deleted_at !== null) return refused("esim_installed");
    if (await anyBundleUsed(client, request.iccid)) return refused("bundle_used");
    await markProfileCancelled(client, request.iccid, now);
    return cancelled(request);
  });
}

/** One top-up's bundle, while it is still queued and unused. */
export async function cancelBundle(context: SimulatorContext, request: CancelBody): Promise<SimulatorAnswer> {
  const answer = await inTransaction(context.pool, async (client) => {
    const profile = await lockProfileForCancel(client, request.iccid);
    const bundle = await selectBundleByReference(client, request.reference);
    if (profile === null || bundle === null || bundle.iccid !== request.iccid) {
      return refused(`no bundle for reference ${request.reference} on ${request.iccid}`);
    }
    if (bundle.reference === profile.reference) {
      return refused("the original bundle is cancelled with its profile (POST /profiles/cancel)");
    }
    if (bundle.cancelled_at !== null) return cancelled(request);
    const now = new Date();
    // A cancelled profile took its data with it: its bundles can go, nothing can use them.
    if (profile.cancelled_at === null) {
      await advance(client, profile, now);
      const current = await selectBundleByReference(client, request.reference);
      if (current === null || current.status !== "queued" || current.data_used_mb > 0) {
        return refused("bundle_used");
      }
    }
    await markBundleCancelled(client, request.reference, now);
    return cancelled(request);
  });
  if (answer.status === 200) context.signal(request.iccid);
  return answer;
}
