// Operator use cases of the sync (`npm run cli -- esims show|unreachable`): one eSIM as its partner
// sees it with the sync's columns beside it, and the eSIMs the sync has not been able to reach.
import type { Executor } from "../db/executor.ts";
import { getEsim } from "./get-esim.ts";
import type { EsimBody } from "./render-esim.ts";
import { syncStateOf, type UnreachableEsim, unreachableEsims } from "./sync-esims.sql.ts";

export type { UnreachableEsim };

export type EsimReport = { partner_id: string; sync: UnreachableEsim; esim: EsimBody };

/** Any partner's eSIM by ICCID (the operator sees them all), or null when there is none. */
export async function esimReport(
  db: Executor,
  iccid: string,
  public_base_url: string,
): Promise<EsimReport | null> {
  const sync = await syncStateOf(db, iccid);
  if (!sync) return null;
  return {
    partner_id: sync.partner_id,
    sync,
    esim: await getEsim(db, sync.partner_id, iccid, public_base_url),
  };
}

/** Longest unreached first, at most `limit`. */
export function listUnreachableEsims(db: Executor, limit: number): Promise<UnreachableEsim[]> {
  return unreachableEsims(db, limit);
}
