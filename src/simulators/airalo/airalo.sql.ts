// Every statement the fake runs against its `airalo_sim` schema (schema.ts), in one place.
import type pg from "pg";

type Queryable = pg.Pool | pg.PoolClient;

export type OrderRow = {
  id: string;
  type: "sim" | "topup";
  package_id: string;
  quantity: number;
  description: string | null;
  price_cents: string;
  net_price_cents: string;
  status: "completed" | "failed" | "refunded" | "partially_refunded";
  topup_iccid: string | null;
  request_id: string | null;
  brand_settings_name: string | null;
  created_at: Date;
};

export type SimRow = {
  id: string;
  order_id: string;
  iccid: string;
  lpa: string;
  matching_id: string;
  package_id: string;
  used_mb: string;
  activated_at: Date | null;
  recycled_at: Date | null;
  refunded_at: Date | null;
  created_at: Date;
};

export type RefundRow = {
  id: string;
  iccids: string[];
  reason: string;
  notes: string | null;
  email: string | null;
  status: "pending" | "approved" | "rejected";
  credited_cents: string;
  reviewed_at: Date | null;
  created_at: Date;
};

export async function nextIccidSerials(client: Queryable, count: number): Promise<number[]> {
  const { rows } = await client.query<{ serial: string }>(
    "select nextval('airalo_sim.iccid_serial') as serial from generate_series(1, $1::int)",
    [count],
  );
  return rows.map((row) => Number(row.serial));
}

/** Takes `cents` from the credit when there is enough; null (nothing taken) when there is not. */
export async function debitCredit(client: Queryable, cents: number): Promise<number | null> {
  const { rows } = await client.query<{ credit_cents: string }>(
    `update airalo_sim.account set credit_cents = credit_cents - $1::bigint
     where id = 1 and credit_cents >= $1::bigint returning credit_cents`,
    [cents],
  );
  return rows[0] ? Number(rows[0].credit_cents) : null;
}

export async function creditCents(client: Queryable): Promise<number> {
  const { rows } = await client.query<{ credit_cents: string }>(
    "select credit_cents from airalo_sim.account where id = 1",
  );
  return Number(rows[0]!.credit_cents);
}

export async function setCredit(client: Queryable, cents: number): Promise<void> {
  await client.query("update airalo_sim.account set credit_cents = $1::bigint where id = 1", [cents]);
}

export async function addCredit(client: Queryable, cents: number): Promise<void> {
  await client.query("update airalo_sim.account set credit_cents = credit_cents + $1::bigint where id = 1", [
    cents,
  ]);
}

export async function insertOrder(
  client: Queryable,
  order: Pick<
    OrderRow,
    "type" | "package_id" | "quantity" | "description" | "topup_iccid" | "request_id" | "brand_settings_name"
  > & { price_cents: number; net_price_cents: number },
): Promise<OrderRow> {
  const { rows } = await client.query<OrderRow>(
    `insert into airalo_sim.orders (type, package_id, quantity, description, price_cents, net_price_cents,
                                    topup_iccid, request_id, brand_settings_name)
     values ($1, $2, $3::int, $4, $5::bigint, $6::bigint, $7, $8, $9) returning *`,
    [
      order.type,
      order.package_id,
      order.quantity,
      order.description,
      order.price_cents,
      order.net_price_cents,
      order.topup_iccid,
      order.request_id,
      order.brand_settings_name,
    ],
  );
  return rows[0]!;
}

export async function insertSims(
  client: Queryable,
  sims: { order_id: string; iccid: string; lpa: string; matching_id: string; package_id: string }[],
): Promise<SimRow[]> {
  const { rows } = await client.query<SimRow>(
    `insert into airalo_sim.sims (order_id, iccid, lpa, matching_id, package_id)
     select s.order_id, s.iccid, s.lpa, s.matching_id, s.package_id
     from jsonb_to_recordset($1::jsonb) as s(order_id bigint, iccid text, lpa text, matching_id text, package_id text)
     returning *`,
    [JSON.stringify(sims)],
  );
  return rows;
}

