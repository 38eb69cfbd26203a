// The support search of the consoles' order and eSIM lists: one form (q, status, type, dates) read
// from the query string, kept in every page link, and handed to the API's use cases as they are
// (listOrders, listEsims, listPartnerOrders), so the console finds what the API finds. An unusable
// value (a q of control characters, from after to) is the use case's 400 shown beside the form.
import type { FastifyRequest } from "fastify";
import { MAX_SEARCH_LENGTH } from "../orders/search-query.ts";
import { DATE } from "../shared/day-range.ts";
import { ApiError } from "../shared/errors.ts";
import { type Html, html } from "./html.ts";
import { notice } from "./layout.ts";
import { queryValue } from "./request.ts";

export const ORDER_STATUSES = ["completed", "pending", "failed", "refunded"] as const;
export const ORDER_TYPES = ["esim", "topup"] as const;
const TYPE_LABELS: Record<(typeof ORDER_TYPES)[number], string> = { esim: "new eSIM", topup: "top-up" };

/** The query names a search page reads (its readsQuery list, with `cursor`). */
export const SEARCH_QUERY_NAMES = ["q", "status", "type", "from", "to", "cursor"] as const;

export type Search<Status extends string> = {
  q: string | null;
  status: Status | null;
  type: (typeof ORDER_TYPES)[number] | null;
  from: string | null;
  to: string | null;
};

/** The form's values from the query string; an unknown status or type, or a malformed date, is ignored. */
export function readSearch<Status extends string>(
  request: FastifyRequest,
  statuses: readonly Status[],
): Search<Status> {
  const date = (name: string) => {
    const value = queryValue(request, name);
    return value !== null && DATE.test(value) ? value : null;
  };
  return {
    q: queryValue(request, "q")?.slice(0, MAX_SEARCH_LENGTH) ?? null,
    status: statuses.find((status) => status === queryValue(request, "status")) ?? null,
    type: ORDER_TYPES.find((type) => type === queryValue(request, "type")) ?? null,
    from: date("from"),
    to: date("to"),
  };
}

/** The search as query parameters (empty ones left out), with `cursor` when given. */
export function searchQuery(search: Search<string>, cursor?: string | null): string {
  const entries = Object.entries({ ...search, cursor: cursor ?? null }).filter(
    (entry): entry is [string, string] => typeof entry[1] === "string" && entry[1].length > 0,
  );
  return new URLSearchParams(entries).toString();
}

function options(values: readonly string[], chosen: string | null, label = (value: string) => value): Html[] {
  return values.map(
    (value) =>
      html`<option value="${value}"${value === chosen ? html` selected` : ""}>${label(value)}</option>`,
  );
}

/** The search form; `types` false on the eSIMs page (an eSIM has no order type). */
export function searchForm<Status extends string>(
  action: string,
  search: Search<Status>,
  statuses: readonly Status[],
  types: boolean,
): Html {
  return html`<form method="get" action="${action}" class="panel" role="search"><div class="fields">
      <div class="wide"><label for="q">Search</label>
        <input id="q" name="q" type="search" value="${search.q ?? ""}" maxlength="${MAX_SEARCH_LENGTH}"
          autocomplete="off" spellcheck="false" aria-describedby="q-hint">
        <p class="hint" id="q-hint">Order id, ICCID, traveller's email (the whole address, any case), or the start of a client reference or last name.</p></div>
      <div><label for="status">Status</label>
        <select id="status" name="status"><option value="">Any</option>${options(statuses, search.status)}</select></div>
      ${
        types
          ? html`<div><label for="type">Type</label><select id="type" name="type"><option value="">Any</option>${options(
              ORDER_TYPES,
              search.type,
              (type) => TYPE_LABELS[type as (typeof ORDER_TYPES)[number]],
            )}</select></div>`
          : ""
      }
      <div><label for="from">From (UTC day)</label><input id="from" name="from" type="date" value="${search.from ?? ""}"></div>
      <div><label for="to">To (UTC day, included)</label><input id="to" name="to" type="date" value="${search.to ?? ""}"></div>
      <div class="submit"><button type="submit">Search</button></div>
    </div></form>`;
}

/** What a search page shows: the form's place and choices, the list's use case and its table. */
export type SearchPage<Status extends string, Row> = {
  action: string;
  statuses: readonly Status[];
  /** Whether the form offers the order type (the orders' lists do, the eSIMs' does not). */
  types: boolean;
  /** The pager's link to the next page ("Older orders"). */
  older: string;
  list: (
    search: Search<Status>,
    cursor: string | null,
  ) => Promise<{ data: Row[]; next_cursor: string | null }>;
  table: (rows: Row[]) => Html;
};

/**
 * A page of a list under the search form, the filters kept in the pager's links. The use case's
 * 400 (a bad q, from after to) is shown beside the form, the values kept for correcting. A page
 * may be short, even empty, with a next page (a filter no index narrows examines a bounded number
 * of rows a page): the pager offers it all the same.
 */
export async function searchPage<Status extends string, Row>(
  request: FastifyRequest,
  shown: SearchPage<Status, Row>,
): Promise<Html> {
  const search = readSearch(request, shown.statuses);
  const cursor = queryValue(request, "cursor");
  let rows: { data: Row[]; next_cursor: string | null } = { data: [], next_cursor: null };
  let refused: string | null = null;
  try {
    rows = await shown.list(search, cursor);
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== "invalid_request") throw error;
    refused = error.message;
  }
  const first = searchQuery(search);
  return html`${searchForm(shown.action, search, shown.statuses, shown.types)}
    ${refused ? notice("error", refused) : shown.table(rows.data)}
    <div class="pager">${cursor ? html`<a href="${shown.action}${first ? `?${first}` : ""}">First page</a>` : ""}${
      rows.next_cursor
        ? html`<a href="${shown.action}?${searchQuery(search, rows.next_cursor)}">${shown.older}</a>`
        : ""
    }</div>`;
}
