// Operator data: the SM-DP+'s profiles we may hand out, an ICCID range per profile type and
// package, imported with `npm run cli -- profiles import`. Adding a range twice changes nothing.
import type pg from "pg";
import { inTransaction } from "../../db/pool.ts";
import { iccidRange } from "../../lib/iccid-range.ts";
import { countInventory, type InventoryCount, insertInventory } from "./es2plus.sql.ts";

export type { InventoryCount };

export async function importInventory(
  pool: pg.Pool,
  range: { external_package_id: string; profile_type: string; first_iccid: string; count: number },
): Promise<{ added: number; already_there: number }> {
  const iccids = iccidRange(range.first_iccid, range.count);
  const added = await inTransaction(pool, (client) =>
    insertInventory(client, {
      external_package_id: range.external_package_id,
      profile_type: range.profile_type,
      iccids,
    }),
  );
  return { added, already_there: iccids.length - added };
}

/** Totals and free ICCIDs per package and profile type (at most `limit` rows). */
export function inventoryCounts(pool: pg.Pool, limit: number): Promise<InventoryCount[]> {
  return countInventory(pool, limit);
}