export async function selectSim(client: Queryable, iccid: string, forUpdate = false): Promise<SimRow | null> {
  const { rows } = await client.query<SimRow>(
    `select * from airalo_sim.sims where iccid = $1${forUpdate ? " for update" : ""}`,
    [iccid],
  );
  return rows[0] ?? null;
}

export async function selectSimsByIccids(client: Queryable, iccids: string[]): Promise<SimRow[]> {
  const { rows } = await client.query<SimRow>(
    "select * from airalo_sim.sims where iccid = any($1::text[]) order by id",
    [iccids],
  );
  return rows;
}

export async function selectSimsOfOrders(client: Queryable, orderIds: string[]): Promise<SimRow[]> {
  const { rows } = await client.query<SimRow>(
    "select * from airalo_sim.sims where order_id = any($1::bigint[]) order by id",
    [orderIds],
  );
  return rows;
}

export async function selectOrder(client: Queryable, id: string): Promise<OrderRow | null> {
  const { rows } = await client.query<OrderRow>("select * from airalo_sim.orders where id = $1::bigint", [
    id,
  ]);
  return rows[0] ?? null;
}

/** The completed top-ups of an eSIM, oldest first: their data adds to the eSIM's total. */
export async function selectTopupOrders(client: Queryable, iccid: string): Promise<OrderRow[]> {
  const { rows } = await client.query<OrderRow>(
    `select * from airalo_sim.orders where type = 'topup' and topup_iccid = $1 and status = 'completed'
     order by id limit 1000`,
    [iccid],
  );
  return rows;
}

export type OrderFilters = {
  description: string | null;
  code: string | null;
  iccid: string | null;
  order_status: string | null;
  created_from: string | null;
  created_to: string | null;
};

/**
 * GET /v2/orders filters [SPEC manage-orders]: description, code and iccid are LIKE '%x%'
 * searches (the docs' wording), created_at a date range, order_status exact. Newest first
 * (UNCONFIRMED: the docs do not state the order).
 */
const FILTERS_SQL = `
  from airalo_sim.orders o
  where ($1::text is null or o.description like '%' || $1 || '%')
    and ($2::text is null or (to_char(o.created_at at time zone 'UTC', 'YYYYMMDD') || '-' || lpad(o.id::text, 6, '0'))
                             like '%' || $2 || '%')
    and ($3::text is null or exists (select 1 from airalo_sim.sims s where s.order_id = o.id and s.iccid like '%' || $3 || '%')
                          or o.topup_iccid like '%' || $3 || '%')
    and ($4::text is null or o.status = $4)
    and ($5::date is null or o.created_at >= ($5::date)::timestamp at time zone 'UTC')
    and ($6::date is null or o.created_at < ($6::date + 1)::timestamp at time zone 'UTC')`;

function filterValues(filters: OrderFilters): unknown[] {
  return [
    filters.description,
    filters.code,
    filters.iccid,
    filters.order_status,
    filters.created_from,
    filters.created_to,
  ];
}

export async function countOrders(client: Queryable, filters: OrderFilters): Promise<number> {
  const { rows } = await client.query<{ total: string }>(
    `select count(*) as total ${FILTERS_SQL}`,
    filterValues(filters),
  );
  return Number(rows[0]!.total);
}

export async function listOrders(
  client: Queryable,
  filters: OrderFilters,
  limit: number,
  offset: number,
): Promise<OrderRow[]> {
  const { rows } = await client.query<OrderRow>(
    `select o.* ${FILTERS_SQL} order by o.id desc limit $7::int offset $8::int`,
    [...filterValues(filters), limit, offset],
  );
  return rows;
}

