// Which packages an eSIM can be topped up with: the one place that decides it. The list
// (GET /orders/available-topups/{iccid}) calls topUpOffer and the submit offeredTopUp, the same
// rules applied to one chosen package (test/topups.offer.test.ts walks the whole catalog to show
// the two agree), so a partner can never buy a top-up it was not offered.
//
// The rules:
// 0. An eSIM that can take a bundle: not `deleted` (its profile is gone from the device, so a
//    bundle would be paid for and never used) nor `cancelled` (refunded: the carrier has cancelled
//    its profile and refuses a top-up). Such an eSIM is offered nothing (takesTopUps).
// 1. Coverage: a top-up package covers every destination the eSIM's original package covers,
//    because the extra data must work wherever the eSIM works. A France eSIM is offered France
//    packages and the regional and global packages that include France; a Europe eSIM only
//    Europe-wide or wider packages; a global eSIM only global ones. The original package itself
//    qualifies, and a retired original still decides (its destinations are kept).
// 2. Active packages only: a retired package is not sold, as top-up or otherwise.
// 3. Metered packages only (data_mb not null): a top-up adds a quantity of data to the eSIM
//    (spec 4.5, "provision the additional data"). An unlimited plan is a new time-boxed plan
//    rather than additional data, and the carrier would turn the eSIM's allowance unlimited for
//    good; partners sell those as a new eSIM.
// 5. The eSIM's own supplier's packages only (contract "Suppliers (operator side)"): an Airalo
//    eSIM takes Airalo top-ups, an eSIM Go eSIM eSIM Go bundles, the carrier's eSIM the carrier's
//    packages; no supplier can load a bundle onto another's profile. A supplier that sells
//    top-up-only packages (Airalo) takes only those onto its eSIMs; they are offered here, and
//    only here (never as a new eSIM); and only those of the eSIM's own operator, which Airalo
//    requires, approximated by the same coverage (a Europe top-up is not offered for a UK eSIM).
// 4. Stable order, as in discovery: country packages, then regional, then global; within each by
//    data size, validity and package_id. At most MAX_TOPUP_ROWS rows.
import {
  type CoveringPackage,
  coveringMeteredPackage,
  coveringMeteredPackages,
  type Priced,
} from "../catalog/find-packages.ts";
import type { Executor } from "../db/executor.ts";
import type { EsimStatus, PackageSupplier } from "../db/schema.ts";

/** Rule 0: the statuses of an eSIM that can take no more bundles (contract "eSIMs"). */
const ENDED: ReadonlySet<EsimStatus> = new Set(["deleted", "cancelled"]);

export function takesTopUps(esim_status: EsimStatus): boolean {
  return !ENDED.has(esim_status);
}

/** More than any eSIM is offered (about 15 with the default catalog); a bound on the response. */
export const MAX_TOPUP_ROWS = 500;

/** `wholesale_minor` is the partner's price (its price list); `list_minor` the catalog's. */
export type TopUpOfferRow = Priced<CoveringPackage>;

/** What decides an eSIM's offer: its original package and the supplier of the order that made it. */
export type TopUpTarget = { package_id: string; supplier: PackageSupplier };

/**
 * The packages offered as top-ups for an eSIM: rules 1 to 5 above, which the catalog's query
 * applies (covering, active, metered, the eSIM's supplier, ordered).
 */
export async function topUpOffer(
  db: Executor,
  partner_id: string,
  esim: TopUpTarget,
): Promise<TopUpOfferRow[]> {
  return coveringMeteredPackages(db, partner_id, esim.package_id, esim.supplier, MAX_TOPUP_ROWS);
}

/**
 * The offered row matching both ids, or null: the pair must be exactly a row of the offer. Rules 1
 * to 3 and 5 checked for the chosen package alone (by its key, not a pass over the catalog); rule
 * 4 only orders and bounds the list, far above the ~15 rows an eSIM is offered. `other_supplier`:
 * the package would qualify but another supplier sells it (rule 5), for a refusal that says so.
 */
export async function offeredTopUp(
  db: Executor,
  partner_id: string,
  esim: TopUpTarget,
  choice: { package_id: string; external_package_id: string },
): Promise<TopUpOfferRow | "other_supplier" | null> {
  const row = await coveringMeteredPackage(db, partner_id, esim.package_id, choice);
  if (row === null) return null;
  return row.supplier === esim.supplier ? row : "other_supplier";
}
