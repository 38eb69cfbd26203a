// GET /admin/partners/{partner_id}/pricing: a partner's discount and overrides.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, errorResponses, PrefixedId } from "../shared/schemas.ts";
import { getPartnerPricing, Pricing } from "./partner-pricing.ts";

export const getPartnerPricingRoute = endpoint({
  method: "GET",
  url: "/partners/:partner_id/pricing",
  schema: {
    operationId: "adminGetPartnerPricing",
    summary: "A partner's prices (discount 0 and no overrides: list prices)",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr") }),
    response: { 200: Pricing, ...errorResponses(...ADMIN_ERRORS, "partner_not_found") },
  },
  handler: (ctx) => async (request) => getPartnerPricing(ctx.db, request.params.partner_id),
});
