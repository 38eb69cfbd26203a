// SQL of a group order's lines (migration 0047): inserted with the order, each recorded once when
// the carrier's word on it is final, and the order completed from them once none is pending.
import { sql, type Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import type { OrderLine, OrderRow, PurchaseRow } from "./order.ts";
import { ORDER_COLUMNS } from "./orders.sql.ts";

export type NewLine = {
  position: number;
  reference: string;
  traveller: { email: string; first_name: string; last_name: string } | null;
};

/** The lines of a new group order, in its creating transaction. */
export async function insertOrderLines(
  trx: Transaction<Database>,
  order_id: string,
  lines: readonly NewLine[],
): Promise<void> {
  await sql`
    insert into order_lines (order_id, position, reference, email, first_name, last_name)
    select ${order_id}, l.position, l.reference, l.email, l.first_name, l.last_name
    from unnest(${lines.map((l) => l.position)}::int[], ${lines.map((l) => l.reference)}::text[],
                ${lines.map((l) => l.traveller?.email ?? null)}::text[],
                ${lines.map((l) => l.traveller?.first_name ?? null)}::text[],
                ${lines.map((l) => l.traveller?.last_name ?? null)}::text[])
      as l(position, reference, email, first_name, last_name)`.execute(trx);
}

export async function linesOf(db: Executor, order_id: string): Promise<OrderLine[]> {
  const result = await sql<OrderLine>`
    select * from order_lines where order_id = ${order_id} order by position`.execute(db);
  return result.rows;
}

export type LineOutcome =
  | { kind: "completed"; iccid: string; smdp_address: string; activation_code: string }
  | { kind: "failed"; carrier_refusal: string };

/**
 * pending -> completed or failed, once. The carrier answers a reference alike every time, so a
 * second recorder (a racing driver) finds the line final and writes nothing: false.
 */
export async function recordLine(
  db: Executor,
  order_id: string,
  position: number,
  outcome: LineOutcome,
): Promise<boolean> {
  const made = outcome.kind === "completed" ? outcome : null;
  const refusal = outcome.kind === "failed" ? outcome.carrier_refusal.slice(0, 500) : null;
  const result = await sql`
    update order_lines
    set status = ${outcome.kind}, iccid = ${made?.iccid ?? null}, smdp_address = ${made?.smdp_address ?? null},
        activation_code = ${made?.activation_code ?? null}, carrier_refusal = ${refusal}, resolved_at = now()
    where order_id = ${order_id} and position = ${position} and status = 'pending'`.execute(db);
  return Number(result.numAffectedRows ?? 0) === 1;
}

export type CompletedGroup = OrderRow & {
  purchases: PurchaseRow[];
  esims: number;
  bundles: number;
  emails: number;
};

/**
 * pending -> completed, once, when no line is pending and one at least was made: the order's total
 * becomes its completed lines' price (what is charged), and each of them becomes an eSIM, a
 * purchase and a bundle, in one statement. Confirmation emails: one per completed line whose
 * traveller was named; without travellers, the order's one email (position 0) with every eSIM.
 * Null when another driver completed it first, or a line is still pending.
 */
export async function completeGroupOrder(
  trx: Transaction<Database>,
  input: { order_id: string; first_sync_after_s: number; confirmation_email: boolean },
): Promise<CompletedGroup | null> {
  const { order_id } = input;
  const result = await sql<CompletedGroup>`
    with made as (
      select position, iccid, smdp_address, activation_code, email from order_lines
      where order_id = ${order_id} and status = 'completed'
    ), done as (
      update orders o
      set status = 'completed', resolved_at = now(), lease_until = null,
          iccid = (select iccid from made order by position limit 1),
          total_minor = o.total_minor / o.quantity * (select count(*) from made)
      where o.order_id = ${order_id} and o.status = 'pending' and o.quantity > 1
        and exists (select 1 from made)
        and not exists (select 1 from order_lines l where l.order_id = ${order_id} and l.status = 'pending')
      returning ${ORDER_COLUMNS}
    ), unlisted as (
      delete from pending_orders where order_id = (select order_id from done)
    ), new_esims as (
      insert into esims (iccid, partner_id, order_id, package_id, smdp_address, activation_code, next_sync_at)
      select m.iccid, d.partner_id, d.order_id, d.package_id, m.smdp_address, m.activation_code,
             now() + make_interval(secs => ${input.first_sync_after_s})
      from done d cross join made m
      returning iccid
    ), purchase as (
      insert into purchases (order_id, position, package_id, iccid, smdp_address, activation_code, start_date)
      select d.order_id, m.position, d.package_id, m.iccid, m.smdp_address, m.activation_code, d.start_date
      from done d cross join made m
      returning order_id, position, package_id, iccid, smdp_address, activation_code, start_date
    ), bundle as (
      insert into esim_bundles (order_id, iccid, position, package_id, name, data_mb, validity_days)
      select d.order_id, m.iccid, 0, k.package_id, k.name, d.data_mb, d.validity_days
      from done d cross join made m join packages k on k.package_id = d.package_id
      returning iccid
    ), outbox as (
      insert into email_outbox (order_id, position)
      select d.order_id, m.position from done d cross join made m
      where ${input.confirmation_email}::boolean and m.email is not null
      union all
      select d.order_id, 0 from done d
      where ${input.confirmation_email}::boolean and not exists (select 1 from made where email is not null)
      returning order_id
    )
    select d.*,
           (select coalesce(jsonb_agg(to_jsonb(p) order by p.position), '[]') from purchase p) as purchases,
           (select count(*) from new_esims)::int as esims, (select count(*) from bundle)::int as bundles,
           (select count(*) from outbox)::int as emails
    from done d`.execute(trx);
  return result.rows[0] ?? null;
}
