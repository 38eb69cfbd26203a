// Recording catalog changes (GET /v1/catalog/changes, package.* events): called by each catalog
// writer inside the transaction that changes the catalog, so a change is in the log exactly when
// it is in the catalog, whatever crashes when. A catalog-wide change (an import, a supplier sync,
// the seed) is one row for every partner of the deployment, never one per partner: an import that
// changes 500 packages writes 500 rows with 1,000 partners as with one. Only a price list, one
// partner's, writes rows of that partner.
import assert from "node:assert/strict";
import { newId } from "../shared/ids.ts";
import {
  activeListPrices,
  type CatalogDb,
  type ChangeKind,
  insertChanges,
  lockChangeLog,
} from "./catalog-changes.sql.ts";
import { type PriceList, priceOf } from "./price-list.ts";

export type CatalogChanges = { added: string[]; updated: string[]; removed: string[] };

export { lockChangeLog };

function entries(kind: ChangeKind, package_ids: string[]) {
  return package_ids.map((package_id) => ({ change_id: newId("change"), kind, package_id }));
}

/** Records what an import, a sync or the seed changed, for every partner. */
export async function recordCatalogChanges(db: CatalogDb, changes: CatalogChanges): Promise<void> {
  const all = [
    ...entries("added", changes.added),
    ...entries("updated", changes.updated),
    ...entries("removed", changes.removed),
  ];
  // A package is one kind of change per write: the writer's lists are disjoint.
  assert.equal(new Set(all.map((c) => c.package_id)).size, all.length, "one change per package per write");
  if (all.length === 0) return;
  await lockChangeLog(db);
  await insertChanges(db, null, all);
}

/**
 * Records an `updated` change for this partner of every active package whose price the new price
 * list changes. The caller has locked the change log (lockChangeLog) before reading `before`, so
 * no other writer changed the catalog or this partner's prices in between.
 */
export async function recordPriceListChanges(
  db: CatalogDb,
  partner_id: string,
  before: PriceList,
  after: PriceList,
): Promise<number> {
  if (before.key === after.key) return 0;
  const changed = (await activeListPrices(db))
    .filter(
      (p) =>
        priceOf(before, p.package_id, p.wholesale_minor) !== priceOf(after, p.package_id, p.wholesale_minor),
    )
    .map((p) => p.package_id);
  await insertChanges(db, partner_id, entries("updated", changed));
  return changed.length;
}
