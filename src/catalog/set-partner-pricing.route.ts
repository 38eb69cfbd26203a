// PUT /admin/partners/{partner_id}/pricing: replace a partner's discount and overrides.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, alternate, errorResponses, PrefixedId } from "../shared/schemas.ts";
import { catalogChanged } from "./catalog-cache.ts";
import { Pricing, setPartnerPricing } from "./partner-pricing.ts";

export const setPartnerPricingRoute = endpoint({
  method: "PUT",
  url: "/partners/:partner_id/pricing",
  schema: {
    operationId: "adminSetPartnerPricing",
    summary: "Set a partner's prices (a discount and per-package overrides)",
    description:
      "Replaces the partner's pricing. Its `wholesale_price` everywhere (discovery, top-ups, new carts) " +
      "becomes its override, else the list price less the discount, rounded half up to the minor unit. " +
      "Carts made before keep their price. An unknown package in `overrides` is 422 `package_not_found`.",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr") }),
    body: Pricing,
    response: {
      200: Pricing,
      ...errorResponses(...ADMIN_ERRORS, "partner_not_found", alternate("package_not_found")),
    },
  },
  handler: (ctx) => async (request) => {
    const pricing = await setPartnerPricing(
      ctx.db,
      request.params.partner_id,
      request.body,
      actorOf(request),
    );
    // This process need not wait for its own catalog_changed notice (as the import): its next
    // discovery or destinations answer re-reads the version and sees the new prices.
    catalogChanged(ctx.pool);
    return pricing;
  },
});
