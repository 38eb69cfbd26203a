// GET /v1/esims: the partner's eSIMs, newest first, by pages.
import { Type } from "typebox";
import { searchParameter } from "../orders/search-query.ts";
import { dateParameters } from "../shared/day-range.ts";
import { endpoint } from "../shared/endpoint.ts";
import {
  ClientReferenceFilter,
  errorResponses,
  PARTNER_SECURITY,
  pageParameters,
  pageSize,
} from "../shared/schemas.ts";
import { DEFAULT_PAGE_SIZE, EsimPage, listEsims } from "./list-esims.ts";
import { EsimStatusSchema } from "./render-esim.ts";

export const listEsimsRoute = endpoint({
  method: "GET",
  url: "/esims",
  schema: {
    operationId: "listEsims",
    summary: "Your eSIMs, newest first",
    description:
      "Pages stay stable while new eSIMs are sold, under any filters (pass the same filters with `cursor`). " +
      "Filters combine: the `client_reference` of the order that bought the eSIM (exact), `q` (the support " +
      "search, as on orders: the ICCID, the order id, the traveller's email, or the start of a client " +
      "reference or last name), `status`, `from` and `to` (UTC days, both included, on `created_at`). " +
      "`usage.updated_at` says how fresh each eSIM's figures are.",
    tags: ["eSIMs"],
    security: PARTNER_SECURITY,
    querystring: Type.Object(
      {
        client_reference: ClientReferenceFilter,
        q: searchParameter,
        status: Type.Optional(EsimStatusSchema),
        ...dateParameters,
        ...pageParameters(DEFAULT_PAGE_SIZE),
      },
      { additionalProperties: false },
    ),
    response: { 200: EsimPage, ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed") },
  },
  handler: (ctx) => async (request) => {
    const query = request.query;
    return listEsims(ctx.db, {
      partner_id: request.partner!.partner_id,
      client_reference: query.client_reference ?? null,
      status: query.status ?? null,
      q: query.q ?? null,
      from: query.from ?? null,
      to: query.to ?? null,
      limit: pageSize(query.limit, DEFAULT_PAGE_SIZE),
      cursor: query.cursor ?? null,
      public_base_url: ctx.config.public_base_url,
    });
  },
});
