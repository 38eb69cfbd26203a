// The paged reads: GET /v2/packages [SPEC browse-packages] and GET /v2/orders, GET /v2/orders/{id}
// [SPEC manage-orders], [DOC:get-order-list-11883022e0], [DOC:get-order-11883023e0]. Paging is
// Laravel's (`links`, `meta.current_page`/`last_page`/`per_page` as a string ...), documented on
// the orders list; on packages the keys are UNCONFIRMED (the Node SDK reads `meta.last_page`).

import { countOrders, listOrders, type OrderFilters, selectOrder, selectSimsOfOrders } from "./airalo.sql.ts";
import { type Answer, invalid, ok, unauthorizedAction } from "./answers.ts";
import type { Context } from "./context.ts";
import { destinationShape, listedOrderShape, selectDestinations } from "./shapes.ts";

export type Query = Record<string, string | string[] | undefined>;

/** UNCONFIRMED defaults and caps: the docs give none (Laravel's default page is 25). */
const DEFAULT_ORDERS_LIMIT = 25;
const DEFAULT_PACKAGES_LIMIT = 100;
const MAX_LIMIT = 1_000;

function one(query: Query, name: string): string | null {
  const value = query[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === "" ? null : first;
}

/** limit and page: integers, or the documented 422 ([SPEC manage-orders] "Order List (422)"). */
function paging(query: Query, fallback: number): Answer | { limit: number; page: number } {
  const errors: Record<string, string> = {};
  const limit = one(query, "limit");
  const page = one(query, "page");
  if (limit !== null && !/^\d+$/.test(limit)) errors.limit = "The limit must be an integer.";
  if (page !== null && !/^\d+$/.test(page)) errors.page = "The page must be an integer.";
  if (Object.keys(errors).length > 0) return invalid(errors);
  return {
    limit: Math.min(MAX_LIMIT, Math.max(1, Number(limit ?? fallback))),
    page: Math.max(1, Number(page ?? 1)),
  };
}

function pageEnvelope(path: string, page: number, limit: number, total: number, shown: number) {
  const last_page = Math.max(1, Math.ceil(total / limit));
  const link = (number: number) => `${path}?page=${number}`;
  return {
    links: {
      first: link(1),
      last: link(last_page),
      prev: page > 1 ? link(page - 1) : null,
      next: page < last_page ? link(page + 1) : null,
    },
    meta: {
      message: "success",
      current_page: page,
      from: shown > 0 ? (page - 1) * limit + 1 : null,
      last_page,
      path,
      per_page: String(limit),
      to: shown > 0 ? (page - 1) * limit + shown : null,
      total,
    },
  };
}

export function listPackages(query: Query, base_url: string): Answer {
  const paged = paging(query, DEFAULT_PACKAGES_LIMIT);
  if ("status" in paged) return paged;
  const type = one(query, "filter[type]");
  if (type !== null && type !== "local" && type !== "global")
    return invalid({ "filter.type": "The selected filter.type is invalid." });
  const include = (one(query, "include") ?? "").split(",");
  const selected = selectDestinations({
    type,
    country: one(query, "filter[country]")?.toUpperCase() ?? null,
    include_topup: include.includes("topup"),
  });
  const shown = selected.slice((paged.page - 1) * paged.limit, paged.page * paged.limit);
  return {
    status: 200,
    body: {
      pricing: { model: "net_pricing", discount_percentage: 0 },
      data: shown.map(({ entry, packages }) => destinationShape(entry, packages)),
      ...pageEnvelope(`${base_url}/v2/packages`, paged.page, paged.limit, selected.length, shown.length),
    },
  };
}

const ORDER_STATUSES = ["completed", "failed", "partially_refunded", "refunded"];

function orderFilters(query: Query): Answer | OrderFilters {
  const status = one(query, "filter[order_status]");
  if (status !== null && !ORDER_STATUSES.includes(status))
    return invalid({ "filter.order_status": "The selected filter.order status is invalid." });
  const range = one(query, "filter[created_at]");
  // "Y-m-d - Y-m-d": a dash between two dates that contain dashes themselves.
  const dates = range === null ? null : /^(\d{4}-\d{2}-\d{2})\s*-\s*(\d{4}-\d{2}-\d{2})$/.exec(range.trim());
  if (range !== null && dates === null)
    return invalid({ "filter.created_at": "The filter.created at must be a date range: Y-m-d - Y-m-d." });
  return {
    description: one(query, "filter[description]"),
    code: one(query, "filter[code]"),
    iccid: one(query, "filter[iccid]"),
    order_status: status,
    created_from: dates?.[1] ?? null,
    created_to: dates?.[2] ?? null,
  };
}

export function includes(query: Query): Set<string> {
  return new Set(
    (one(query, "include") ?? "")
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean),
  );
}

export async function listOrdersAnswer(context: Context, query: Query, base_url: string): Promise<Answer> {
  const paged = paging(query, DEFAULT_ORDERS_LIMIT);
  if ("status" in paged) return paged;
  const filters = orderFilters(query);
  if ("status" in filters) return filters;
  const [total, orders] = await Promise.all([
    countOrders(context.pool, filters),
    listOrders(context.pool, filters, paged.limit, (paged.page - 1) * paged.limit),
  ]);
  const include = includes(query);
  const sims = include.has("sims")
    ? await selectSimsOfOrders(
        context.pool,
        orders.map((order) => order.id),
      )
    : [];
  const data = orders.map((order) =>
    listedOrderShape(
      order,
      sims.filter((sim) => sim.order_id === order.id),
      include,
    ),
  );
  return {
    status: 200,
    body: { data, ...pageEnvelope(`${base_url}/v2/orders`, paged.page, paged.limit, total, data.length) },
  };
}

export async function getOrderAnswer(context: Context, id: string, query: Query): Promise<Answer> {
  // "This action is unauthorized." (401) is the only documented failure; an id that is not an
  // order of this company answers it too (UNCONFIRMED: a truly unknown id may be 404 on Airalo).
  if (!/^\d{1,18}$/.test(id)) return unauthorizedAction();
  const order = await selectOrder(context.pool, id);
  if (!order) return unauthorizedAction();
  const include = includes(query);
  const sims = include.has("sims") ? await selectSimsOfOrders(context.pool, [order.id]) : [];
  return ok(listedOrderShape(order, sims, include));
}
