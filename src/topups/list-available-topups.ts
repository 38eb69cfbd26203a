// Partner use case: the top-ups offered for one of the partner's eSIMs (spec 4.4).
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { money } from "../shared/schemas.ts";
import { requirePartnerEsim, requireValidIccid } from "./topup-esim.ts";
import { type TopUpOfferRow, topUpOffer } from "./topup-offer.ts";

type Money = { amount_minor: number; currency: string };

/** The contract's TopUpRow, plus coverage and region. Field order is the wire order. */
export type TopUpRowBody = {
  package_id: string;
  external_package_id: string;
  name: string;
  data_mb: number | null;
  validity_days: number;
  wholesale_price: Money;
  coverage: "country" | "regional" | "global";
  region: string | null;
};

export type AvailableTopUps = { iccid: string; data: TopUpRowBody[] };

function toTopUpRow(row: TopUpOfferRow): TopUpRowBody {
  return {
    package_id: row.package_id,
    external_package_id: row.external_package_id,
    name: row.name,
    data_mb: row.data_mb,
    validity_days: row.validity_days,
    wholesale_price: money(row.wholesale_minor, row.currency),
    coverage: row.coverage,
    region: row.region,
  };
}

export async function listAvailableTopUps(
  db: Kysely<Database>,
  partner_id: string,
  iccid: string,
): Promise<AvailableTopUps> {
  requireValidIccid(iccid);
  const esim = await requirePartnerEsim(db, partner_id, iccid);
  const offer = await topUpOffer(db, esim.package_id);
  return { iccid: esim.iccid, data: offer.map(toTopUpRow) };
}
