// The CatalogChange object of the contract ("Catalog additions"): what GET /v1/catalog/changes
// lists and what a package.* event carries as its data.
//
// `package` is rendered when the change is read (or its event recorded), as the partner sees the
// package then, not stored when the change was written. Why: a stored snapshot would be one row
// per partner for every catalog-wide change (prices differ per partner), the volume the log
// exists to avoid; and a consumer that applies changes in order converges to what the partner can
// buy now, whose price a cart would charge, never to a price that no longer holds. A package no
// longer offered renders as null, whatever the kind: its `removed` change follows in the feed.
import { type Static, Type } from "typebox";
import { rfc3339 } from "../shared/time.ts";
import { activePackagesByIds, type CatalogDb, type ChangeRow, priceTermsOf } from "./catalog-changes.sql.ts";
import { Package, toPackage } from "./list-destination-packages.ts";
import { type PriceList, priceList } from "./price-list.ts";

export const CatalogChange = Type.Object(
  {
    change_id: Type.String({ description: "`chg_…`: deduplicate by it." }),
    kind: Type.Union([Type.Literal("added"), Type.Literal("updated"), Type.Literal("removed")], {
      description:
        "added: now offered (new, or offered again); updated: its fields, destinations or your price changed; " +
        "removed: no longer offered.",
    }),
    package_id: Type.String(),
    package: Type.Union([Package, Type.Null()], {
      description:
        "The package as you see it now (your price), rendered when read; null when it is no longer offered.",
    }),
    created_at: Type.String({ format: "date-time" }),
  },
  { additionalProperties: false, description: "One change to the packages you are offered." },
);
export type CatalogChange = Static<typeof CatalogChange>;

export type ChangeFor = { partner_id: string; change: ChangeRow };

async function priceListsOf(
  db: CatalogDb,
  partner_ids: string[],
  package_ids: string[],
): Promise<Map<string, PriceList>> {
  const terms = await priceTermsOf(db, partner_ids, package_ids);
  return new Map(
    terms.map((t) => [
      t.partner_id,
      priceList(t.discount_percent, new Map(t.overrides.map((o) => [o.package_id, Number(o.amount_minor)]))),
    ]),
  );
}

/** Each change as its partner sees it, in the order given: one read of the packages and one of the prices. */
export async function renderChanges(db: CatalogDb, changes: ChangeFor[]): Promise<CatalogChange[]> {
  const package_ids = [...new Set(changes.map((c) => c.change.package_id))];
  const partner_ids = [...new Set(changes.map((c) => c.partner_id))];
  const packages = new Map((await activePackagesByIds(db, package_ids)).map((p) => [p.package_id, p]));
  const prices = await priceListsOf(db, partner_ids, package_ids);
  return changes.map(({ partner_id, change }) => {
    const row = packages.get(change.package_id);
    return {
      change_id: change.change_id,
      kind: change.kind,
      package_id: change.package_id,
      package: row === undefined ? null : toPackage(row, prices.get(partner_id)!),
      created_at: rfc3339(change.created_at),
    };
  });
}
