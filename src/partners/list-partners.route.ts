// GET /admin/partners: the partners, newest first, by pages; found by name or id, and by standing.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, errorResponses, pageParameters, pageSize } from "../shared/schemas.ts";
import {
  DEFAULT_PARTNER_PAGE,
  listPartnersPage,
  MAX_PARTNER_QUERY_LENGTH,
  PartnerPage,
} from "./search-partners.ts";

export const listPartnersRoute = endpoint({
  method: "GET",
  url: "/partners",
  schema: {
    operationId: "adminListPartners",
    summary: "The partners, newest first",
    description:
      "`q` finds partners whose name contains it (case-insensitive) or whose `partner_id` is exactly it; " +
      "`status` keeps the `active` or the `suspended` ones. Pages stay stable while partners are added.",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    querystring: Type.Object(
      {
        q: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: MAX_PARTNER_QUERY_LENGTH,
            pattern: "^[^\\x00-\\x1f\\x7f]+$",
          }),
        ),
        status: Type.Optional(Type.Union([Type.Literal("active"), Type.Literal("suspended")])),
        ...pageParameters(DEFAULT_PARTNER_PAGE),
      },
      { additionalProperties: false },
    ),
    response: { 200: PartnerPage, ...errorResponses(...ADMIN_ERRORS, "invalid_request") },
  },
  handler: (ctx) => async (request) => {
    const query = request.query;
    return listPartnersPage(ctx.db, {
      q: query.q ?? null,
      status: query.status ?? null,
      limit: pageSize(query.limit, DEFAULT_PARTNER_PAGE),
      cursor: query.cursor ?? null,
    });
  },
});
