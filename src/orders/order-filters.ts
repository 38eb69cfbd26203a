// The query parameters that filter a list of orders, shared by the partner's GET /v1/profile/orders
// and the operator's GET /admin/partners/{partner_id}/orders: one schema, one meaning.
import { Type } from "typebox";
import { dateParameters } from "../shared/day-range.ts";
import { ClientReferenceFilter, pageParameters } from "../shared/schemas.ts";
import { DEFAULT_PAGE_SIZE, type OrderListFilters } from "./list-orders.ts";
import { searchParameter } from "./search-query.ts";

export const orderFilterParameters = {
  client_reference: ClientReferenceFilter,
  q: searchParameter,
  status: Type.Optional(
    Type.Union(
      [Type.Literal("pending"), Type.Literal("completed"), Type.Literal("failed"), Type.Literal("refunded")],
      {
        description: "Only orders in this status.",
      },
    ),
  ),
  type: Type.Optional(
    Type.Union([Type.Literal("esim"), Type.Literal("topup")], {
      description: "Only new eSIMs, or only top-ups.",
    }),
  ),
  ...dateParameters,
  ...pageParameters(DEFAULT_PAGE_SIZE),
};

export const ORDER_FILTERS_DESCRIPTION =
  "Pages stay stable while new orders arrive, under any filters (pass the same filters with `cursor`). " +
  "Filters combine (all must hold): `client_reference` (exact), `q` (the support search), `status`, `type`, " +
  "`from` and `to` (UTC days, both included, on `created_at`).";

type FilterQuery = {
  client_reference?: string;
  q?: string;
  status?: OrderListFilters["status"];
  type?: OrderListFilters["type"];
  from?: string;
  to?: string;
};

export function orderFiltersOf(query: FilterQuery): OrderListFilters {
  return {
    client_reference: query.client_reference ?? null,
    q: query.q ?? null,
    status: query.status ?? null,
    type: query.type ?? null,
    from: query.from ?? null,
    to: query.to ?? null,
  };
}
