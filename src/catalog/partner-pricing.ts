// Operator use cases: read and replace a partner's pricing (PUT/GET /admin/partners/{id}/pricing,
// `npm run cli -- partners pricing`). A change bumps the catalog version in its transaction, so
// every process's discovery cache serves the new prices within milliseconds (catalog_changed).
// A cart keeps the price it was made at: only carts made after the change see it. Each package
// whose price changes for the partner is an `updated` change in its feed (GET /v1/catalog/changes).
import type { Kysely } from "kysely";
import { type Static, Type } from "typebox";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import { MAX_AMOUNT_MINOR } from "../ledger/accounts.ts";
import { crashPoint } from "../lib/crash-points.ts";
import { findPartner } from "../partners/list-partners.ts";
import type { Actor } from "../shared/actor.ts";
import { ApiError } from "../shared/errors.ts";
import { partnerPriceList } from "./partner-prices.ts";
import { priceList } from "./price-list.ts";
import { existingPackages, replacePricing, selectPricing } from "./pricing.sql.ts";
import { lockChangeLog, recordPriceListChanges } from "./record-catalog-changes.ts";

/** More overrides than a real price list needs; bounds the body and the statement. */
export const MAX_OVERRIDES = 1_000;

export const Pricing = Type.Object(
  {
    discount_percent: Type.Integer({
      minimum: 0,
      maximum: 90,
      description:
        "Off the list price of every package without an override, rounded half up to the minor unit.",
    }),
    overrides: Type.Array(
      Type.Object(
        {
          package_id: Type.String({ minLength: 1, maxLength: 64, pattern: "^[\\x21-\\x7e]+$" }),
          amount_minor: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_MINOR }),
        },
        { additionalProperties: false },
      ),
      {
        maxItems: MAX_OVERRIDES,
        description: "This partner's wholesale price of these packages, whatever the discount.",
      },
    ),
  },
  { additionalProperties: false },
);
export type Pricing = Static<typeof Pricing>;

async function requirePartner(db: Kysely<Database>, partner_id: string): Promise<void> {
  if (!(await findPartner(db, partner_id)))
    throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
}

export async function getPartnerPricing(db: Kysely<Database>, partner_id: string): Promise<Pricing> {
  await requirePartner(db, partner_id);
  const read = await selectPricing(db, partner_id);
  return { discount_percent: read.discount_percent, overrides: read.overrides };
}

function checkOverrides(overrides: Pricing["overrides"]): void {
  const seen = new Set<string>();
  for (const [i, o] of overrides.entries()) {
    if (seen.has(o.package_id)) {
      throw new ApiError("invalid_request", `Package ${o.package_id} is overridden twice.`, {
        errors: [{ field: `overrides/${i}/package_id`, code: "not_allowed", message: "is given twice" }],
      });
    }
    seen.add(o.package_id);
  }
}

export async function setPartnerPricing(
  db: Kysely<Database>,
  partner_id: string,
  pricing: Pricing,
  actor: Actor,
): Promise<Pricing> {
  checkOverrides(pricing.overrides);
  await requirePartner(db, partner_id);
  await db.transaction().execute(async (trx) => {
    const known = await existingPackages(
      trx,
      pricing.overrides.map((o) => o.package_id),
    );
    const unknown = pricing.overrides.find((o) => !known.has(o.package_id));
    if (unknown) {
      // The contract's 422: the body names a package that does not exist (not a missing resource).
      throw new ApiError("package_not_found", `No package ${unknown.package_id}.`, { alternate: true });
    }
    // The change feed compares this partner's prices before and after: read under the lock every
    // catalog writer takes, so no other change to the catalog or to these prices falls between.
    await lockChangeLog(trx);
    const before = await partnerPriceList(trx, partner_id);
    await replacePricing(trx, partner_id, pricing.discount_percent, pricing.overrides);
    const after = priceList(
      pricing.discount_percent,
      new Map(pricing.overrides.map((o) => [o.package_id, o.amount_minor])),
    );
    await recordPriceListChanges(trx, partner_id, before, after);
    crashPoint("before_pricing_commit");
    // Up to MAX_OVERRIDES overrides do not fit an entry (8 KiB): the entry says how many.
    await recordAudit(trx, {
      actor,
      action: "pricing.updated",
      partner_id,
      target: { type: "pricing", id: partner_id },
      details: { discount_percent: pricing.discount_percent, override_count: pricing.overrides.length },
    });
  });
  return getPartnerPricing(db, partner_id);
}