export async function recordUsage(client: Queryable, iccid: string, used_mb: number): Promise<SimRow | null> {
  const { rows } = await client.query<SimRow>(
    `update airalo_sim.sims set used_mb = $2::bigint, activated_at = coalesce(activated_at, now())
     where iccid = $1 returning *`,
    [iccid, used_mb],
  );
  return rows[0] ?? null;
}

export async function recycleSim(client: Queryable, iccid: string): Promise<SimRow | null> {
  const { rows } = await client.query<SimRow>(
    "update airalo_sim.sims set recycled_at = coalesce(recycled_at, now()) where iccid = $1 returning *",
    [iccid],
  );
  return rows[0] ?? null;
}

export async function insertRefund(
  client: Queryable,
  refund: { iccids: string[]; reason: string; notes: string | null; email: string | null },
): Promise<RefundRow> {
  const { rows } = await client.query<RefundRow>(
    `insert into airalo_sim.refunds (iccids, reason, notes, email) values ($1::text[], $2, $3, $4) returning *`,
    [refund.iccids, refund.reason, refund.notes, refund.email],
  );
  return rows[0]!;
}

export async function selectRefund(
  client: Queryable,
  id: string,
  forUpdate = false,
): Promise<RefundRow | null> {
  const { rows } = await client.query<RefundRow>(
    `select * from airalo_sim.refunds where id = $1::bigint${forUpdate ? " for update" : ""}`,
    [id],
  );
  return rows[0] ?? null;
}

export async function markRefundReviewed(
  client: Queryable,
  id: string,
  status: "approved" | "rejected",
  credited_cents: number,
): Promise<RefundRow> {
  const { rows } = await client.query<RefundRow>(
    `update airalo_sim.refunds set status = $2, credited_cents = $3::bigint, reviewed_at = now()
     where id = $1::bigint returning *`,
    [id, status, credited_cents],
  );
  return rows[0]!;
}

/** Marks the eSIMs refunded; returns the orders they belong to with how many of their eSIMs are. */
export async function refundSims(
  client: Queryable,
  iccids: string[],
): Promise<{ order_id: string; refunded: number; total: number }[]> {
  await client.query(
    "update airalo_sim.sims set refunded_at = coalesce(refunded_at, now()) where iccid = any($1::text[])",
    [iccids],
  );
  const { rows } = await client.query<{ order_id: string; refunded: string; total: string }>(
    `select s.order_id, count(*) filter (where s.refunded_at is not null) as refunded, count(*) as total
     from airalo_sim.sims s
     where s.order_id in (select order_id from airalo_sim.sims where iccid = any($1::text[]))
     group by s.order_id`,
    [iccids],
  );
  return rows.map((row) => ({
    order_id: row.order_id,
    refunded: Number(row.refunded),
    total: Number(row.total),
  }));
}

export async function setOrderStatus(
  client: Queryable,
  id: string,
  status: OrderRow["status"],
): Promise<void> {
  await client.query("update airalo_sim.orders set status = $2 where id = $1::bigint", [id, status]);
}

export async function upsertNotification(
  client: Queryable,
  type: string,
  webhook_url: string,
  levels: number[] | null,
): Promise<void> {
  await client.query(
    `insert into airalo_sim.notifications (type, webhook_url, levels) values ($1, $2, $3::int[])
     on conflict (type) do update set webhook_url = excluded.webhook_url, levels = excluded.levels`,
    [type, webhook_url, levels],
  );
}

export async function deleteNotification(client: Queryable, type: string): Promise<boolean> {
  const { rowCount } = await client.query("delete from airalo_sim.notifications where type = $1", [type]);
  return (rowCount ?? 0) > 0;
}

export async function selectNotifications(
  client: Queryable,
): Promise<{ type: string; webhook_url: string; levels: number[] | null }[]> {
  const { rows } = await client.query<{ type: string; webhook_url: string; levels: number[] | null }>(
    "select type, webhook_url, levels from airalo_sim.notifications order by type",
  );
  return rows;
}
