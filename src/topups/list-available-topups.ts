// Partner use case: the top-ups offered for one of the partner's eSIMs (spec 4.4).
import type { Kysely } from "kysely";
import { type Static, Type } from "typebox";
import type { Database } from "../db/schema.ts";
import { Money, money } from "../shared/schemas.ts";
import { requirePartnerEsim, requireValidIccid } from "./topup-esim.ts";
import { MAX_TOPUP_ROWS, type TopUpOfferRow, takesTopUps, topUpOffer } from "./topup-offer.ts";

export const TopUpRow = Type.Object(
  {
    package_id: Type.String({ description: "Send it unchanged to `POST /orders/submit-topup`." }),
    external_package_id: Type.String({ description: "The carrier's id; send it unchanged too." }),
    name: Type.String(),
    data_mb: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description:
        "Data added, in megabytes. null would mean unlimited; unlimited packages are not offered as top-ups.",
    }),
    validity_days: Type.Integer({ minimum: 1 }),
    wholesale_price: Type.Object(Money.properties, {
      additionalProperties: false,
      description: "What the wallet is debited for this top-up: your price list's price.",
    }),
    list_price: Type.Object(Money.properties, {
      additionalProperties: false,
      description: "The catalog's wholesale price before your pricing.",
    }),
    coverage: Type.Enum(["country", "regional", "global"]),
    region: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false, description: "A package that can top up this eSIM." },
);

export const AvailableTopUps = Type.Object(
  {
    iccid: Type.String(),
    data: Type.Array(TopUpRow, {
      maxItems: MAX_TOPUP_ROWS,
      description:
        "Active, metered packages covering every destination of the eSIM's original package: country " +
        "packages, then regional, then global; within each by data size, validity and id.",
    }),
  },
  { additionalProperties: false },
);

/** The contract's TopUpRow, plus coverage and region. Field order is the wire order. */
export type TopUpRowBody = Static<typeof TopUpRow>;
export type AvailableTopUps = Static<typeof AvailableTopUps>;

function toTopUpRow(row: TopUpOfferRow): TopUpRowBody {
  return {
    package_id: row.package_id,
    external_package_id: row.external_package_id,
    name: row.name,
    data_mb: row.data_mb,
    validity_days: row.validity_days,
    wholesale_price: money(row.wholesale_minor, row.currency),
    list_price: money(row.list_minor, row.currency),
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
  // None while a refund of the eSIM is under way: submit-topup.ts refuses them then.
  if (!takesTopUps(esim.status) || esim.refund_under_way) return { iccid: esim.iccid, data: [] };
  const offer = await topUpOffer(db, partner_id, esim);
  return { iccid: esim.iccid, data: offer.map(toTopUpRow) };
}
