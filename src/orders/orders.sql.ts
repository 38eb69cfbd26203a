// SQL of orders: creation as pending, completion, failure, and the reads that render them.

import { randomBytes } from "node:crypto";
import { type RawBuilder, sql, type Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import { sendAhead } from "../db/pool.ts";
import { folded, startsWithLower } from "../db/prefix-match.ts";
import type { Database, PackageSupplier } from "../db/schema.ts";
import type { OrderForEmail } from "../notifications/send-confirmation-emails.ts";
import type { TimeWindow } from "../shared/day-range.ts";
import { holderGone } from "../shared/liveness.ts";
import type { NewOrder, OrderPurchase, OrderRow, PurchaseEntry, PurchaseRow } from "./order.ts";
import { MAX_ROWS_EXAMINED, type SearchQuery, searchIsIndexed } from "./search-query.ts";

function newLeaseToken(): string {
  return randomBytes(12).toString("base64url");
}

const ORDER_COLUMN_LIST = [
  "order_id",
  "seq",
  "partner_id",
  "type",
  "status",
  "cart_key",
  "package_id",
  "external_package_id",
  "supplier",
  "data_mb",
  "validity_days",
  "start_date",
  "total_minor",
  "currency",
  "client_reference",
  "email",
  "phone",
  "first_name",
  "last_name",
  "iccid",
  "failure_code",
  "failure_detail",
  "carrier_refusal",
  "lease_until",
  "lease_token",
  "lease_holder",
  "created_at",
  "resolved_at",
  "refunded_at",
  "refund_requested_at",
  "language",
  "quantity",
] as const;
export const ORDER_COLUMNS = sql.raw(ORDER_COLUMN_LIST.join(", "));
/** The same columns of `orders o`. */
const O_COLUMNS = sql.raw(ORDER_COLUMN_LIST.map((column) => `o.${column}`).join(", "));

/** Lease and resolver timing of a new pending order, and who holds its lease (null: no heartbeat). */
/** A lease's length for an order of each supplier: its adapter's longest operation, and a margin. */
export type LeaseBySupplier = Readonly<Record<PackageSupplier, number>>;

/** The lease, in seconds, of the order in row `o` (or of `supplier`, known before its insert). */
function leaseSeconds(lease: LeaseBySupplier, supplier?: PackageSupplier): RawBuilder<number> {
  if (supplier !== undefined) return sql<number>`${lease[supplier] / 1000}::float8`;
  return sql<number>`(case o.supplier when 'airalo' then ${lease.airalo / 1000}::float8
                                      when 'esimgo' then ${lease.esimgo / 1000}::float8
                                      else ${lease.carrier / 1000}::float8 end)`;
}

export type PendingTiming = {
  lease_ms: LeaseBySupplier;
  resolve_after_ms: number;
  lease_holder: string | null;
};

/**
 * Inserts the order as pending, leased to the request that creates it for `lease_ms` (held by the
 * process `lease_holder`: taken over if that process stops beating, liveness.ts), due for the
 * resolver sweep `resolve_after_ms` from now, sent ahead of the transaction's next statement
 * (sendAhead): `order()` answers the order as stored once that statement has been answered, or
 * null when this cart already has an order (the unique cart_key).
 */
export async function insertPendingOrderAhead(
  trx: Transaction<Database>,
  order: NewOrder,
  timing: PendingTiming,
): Promise<{ order(): Promise<OrderRow | null> }> {
  const ahead = await sendAhead(() => pendingOrderInsert(order, timing).execute(trx));
  return { order: async () => (await ahead.rows())[0] ?? null };
}

function pendingOrderInsert(order: NewOrder, timing: PendingTiming): RawBuilder<OrderRow> {
  // Listed in pending_orders by the same statement (migration 0046): the list is what the resolver
  // reads, so that no index of orders depends on the status a completion changes.
  return sql<OrderRow>`
    with inserted as (
      insert into orders (order_id, partner_id, type, status, cart_key, package_id, external_package_id, supplier, data_mb,
                          validity_days, start_date, total_minor, currency, client_reference, email, phone, first_name,
                          last_name, iccid, topup_iccid, language, quantity, lease_until, lease_token, lease_holder,
                          next_resolve_at)
      values (${order.order_id}, ${order.partner_id}, ${order.type}, 'pending', ${order.cart_key}, ${order.package_id},
              ${order.external_package_id}, ${order.supplier}, ${order.data_mb}, ${order.validity_days}, ${order.start_date}::date,
              ${order.total_minor}, ${order.currency},
              ${order.client_reference}, ${order.email}, ${order.phone}, ${order.first_name}, ${order.last_name},
              ${order.iccid}, ${order.type === "topup" ? order.iccid : null}::text, ${order.language}, ${order.quantity},
              clock_timestamp() + make_interval(secs => ${leaseSeconds(timing.lease_ms, order.supplier)}),
              ${newLeaseToken()},
              ${timing.lease_holder}, clock_timestamp() + make_interval(secs => ${timing.resolve_after_ms / 1000}))
      on conflict (cart_key) do nothing
      returning ${ORDER_COLUMNS}
    ), listed as (
      insert into pending_orders (order_id, created_at) select order_id, created_at from inserted
    )
    select * from inserted`;
}

export async function orderById(
  db: Executor,
  order_id: string,
  partner_id?: string,
): Promise<OrderRow | null> {
  const result = await sql<OrderRow>`
    select ${ORDER_COLUMNS} from orders
    where order_id = ${order_id} ${partner_id === undefined ? sql`` : sql`and partner_id = ${partner_id}`}`.execute(
    db,
  );
  return result.rows[0] ?? null;
}

export async function orderByCart(db: Executor, cart_key: string): Promise<OrderRow | null> {
  const result =
    await sql<OrderRow>`select ${ORDER_COLUMNS} from orders where cart_key = ${cart_key}`.execute(db);
  return result.rows[0] ?? null;
}

/** Who claims a lease, and for how long. */
export type LeaseClaim = { lease_ms: LeaseBySupplier; lease_holder: string | null };

/** The lease of `orders` row `o` may be taken: nobody holds it, it ran out, or its holder is gone. */
function leaseTakable(): RawBuilder<boolean> {
  return sql<boolean>`(o.lease_until is null or o.lease_until <= clock_timestamp() or ${holderGone(sql`o.lease_holder`)})`;
}

/**
 * Takes the right to drive a pending order (call the carrier for it) for `lease_ms`, unless
 * someone else holds a lease that has not run out and whose holder still beats (liveness.ts).
 * Returns the order when taken, null otherwise. Two claimers never both win: the second waits
 * on the row lock and rechecks the row the first wrote, whose holder is alive.
 */
export async function claimLease(
  db: Executor,
  order_id: string,
  claim: LeaseClaim,
): Promise<OrderRow | null> {
  // clock_timestamp(), not now(): the lease runs from this moment, not from the transaction's start.
  const result = await sql<OrderRow>`
    update orders o
    set lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds(claim.lease_ms)}),
        lease_token = ${newLeaseToken()}, lease_holder = ${claim.lease_holder}
    where o.order_id = ${order_id} and o.status = 'pending' and ${leaseTakable()}
    returning ${O_COLUMNS}`.execute(db);
  return result.rows[0] ?? null;
}

/**
 * The resolver sweep's claim: up to `limit` pending orders that nobody drives and that are due
 * (next_resolve_at passed and the lease run out), or whose lease holder is gone (a crashed
 * process's order is taken over at once, not RESOLVE_AFTER_MS after its creation), skipping rows
 * another sweep has locked. Each is leased to this claimer for `lease_ms` and its next look pushed
 * back with capped exponential backoff (2, 4, 8 ... seconds, at most `max_backoff_s`), so an order
 * whose carrier stays away is asked again less and less often, and never abandoned.
 */
export async function claimDueOrders(
  db: Executor,
  input: LeaseClaim & { limit: number; max_backoff_s: number },
): Promise<OrderRow[]> {
  const result = await sql<OrderRow>`
    update orders o
    set lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds(input.lease_ms)}),
        lease_token = ${newLeaseToken()}, lease_holder = ${input.lease_holder},
        resolve_attempts = o.resolve_attempts + 1,
        next_resolve_at = clock_timestamp()
          + make_interval(secs => least(${input.max_backoff_s}::float8, 2 ^ least(o.resolve_attempts + 1, 16)))
    from (
      select o.order_id from pending_orders p join orders o on o.order_id = p.order_id
      where o.status = 'pending'
        and ((o.next_resolve_at <= now() and (o.lease_until is null or o.lease_until <= clock_timestamp()))
             or ${holderGone(sql`o.lease_holder`)})
      order by o.next_resolve_at
      limit ${input.limit}
      for update of o skip locked
    ) due
    where o.order_id = due.order_id and o.status = 'pending'
    returning ${O_COLUMNS}`.execute(db);
  return result.rows;
}

/**
 * Before a carrier call by a holder whose claim is no longer fresh: renews the lease for
 * `lease_ms` from now, only while the caller still holds it (same token, not run out, holder not
 * gone). False when it was taken over meanwhile: the caller must not call the carrier.
 */
export async function renewOwnLease(
  db: Executor,
  order_id: string,
  lease_token: string | null,
  lease_ms: number,
): Promise<boolean> {
  const result = await sql`
    update orders o set lease_until = clock_timestamp() + make_interval(secs => ${lease_ms / 1000})
    where o.order_id = ${order_id} and o.status = 'pending' and o.lease_token = ${lease_token}
      and o.lease_until > clock_timestamp() and not ${holderGone(sql`o.lease_holder`)}
    returning 1 as renewed`.execute(db);
  return result.rows.length === 1;
}

/** The order as it is once completed, with the purchase that completion recorded. */
export type CompletedOrder = OrderRow & { purchases: PurchaseEntry[] };

/**
 * pending -> completed, once, with everything a completion records, in one statement: the order
 * marked completed, the eSIM (a new eSIM's; a top-up's profile is read from its existing row), the
 * purchase, the bundle the order puts on the eSIM (contract "eSIMs": `bundles`, queued until the
 * carrier says otherwise; the original is position 0, a top-up its order's seq, migration 0005),
 * and, when asked, the confirmation email's outbox row. A top-up notifies `esim_changed` with its
 * bundle: at commit every process drops its cached body of the eSIM (esims/esim-cache.ts), so the
 * top-up shows at once. A new eSIM notifies nothing: its row did not exist before this commit, and
 * the cache keeps only found eSIMs, so no process can hold a body of it (and a purchase skips
 * PostgreSQL's notify lock, which every notifying commit takes in turn through its WAL flush).
 * A second finisher (resolver vs. request) matches no pending row and writes nothing: null.
 * The eSIM is first pulled by the sync `first_sync_after_s` later (esims.next_sync_at).
 */
export async function completeOrder(
  trx: Transaction<Database>,
  input: {
    order_id: string;
    iccid: string;
    /** A new eSIM's profile from the carrier; null for a top-up. */
    profile: { smdp_address: string; activation_code: string } | null;
    first_sync_after_s: number;
    confirmation_email: boolean;
  },
): Promise<CompletedOrder | null> {
  const { profile } = input;
  const result = await sql<OrderRow & { purchase: PurchaseRow | null; bundles: number; notified: number }>`
    with done as (
      update orders set status = 'completed', iccid = ${input.iccid}, resolved_at = now(), lease_until = null
      where order_id = ${input.order_id} and status = 'pending'
      returning ${ORDER_COLUMNS}
    ), unlisted as (
      delete from pending_orders where order_id = (select order_id from done)
    ), new_esim as (
      insert into esims (iccid, partner_id, order_id, package_id, smdp_address, activation_code, next_sync_at)
      select ${input.iccid}, partner_id, order_id, package_id, ${profile?.smdp_address ?? null}::text,
             ${profile?.activation_code ?? null}::text, now() + make_interval(secs => ${input.first_sync_after_s})
      from done where ${profile !== null}::boolean
      returning iccid, smdp_address, activation_code
    ), profile as (
      select iccid, smdp_address, activation_code from new_esim
      union all
      select e.iccid, e.smdp_address, e.activation_code from esims e
      where not ${profile !== null}::boolean and e.iccid = ${input.iccid} and exists (select 1 from done)
    ), purchase as (
      insert into purchases (order_id, position, package_id, iccid, smdp_address, activation_code, start_date)
      select d.order_id, 0, d.package_id, p.iccid, p.smdp_address, p.activation_code, d.start_date
      from done d cross join profile p
      returning order_id, position, package_id, iccid, smdp_address, activation_code, start_date
    ), bundle as (
      insert into esim_bundles (order_id, iccid, position, package_id, name, data_mb, validity_days)
      select d.order_id, ${input.iccid}, case when d.type = 'esim' then 0 else d.seq end, k.package_id, k.name,
             d.data_mb, d.validity_days
      from done d join packages k on k.package_id = d.package_id
      returning iccid
    ), outbox as (
      insert into email_outbox (order_id)
      select order_id from done where ${input.confirmation_email}::boolean
      returning order_id
    )
    select d.*, (select to_jsonb(p) from purchase p) as purchase,
           (select count(*) from bundle)::int as bundles,
           (select count(pg_notify('esim_changed', b.iccid)) from bundle b where ${profile === null}::boolean)::int
             as notified
    from done d`.execute(trx);
  // Every data-modifying part of a WITH runs once whether the final select reads it or not.
  const row = result.rows[0];
  if (row === undefined) return null;
  const { purchase, bundles, notified, ...order } = row;
  if (purchase === null) throw new Error(`order ${input.order_id}: no eSIM profile for ${input.iccid}`);
  if (bundles !== 1) throw new Error(`no package ${order.package_id} for the bundle`);
  if (notified !== (profile === null ? 1 : 0))
    throw new Error(`order ${input.order_id}: ${notified} notices`);
  return { ...order, purchases: [purchase] };
}

/** pending -> failed, once; `carrier_refusal` is the carrier's own text, kept for the operator. */
export async function markFailed(
  trx: Transaction<Database>,
  order_id: string,
  failure_code: string,
  carrier_refusal: string,
): Promise<OrderRow | null> {
  const result = await sql<OrderRow>`
    with failed as (
      update orders set status = 'failed', failure_code = ${failure_code},
                        carrier_refusal = ${carrier_refusal.slice(0, 500)}, resolved_at = now(), lease_until = null
      where order_id = ${order_id} and status = 'pending'
      returning ${ORDER_COLUMNS}
    ), unlisted as (
      delete from pending_orders where order_id = (select order_id from failed)
    )
    select * from failed`.execute(trx);
  return result.rows[0] ?? null;
}

/**
 * What the orders bought, by position: the eSIMs made (purchases) and, of a delivered group order, the
 * lines the carrier refused for good (order_lines, migration 0047), which were never charged.
 */
export async function purchasesOf(db: Executor, order_ids: string[]): Promise<OrderPurchase[]> {
  if (order_ids.length === 0) return [];
  const result = await sql<OrderPurchase>`
    select order_id, position, package_id, iccid, smdp_address, activation_code, start_date, 'completed' as status
    from purchases where order_id = any(${order_ids}::text[])
    union all
    select l.order_id, l.position, o.package_id, null, null, null, o.start_date, 'failed'
    from order_lines l join orders o on o.order_id = l.order_id
    where l.order_id = any(${order_ids}::text[]) and l.status = 'failed' and o.status in ('completed', 'refunded')
    order by order_id, position`.execute(db);
  return result.rows;
}

/** Newest first, keyset-paginated on seq: a page never shifts when new orders arrive. */
/** What a page of orders is filtered by; null or absent: not filtered. */
export type OrderFilters = {
  /** Exact, case-sensitive: the API's `client_reference` parameter. */
  client_reference: string | null;
  search?: SearchQuery | null;
  status?: OrderRow["status"] | null;
  type?: OrderRow["type"] | null;
  /** created_at in [from, until). */
  window?: TimeWindow | null;
};

/** A column of orders, of the table named `alias` in the statement (none: orders itself). */
function column(alias: string | null, name: (typeof ORDER_COLUMN_LIST)[number]): RawBuilder<unknown> {
  return alias === null ? sql.ref(name) : sql.ref(`${alias}.${name}`);
}

/**
 * One condition per kind of search, each bounded by an index of migration 0028 (or the primary
 * key): test/orders.search-plans.test.ts shows their plans. A prefix shorter than MIN_INDEXED_PREFIX
 * is the same condition, read on the rows examined instead (orderPageStatement).
 */
function searchCondition(search: SearchQuery, alias: string | null = null): RawBuilder<boolean> {
  const client_reference = column(alias, "client_reference");
  switch (search.kind) {
    case "order_id":
      return sql<boolean>`${column(alias, "order_id")} = ${search.order_id}`;
    case "iccid":
      // No index keys `iccid`, which a completion sets (migration 0046): the order that bought the
      // eSIM through esims' primary key, its top-ups through orders_topup_iccid_idx.
      return sql<boolean>`(${sql.ref(alias === null ? "topup_iccid" : `${alias}.topup_iccid`)} = ${search.iccid}
        or ${column(alias, "order_id")} = (select e.order_id from esims e where e.iccid = ${search.iccid}))`;
    case "email":
      return sql<boolean>`${folded(column(alias, "email"))} = ${folded(sql`${search.email}::text`)}`;
    case "prefix":
      // A BitmapOr of the two prefix indexes; `client_reference is not null` matches the partial one.
      return sql<boolean>`((${client_reference} is not null and ${startsWithLower(folded(client_reference), search.prefix, search.like)})
        or ${startsWithLower(folded(column(alias, "last_name")), search.prefix, search.like)})`;
  }
}

/** Exact and case-sensitive, through the folded index of 0028 (equality is one of its operators). */
function exactReference(client_reference: string, alias: string | null = null): RawBuilder<boolean> {
  const stored = column(alias, "client_reference");
  return sql<boolean>`${folded(stored)} = ${folded(sql`${client_reference}::text`)} and ${stored} = ${client_reference}`;
}

/**
 * The search by a traveller's email or a name's or reference's start, and the exact client
 * reference, on the orders another domain's statement joins as `alias` (the eSIMs' page joins the
 * order that bought each eSIM): the orders' columns and their indexes stay this domain's. partner_id
 * is named so that the indexes of 0028, which lead with it, apply.
 */
export function joinedOrderConditions(
  alias: string,
  partner_id: string,
  filters: {
    client_reference: string | null;
    search: Extract<SearchQuery, { kind: "email" | "prefix" }> | null;
  },
): RawBuilder<boolean> | null {
  const parts: RawBuilder<unknown>[] = [];
  if (filters.client_reference !== null) parts.push(exactReference(filters.client_reference, alias));
  if (filters.search !== null) parts.push(searchCondition(filters.search, alias));
  if (parts.length === 0) return null;
  return sql<boolean>`${column(alias, "partner_id")} = ${partner_id} and ${sql.join(parts, sql` and `)}`;
}

/** The conditions of the filters on a row of orders (none: every row). */
function orderConditions(filters: OrderFilters): RawBuilder<unknown>[] {
  const parts: RawBuilder<unknown>[] = [];
  if (filters.client_reference !== null) parts.push(exactReference(filters.client_reference));
  if (filters.search) parts.push(searchCondition(filters.search));
  if (filters.status) parts.push(sql`status = ${filters.status}`);
  if (filters.type) parts.push(sql`type = ${filters.type}`);
  if (filters.window?.from) parts.push(sql`created_at >= ${filters.window.from}`);
  if (filters.window?.until) parts.push(sql`created_at < ${filters.window.until}`);
  return parts;
}

export type OrderPageQuery = OrderFilters & { partner_id: string; before_seq: number | null; limit: number };

/** A page's matching rows, and the seq of the last row examined when it examined MAX_ROWS_EXAMINED. */
export type OrderPageRows = { rows: OrderRow[]; examined_to: number | null };

/** Whether an index bounds the page's filters to the rows they find (an exact reference, a search). */
function narrowedByIndex(filters: OrderFilters): boolean {
  return filters.client_reference !== null || (filters.search != null && searchIsIndexed(filters.search));
}

/**
 * The statement of a page, unrun: pageOfOrders runs it, the plans test explains it. Filters an index
 * narrows (narrowedByIndex) are read through it; any other page reads the partner's newest-first
 * index, at most MAX_ROWS_EXAMINED rows of it (row_number streams, so a page of common rows stops
 * after a few), and always returns the last row examined, marked `matched` or not, when it gets there.
 */
export function orderPageStatement(input: OrderPageQuery): RawBuilder<OrderRow & ScanMark> {
  const conditions = orderConditions(input);
  const below = input.before_seq === null ? sql`` : sql`and seq < ${input.before_seq}`;
  if (narrowedByIndex(input))
    return sql<OrderRow & ScanMark>`
      select ${ORDER_COLUMNS}, true as matched, 0 as examined from orders
      where partner_id = ${input.partner_id} and ${sql.join(conditions, sql` and `)} ${below}
      order by seq desc
      limit ${input.limit}`;
  const matched = conditions.length === 0 ? sql`true` : sql.join(conditions, sql` and `);
  return sql<OrderRow & ScanMark>`
    select ${ORDER_COLUMNS}, ${matched} as matched, examined from (
      select *, row_number() over (order by partner_id, seq desc) as examined from orders
      where ${onePartner(input.partner_id)} ${below}
      order by partner_id, seq desc
      limit ${MAX_ROWS_EXAMINED}
    ) examined_rows
    where (${matched}) or examined = ${MAX_ROWS_EXAMINED}
    order by partner_id, seq desc
    limit ${input.limit}`;
}

/**
 * The partner's rows as a range of one value, not `partner_id = ...`: with `order by partner_id, seq
 * desc` only the partner's index (partner_id, seq desc) yields that order, so the planner cannot read
 * orders_seq_key backward instead, skipping other partners' rows one by one without a bound (what
 * it chose in test/orders.search-plans.test.ts, the partner's rows being half the table).
 */
export function onePartner(partner_id: string, alias: string | null = null): RawBuilder<boolean> {
  const column = sql.ref(alias === null ? "partner_id" : `${alias}.partner_id`);
  return sql<boolean>`${column} >= ${partner_id} and ${column} <= ${partner_id}`;
}

/** Each row of a page statement: whether it matches the filters, and its place among the rows examined. */
type ScanMark = { matched: boolean; examined: number };

export async function pageOfOrders(db: Executor, input: OrderPageQuery): Promise<OrderPageRows> {
  const result = await orderPageStatement(input).execute(db);
  return splitScan(result.rows);
}

/** The matching rows without their marks, and where the examination stopped (the cap's last row). */
export function splitScan<Row>(marked: Array<Row & ScanMark>): { rows: Row[]; examined_to: number | null } {
  const last = marked.at(-1) as (Row & ScanMark & { seq: number }) | undefined;
  const examined_to = last !== undefined && Number(last.examined) === MAX_ROWS_EXAMINED ? last.seq : null;
  const rows = marked.filter((row) => row.matched).map(({ matched: _m, examined: _e, ...row }) => row as Row);
  return { rows, examined_to };
}

/**
 * Gives up the lease after an unknown carrier outcome, so the next retry may ask again at once;
 * only while this holder still holds it (a slower holder must not free a lease taken since).
 */
export async function releaseLease(
  db: Executor,
  order_id: string,
  lease_token: string | null,
): Promise<void> {
  await sql`
    update orders set lease_until = null, lease_token = null, lease_holder = null
    where order_id = ${order_id} and status = 'pending' and lease_token = ${lease_token}`.execute(db);
}

type OrderForEmailRow = Omit<OrderForEmail, "package_name" | "install_page_url" | "esims"> & {
  order_id: string;
  package_id: string | null;
  install_token: string | null;
};

/** Orders with their first purchase (null purchase fields when none), for confirmation emails. */
export async function ordersWithFirstPurchase(
  db: Executor,
  order_ids: string[],
): Promise<Array<OrderForEmailRow>> {
  if (order_ids.length === 0) return [];
  const result = await sql<OrderForEmailRow>`
    select o.order_id, o.partner_id, o.type, o.status, o.email, o.first_name, o.language, o.quantity,
           case when o.quantity > 1 then o.package_id else p.package_id end as package_id,
           p.iccid, p.smdp_address, p.activation_code, p.start_date::text as start_date,
           e.install_token
    from orders o
    left join purchases p on p.order_id = o.order_id and p.position = 0
    left join esims e on e.iccid = p.iccid
    where o.order_id = any(${order_ids}::text[])`.execute(db);
  return result.rows;
}

export type GroupEsimRow = {
  order_id: string;
  position: number;
  iccid: string;
  smdp_address: string;
  activation_code: string;
  start_date: string | null;
  install_token: string | null;
  /** The line's traveller (migration 0047), null when the submit named none. */
  email: string | null;
  first_name: string | null;
};

/**
 * The eSIMs made for these group orders (quantity > 1), each with its line's traveller, by order
 * and position: at most 50 an order, so a batch of confirmation emails reads a bounded set.
 */
export async function groupEsimsOf(db: Executor, order_ids: string[]): Promise<GroupEsimRow[]> {
  if (order_ids.length === 0) return [];
  const result = await sql<GroupEsimRow>`
    select p.order_id, p.position, p.iccid, p.smdp_address, p.activation_code,
           p.start_date::text as start_date, e.install_token, l.email, l.first_name
    from orders o
    join purchases p on p.order_id = o.order_id
    left join order_lines l on l.order_id = p.order_id and l.position = p.position
    left join esims e on e.iccid = p.iccid
    where o.order_id = any(${order_ids}::text[]) and o.quantity > 1
    order by p.order_id, p.position`.execute(db);
  return result.rows;
}

/** `exists` an order made from the cart whose key is `cart_key` (the unique index on orders.cart_key). */
export function orderOfCartExists(cart_key: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from orders o where o.cart_key = ${cart_key})`;
}

/** Sums of the totals of orders that were charged (completed, or refunded since), per currency. */
export async function chargedTotals(
  db: Executor,
): Promise<Array<{ currency: string; charged_minor: number; refunded_minor: number }>> {
  const result = await sql<{ currency: string; charged_minor: number; refunded_minor: number }>`
    select currency, sum(total_minor)::bigint as charged_minor,
           coalesce(sum(total_minor) filter (where status = 'refunded'), 0)::bigint as refunded_minor
    from orders where status in ('completed', 'refunded') group by currency`.execute(db);
  return result.rows;
}

/**
 * The order, row-locked until the transaction ends: a refund and its finish take it first. FOR NO
 * KEY UPDATE, not FOR UPDATE: the refund changes no key of it, and a FOR UPDATE lock would also
 * block the foreign-key checks (FOR KEY SHARE) of rows that reference it, such as a carrier signal's
 * update of its eSIM, which holds the eSIM row this refund waits for next: a deadlock (issue #30).
 */
export async function lockOrder(
  trx: Transaction<Database>,
  order_id: string,
  partner_id?: string,
): Promise<OrderRow | null> {
  const result = await sql<OrderRow>`
    select ${ORDER_COLUMNS} from orders
    where order_id = ${order_id} ${partner_id === undefined ? sql`` : sql`and partner_id = ${partner_id}`}
    for no key update`.execute(trx);
  return result.rows[0] ?? null;
}

/**
 * A refund of the completed order was asked for (its intent written, under the order's row lock):
 * the Order shows it until it ends. A repeated request keeps the first time.
 */
export async function markRefundRequested(trx: Transaction<Database>, order_id: string): Promise<void> {
  await sql`
    update orders set refund_requested_at = coalesce(refund_requested_at, clock_timestamp())
    where order_id = ${order_id} and status = 'completed'`.execute(trx);
}

/** The carrier refused the refund: the order is completed as before, no refund under way. */
export async function clearRefundRequested(trx: Transaction<Database>, order_id: string): Promise<void> {
  await sql`
    update orders set refund_requested_at = null
    where order_id = ${order_id} and status = 'completed' and refund_requested_at is not null`.execute(trx);
}

/** completed -> refunded, once: a second finisher updates nothing and gets null. */
export async function markRefunded(trx: Transaction<Database>, order_id: string): Promise<OrderRow | null> {
  const result = await sql<OrderRow>`
    update orders set status = 'refunded', refunded_at = clock_timestamp()
    where order_id = ${order_id} and status = 'completed'
    returning ${ORDER_COLUMNS}`.execute(trx);
  return result.rows[0] ?? null;
}

/**
 * The eSIM's completed top-up orders, locked, oldest bundle first (a refund of the eSIM refunds them
 * with it). Found through the eSIM's bundles (unique (iccid, position)): orders has no iccid index.
 */
export async function lockCompletedTopUpsOf(trx: Transaction<Database>, iccid: string): Promise<OrderRow[]> {
  const result = await sql<OrderRow>`
    select ${ORDER_COLUMNS} from orders
    where order_id in (select order_id from esim_bundles where iccid = ${iccid})
      and type = 'topup' and status = 'completed'
    order by created_at, order_id
    for no key update`.execute(trx);
  return result.rows;
}

/** Whether a top-up of the eSIM is pending or completed: not refunded, not failed. */
export async function hasOpenTopUp(trx: Transaction<Database>, iccid: string): Promise<boolean> {
  const result = await sql<{ open: boolean }>`
    select exists (select 1 from orders
                   where topup_iccid = ${iccid} and status in ('pending', 'completed')) as open`.execute(trx);
  return result.rows[0]?.open === true;
}

/** Whether a top-up of the eSIM is still pending (its top-ups through orders_topup_iccid_idx). */
export async function hasPendingTopUp(trx: Transaction<Database>, iccid: string): Promise<boolean> {
  const result = await sql<{ pending: boolean }>`
    select exists (select 1 from orders
                   where topup_iccid = ${iccid} and status = 'pending') as pending`.execute(trx);
  return result.rows[0]?.pending === true;
}

/** Every order's status and total, in insertion order, a page at a time (keyset on seq). */
export async function statusesAfter(
  db: Executor,
  after_seq: number,
  limit: number,
): Promise<Array<Pick<OrderRow, "seq" | "order_id" | "status" | "total_minor">>> {
  const result = await sql<Pick<OrderRow, "seq" | "order_id" | "status" | "total_minor">>`
    select seq, order_id, status, total_minor from orders where seq > ${after_seq} order by seq limit ${limit}`.execute(
    db,
  );
  return result.rows;
}

export type PendingOrderStats = { count: number; oldest_age_seconds: number; given_up: number };

/**
 * For /metrics: reads the list of pending orders (migration 0046), so it stays cheap however many orders
 * exist. `given_up`: pending longer than `give_up_hours`, waiting for the operator to settle them.
 */
export async function pendingOrderStats(db: Executor, give_up_hours: number): Promise<PendingOrderStats> {
  const result = await sql<PendingOrderStats>`
    select count(*)::int as count,
           coalesce(extract(epoch from now() - min(o.created_at)), 0)::float8 as oldest_age_seconds,
           (count(*) filter (where o.created_at < now() - make_interval(hours => ${give_up_hours})))::int as given_up
    -- The list is the index; the order's own row is the truth (a row left by hand is not counted).
    from pending_orders p join orders o on o.order_id = p.order_id
    where o.status = 'pending'`.execute(db);
  return result.rows[0] ?? { count: 0, oldest_age_seconds: 0, given_up: 0 };
}

export type PendingOrderSummary = {
  order_id: string;
  partner_id: string;
  type: "esim" | "topup";
  created_at: Date;
  age_seconds: number;
  given_up: boolean;
  lease_until: Date | null;
};

/** Pending orders, oldest first, each with its age and whether it is past `give_up_hours`. */
export async function listPendingOrders(
  db: Executor,
  give_up_hours: number,
  limit: number,
): Promise<PendingOrderSummary[]> {
  const result = await sql<PendingOrderSummary>`
    select o.order_id, o.partner_id, o.type, o.created_at, o.lease_until,
           extract(epoch from now() - o.created_at)::float8 as age_seconds,
           o.created_at < now() - make_interval(hours => ${give_up_hours}) as given_up
    from pending_orders p join orders o on o.order_id = p.order_id
    where o.status = 'pending'
    order by p.created_at limit ${limit}`.execute(db);
  return result.rows;
}

/**
 * Locks a pending order whose lease the caller still holds (token and time). Whoever holds the
 * lease is the only one driving the order, so a settlement recorded under this lock cannot race a
 * carrier call: a resolver that wants the lease waits here and then finds the order final.
 */
export async function lockOwnLease(
  trx: Transaction<Database>,
  order_id: string,
  lease_token: string | null,
): Promise<boolean> {
  const result = await sql`
    select 1 from orders
    where order_id = ${order_id} and status = 'pending' and lease_token = ${lease_token}
      and lease_until > clock_timestamp()
    for no key update`.execute(trx);
  return result.rows.length === 1;
}

export type OrderStatementFacts = {
  order_id: string;
  type: "esim" | "topup";
  client_reference: string | null;
  iccid: string | null;
  package_id: string;
};

/** What a statement says of each order named: its type (purchase or top-up) and what it was for. */
export async function statementFactsOf(db: Executor, order_ids: string[]): Promise<OrderStatementFacts[]> {
  if (order_ids.length === 0) return [];
  const result = await sql<OrderStatementFacts>`
    select order_id, type, client_reference, iccid, package_id
    from orders where order_id = any(${order_ids}::text[])`.execute(db);
  return result.rows;
}

/** Which of the orders named are still pending (a carrier callback names bundles by order id). */
export async function pendingAmong(db: Executor, order_ids: readonly string[]): Promise<string[]> {
  if (order_ids.length === 0) return [];
  const result = await sql<{ order_id: string }>`
    select order_id from orders where order_id = any(${[...order_ids]}::text[]) and status = 'pending'`.execute(
    db,
  );
  return result.rows.map((row) => row.order_id);
}

export type PartnerOrderCounts = {
  today: number;
  today_completed: number;
  today_failed: number;
  /** True when today has more orders than were counted (the count is a floor). */
  today_capped: boolean;
  pending: number;
};

/** Today's orders counted per partner at most: the newest this many, through the page index. */
export const MAX_COUNTED_TODAY = 10_000;

/**
 * A partner's orders since UTC midnight by outcome (its newest orders by seq, which follows
 * creation, through orders_partner_page_idx, stopping at MAX_COUNTED_TODAY) and its pending ones
 * (through the partial index of pending orders). The console's overview.
 */
export async function partnerOrderCounts(db: Executor, partner_id: string): Promise<PartnerOrderCounts> {
  const result = await sql<Omit<PartnerOrderCounts, "today_capped">>`
    with recent as (
      select status, created_at from orders where partner_id = ${partner_id}
      order by seq desc limit ${MAX_COUNTED_TODAY + 1}
    ), today as (
      select * from recent where created_at >= (date_trunc('day', now() at time zone 'UTC') at time zone 'UTC')
    )
    select (select count(*)::int from today) as today,
           (select count(*)::int from today where status = 'completed') as today_completed,
           (select count(*)::int from today where status = 'failed') as today_failed,
           (select count(*)::int from pending_orders p join orders o on o.order_id = p.order_id
            where o.status = 'pending' and o.partner_id = ${partner_id}) as pending`.execute(db);
  const row = result.rows[0] ?? { today: 0, today_completed: 0, today_failed: 0, pending: 0 };
  const today_capped = row.today > MAX_COUNTED_TODAY;
  return {
    today: Math.min(row.today, MAX_COUNTED_TODAY),
    today_completed: row.today_completed,
    today_failed: row.today_failed,
    today_capped,
    pending: row.pending,
  };
}
