// Applying one carrier signal (a callback or a pull): one transaction locks the eSIM, merges the
// signal into the stored state (apply-signal-merge.ts: forward only, late and repeated signals
// change nothing), writes what changed (the bundles, then the eSIM row once), and records the
// events the change crosses, each once, with the Esim as the API renders it after the change as
// their data. It locks no order row (docs/architecture.md, "Lock order"). Whatever crashes when,
// either all of it commits or none: the carrier re-sends or the sync pulls it again.
import type { Transaction } from "kysely";
import type { EsimSignal } from "../carrier/carrier.ts";
import type { Database } from "../db/schema.ts";
import { recordEvent } from "../events/record-event.ts";
import { crashPoint } from "../lib/crash-points.ts";
import { MAX_SIGNAL_BUNDLES } from "../protocols/esim-signal.ts";
import type { AppContext } from "../shared/context.ts";
import { bundlesOf, lockEsim, updateBundles, writeEsim } from "./apply-signal.sql.ts";
import { type CrossedFact, mergeSignal } from "./apply-signal-merge.ts";
import { esimChanged } from "./esim-cache.ts";
import { eventEsim } from "./event-esim.ts";
import { getEsim } from "./get-esim.ts";
import { nextPull } from "./pull-schedule.ts";

export type SignalSource = "callback" | "pull";

export type AppliedSignal =
  /** We hold no eSIM with this ICCID (nothing written). */
  | { kind: "unknown_esim" }
  | { kind: "applied"; changed: boolean; events: number; unknown_references: string[] };

/** Every eSIM signal, pushed or pulled, goes through here. */
export async function applySignal(
  ctx: Pick<AppContext, "db" | "pool" | "config">,
  signal: EsimSignal,
  source: SignalSource,
): Promise<AppliedSignal> {
  const applied = await ctx.db.transaction().execute(async (trx) => {
    const esim = await lockEsim(trx, signal.iccid);
    if (!esim) return { kind: "unknown_esim" } as const;
    const stored = await bundlesOf(trx, signal.iccid, MAX_SIGNAL_BUNDLES);
    const now = new Date();
    const merged = mergeSignal(esim, stored, signal, now);
    await updateBundles(trx, signal.iccid, merged.changed_bundles);
    const after = { ...merged.esim, created_at: esim.created_at };
    const schedule = nextPull(after, now, ctx.config.usage_sync_min_interval_s, withJitter(1));
    // The state and the schedule in one UPDATE of the row (writeEsim says why never two).
    const state = merged.esim_changed ? merged.esim : null;
    await writeEsim(trx, signal.iccid, state, { schedule, pulled: source === "pull" });
    const events = await recordFacts(
      trx,
      esim.partner_id,
      signal.iccid,
      merged.facts,
      ctx.config.public_base_url,
    );
    crashPoint("before_signal_commit");
    return {
      kind: "applied",
      changed: merged.esim_changed || merged.changed_bundles.length > 0,
      events,
      unknown_references: merged.unknown_references,
    } as const;
  });
  // Other processes hear of it by NOTIFY; this one reads its own write at once.
  if (applied.kind === "applied" && applied.changed) esimChanged(ctx.pool, signal.iccid);
  return applied;
}

/**
 * Up to a fifth longer, at random: eSIMs bought in one burst spread out instead of coming due
 * together (no thundering herd), and the minimum interval still holds.
 */
export function withJitter(interval_s: number): number {
  return interval_s * (1 + Math.random() * 0.2);
}

/** The facts as events, the Esim rendered once after the writes; returns how many were new. */
async function recordFacts(
  trx: Transaction<Database>,
  partner_id: string,
  iccid: string,
  facts: readonly CrossedFact[],
  public_base_url: string,
): Promise<number> {
  if (facts.length === 0) return 0;
  const esim = eventEsim(await getEsim(trx, partner_id, iccid, public_base_url));
  let recorded = 0;
  for (const fact of facts) {
    const data = fact.extra ? { ...esim, ...fact.extra } : esim;
    const event_id = await recordEvent(trx, { partner_id, type: fact.type, data, dedup_key: fact.dedup_key });
    if (event_id !== null) recorded++;
  }
  return recorded;
}
