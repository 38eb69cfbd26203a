// GET /admin/partners/{partner_id}: one partner, its standing and its balance.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, errorResponses, PrefixedId } from "../shared/schemas.ts";
import { AdminPartner, renderAdminPartner } from "./admin-partner.ts";
import { findPartner } from "./list-partners.ts";

export const getPartnerRoute = endpoint({
  method: "GET",
  url: "/partners/:partner_id",
  schema: {
    operationId: "adminGetPartner",
    summary: "One partner: its standing and balance",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr") }),
    response: { 200: AdminPartner, ...errorResponses(...ADMIN_ERRORS, "partner_not_found") },
  },
  handler: (ctx) => async (request) => {
    const partner = await findPartner(ctx.db, request.params.partner_id);
    if (!partner) throw new ApiError("partner_not_found", `No partner ${request.params.partner_id}.`);
    return renderAdminPartner(ctx.db, partner);
  },
});
