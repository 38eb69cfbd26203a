// The operator's early warning that a package's ES2+ profiles are running out (before every
// purchase of it is refused) and that refunds are held on an ambiguous CancelOrder: read by the
// Prometheus gauges at scrape time, the operator console, and a watch in each worker process that
// logs a warning when a package crosses below PROFILE_INVENTORY_LOW_THRESHOLD free ICCIDs (and once
// at start for those already below) and when new held refunds appear.
import type pg from "pg";
import type { Logger } from "pino";
import { countInventory, type InventoryCount } from "./es2plus.sql.ts";
import { heldCancelCount, heldCancels } from "./settle-cancel.ts";

/** Packages reported at most (gauges, console, watch): an inventory has a few dozen. */
export const MAX_INVENTORY_ROWS = 1_000;
const WATCH_INTERVAL_MS = 60_000;
const MAX_HELD_LOGGED = 20;

export type InventoryLevel = InventoryCount & { low: boolean };

export async function inventoryLevels(pool: pg.Pool, threshold: number): Promise<InventoryLevel[]> {
  const rows = await countInventory(pool, MAX_INVENTORY_ROWS);
  return rows.map((row) => ({ ...row, low: row.free < threshold }));
}

/** One check: warns for each package newly below the threshold and for new held refunds. */
export class InventoryWatch {
  #low = new Set<string>();
  #held = 0;

  async check(pool: pg.Pool, threshold: number, log: Logger): Promise<void> {
    const now_low = new Set<string>();
    for (const level of await inventoryLevels(pool, threshold)) {
      if (!level.low) continue;
      const key = `${level.external_package_id}\u0000${level.profile_type}`;
      now_low.add(key);
      if (!this.#low.has(key)) log.warn({ ...level, threshold }, "ES2+ profile inventory low");
    }
    this.#low = now_low;
    const held = await heldCancelCount(pool);
    if (held > this.#held) {
      const refunds = await heldCancels(pool, MAX_HELD_LOGGED);
      log.warn(
        { held, refunds: refunds.map((r) => r.reference) },
        "refunds held on an ambiguous CancelOrder: settle each with `npm run cli -- refunds settle`",
      );
    }
    this.#held = held;
  }
}

/** Runs the watch in this process: once now, then every minute; a slow check delays the next. */
export function startInventoryWatch(
  pool: pg.Pool,
  threshold: number,
  log: Logger,
): { close: () => Promise<void> } {
  const watch = new InventoryWatch();
  let round: Promise<unknown> | null = null;
  const tick = () => {
    if (round !== null) return;
    round = watch
      .check(pool, threshold, log)
      .catch((error: unknown) => log.warn({ err: error }, "profile inventory check failed"))
      .finally(() => {
        round = null;
      });
  };
  tick();
  const timer = setInterval(tick, WATCH_INTERVAL_MS);
  timer.unref();
  return {
    close: async () => {
      clearInterval(timer);
      await round;
    },
  };
}
