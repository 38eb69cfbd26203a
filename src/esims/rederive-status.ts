// A top-up's completion adds a queued bundle: a depleted or expired eSIM is usable again at once,
// not only when the next carrier signal arrives (callbacks may be disabled and the pull hours
// away). The merge runs with no new facts from the carrier, in the completion's transaction, and
// the eSIM is due for a pull now so the carrier's view follows soon.
import type { Transaction } from "kysely";
import { MAX_SIGNAL_BUNDLES } from "../carrier/esim-signal.ts";
import type { Database } from "../db/schema.ts";
import { bundlesOf, lockEsim, updateEsimState } from "./apply-signal.sql.ts";
import { mergeSignal } from "./apply-signal-merge.ts";
import { dueNow } from "./sync-esims.sql.ts";

export async function rederiveAfterTopUp(trx: Transaction<Database>, iccid: string): Promise<void> {
  const esim = await lockEsim(trx, iccid);
  if (!esim) return;
  const stored = await bundlesOf(trx, iccid, MAX_SIGNAL_BUNDLES);
  const nothing_new = {
    iccid,
    as_of: new Date().toISOString(),
    profile: { state: "released" as const, installed_at: null, deleted_at: null },
    bundles: [],
  };
  const merged = mergeSignal(esim, stored, nothing_new, new Date());
  // Only the status may move: no usage was reported, so its time stays.
  if (merged.esim.status !== esim.status) await updateEsimState(trx, { ...esim, status: merged.esim.status });
  await dueNow(trx, iccid);
}
