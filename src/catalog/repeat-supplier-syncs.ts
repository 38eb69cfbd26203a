// The `repeat_supplier_syncs` job: "A sync repeats every SUPPLIER_SYNC_MINUTES (default 60) once
// run" (contract, "Suppliers (operator side)"). Each minute (one tick across all processes,
// graphile-worker's crontab), every supplier whose last sync (CLI, console or this job; its
// outcome ok or not) is older than SUPPLIER_SYNC_MINUTES is synced again with the same markup and
// destinations. A supplier the operator never synced is never synced here.

import type { Config } from "../config.ts";
import type { Pool } from "../db/pool.ts";
import { SYSTEM_ACTOR } from "../shared/actor.ts";
import { openSupplierCatalog } from "../suppliers/supplier-catalogs.ts";
import { claimSyncRun, lastSyncRuns, type StoredSyncRun } from "./supplier-sync.sql.ts";
import { type SyncReport, syncSupplierCatalog } from "./sync-supplier-catalog.ts";

export const REPEAT_SUPPLIER_SYNCS_TASK = "repeat_supplier_syncs";
/** Every minute: a sync comes due at most a minute late. */
export const REPEAT_SUPPLIER_SYNCS_CRONTAB = `* * * * * ${REPEAT_SUPPLIER_SYNCS_TASK}`;

type Deps = { pool: Pool; config: Config; log: (message: string) => void };

export function isDue(run: StoredSyncRun, now_ms: number, every_minutes: number): boolean {
  return now_ms - run.last_run_at.getTime() >= every_minutes * 60_000;
}

/** Re-runs each due supplier's last sync; one supplier's failure does not stop the others. */
export async function repeatSupplierSyncs(
  deps: Deps,
  now_ms = Date.now(),
): Promise<Map<string, SyncReport | Error>> {
  const outcomes = new Map<string, SyncReport | Error>();
  const due = (await lastSyncRuns(deps.pool)).filter((run) =>
    isDue(run, now_ms, deps.config.supplier_sync_minutes),
  );
  for (const run of due) {
    const due_before = new Date(now_ms - deps.config.supplier_sync_minutes * 60_000);
    if (!(await claimSyncRun(deps.pool, run.supplier, due_before, new Date(now_ms)))) continue;
    try {
      outcomes.set(run.supplier, await repeatOne(deps, run));
    } catch (error) {
      // A refusal is recorded as the supplier's last outcome by the sync itself; tried again next period.
      deps.log(`catalog sync from ${run.supplier} failed: ${(error as Error).message}`);
      outcomes.set(run.supplier, error as Error);
    }
  }
  return outcomes;
}

async function repeatOne(deps: Deps, run: StoredSyncRun): Promise<SyncReport> {
  const opened = await openSupplierCatalog(deps.config, deps.pool, run.supplier, deps.log);
  try {
    return await syncSupplierCatalog(deps.pool, {
      supplier: run.supplier,
      markup_basis_points: run.markup_basis_points,
      destination_codes: run.destination_codes,
      currency: deps.config.currency,
      actor: SYSTEM_ACTOR,
      list: opened.list,
    });
  } finally {
    await opened.close();
  }
}

export function repeatSupplierSyncsTask(deps: Omit<Deps, "log">) {
  return async (_payload: unknown, helpers: { logger: { error(message: string): void } }) => {
    await repeatSupplierSyncs({ ...deps, log: (message) => helpers.logger.error(message) });
  };
}
