// Invariant 11 (issue 33): orders of ours sent to a wholesale supplier against that supplier's own
// records, read from its fake's schema (airalo_sim, esimgo_sim). Per supplier:
//  - every supplier order carries exactly one order id of ours, and no id of ours is on two
//    supplier orders (never two supplier orders for one of ours);
//  - the id names an order of ours of that supplier and kind, completed or refunded (charged): nothing
//    delivered that we did not charge for;
//  - each completed or refunded order of ours has exactly one supplier order, with the order's
//    ICCID, one posted transfer for its total, one purchase row (checkCompleted); a failed one has
//    none, its hold voided; none is pending; so supplier orders = our completed (or refunded) orders;
//  - refunds: a refunded order was credited its total once and is refunded at the supplier (Airalo's
//    order `refunded`, eSIM Go's bundle revoked), and nothing is refunded there that we did not refund.
// Where our id travels (docs/suppliers/*.md, src/carrier/*/README.md): Airalo keeps it in the order's
// `description` as `[esim-ref:<order id>]`, top-ups included. eSIM Go's order takes no reference: a new
// eSIM carries ours as its `customerRef` (set after the answer, best effort, so it may be missing),
// and otherwise (a top-up) the only link is our own record of eSIM Go's order reference
// (`esimgo_orders.order_reference`, unique); both are read, and must agree.
import type pg from "pg";
import { type BreachList, groupBy, type OrderFacts } from "./facts.ts";
import { checkCompleted } from "./orders.ts";

export type SupplierName = "airalo" | "esimgo";
export const SUPPLIER_NAMES: readonly SupplierName[] = ["airalo", "esimgo"];

/** One order in a supplier's own records, with the ids of ours it carries. */
export type SupplierOrder = {
  supplier_order: string;
  kind: "esim" | "topup";
  order_ids: string[];
  iccid: string | null;
  refunded: boolean;
};

export type SupplierFigures = {
  supplier: SupplierName;
  /** Orders in the supplier's records (Airalo's failed ones left out: nothing was made). */
  supplier_orders: number;
  supplier_esims: number;
  supplier_topups: number;
  supplier_refunded: number;
  /** Our orders of that supplier. */
  completed: number;
  refunded: number;
  failed: number;
};

/** A limit on what one audit reads of a supplier: far above a run; reaching it is a breach. */
const MAX_SUPPLIER_ORDERS = 50_000;

const AIRALO_SQL = `
select o.id::text as supplier_order,
       case o.type when 'sim' then 'esim' else 'topup' end as kind,
       array(select m[1] from regexp_matches(coalesce(o.description, ''), '\\[esim-ref:([^\\]\\s]{1,200})\\]', 'g') as m)
         as order_ids,
       coalesce(o.topup_iccid, (select min(s.iccid) from airalo_sim.sims s where s.order_id = o.id)) as iccid,
       o.status in ('refunded', 'partially_refunded') as refunded
from airalo_sim.orders o
where o.status <> 'failed'
order by o.id
limit ${MAX_SUPPLIER_ORDERS + 1}`;

const ESIMGO_SQL = `
select o.reference as supplier_order,
       case when exists (select 1 from esimgo_sim.esims e where e.order_reference = o.reference)
            then 'esim' else 'topup' end as kind,
       array(select distinct ref from (
         select i.reference as ref from esimgo_orders i where i.order_reference = o.reference
         union all
         select e.customer_ref from esimgo_sim.esims e
          where e.order_reference = o.reference and e.customer_ref is not null) refs) as order_ids,
       (select min(a.iccid) from esimgo_sim.assignments a where a.order_reference = o.reference) as iccid,
       exists (select 1 from esimgo_sim.assignments a where a.order_reference = o.reference and a.state = 'revoked')
         as refunded
from esimgo_sim.orders o
order by o.created_at, o.reference
limit ${MAX_SUPPLIER_ORDERS + 1}`;

/** The supplier's orders, or none when its fake never ran on this database (no schema). */
export async function readSupplierOrders(pool: pg.Pool, supplier: SupplierName): Promise<SupplierOrder[]> {
  const table = supplier === "airalo" ? "airalo_sim.orders" : "esimgo_sim.orders";
  const exists = await pool.query<{ found: boolean }>("select to_regclass($1) is not null as found", [table]);
  if (!exists.rows[0]?.found) return [];
  const result = await pool.query<SupplierOrder>(supplier === "airalo" ? AIRALO_SQL : ESIMGO_SQL);
  return result.rows;
}

export function checkSupplier(
  found: BreachList,
  supplier: SupplierName,
  allOrders: readonly OrderFacts[],
  records: readonly SupplierOrder[],
): SupplierFigures {
  const check = `supplier-${supplier}`;
  if (records.length > MAX_SUPPLIER_ORDERS)
    found.add(check, `more than ${MAX_SUPPLIER_ORDERS} orders at ${supplier}: not all checked`);
  const byId = new Map(allOrders.map((o) => [o.order_id, o]));
  const ours = allOrders.filter((o) => o.supplier === supplier);
  checkRecordsAreOurs(found, check, supplier, byId, records);
  const delivered = groupBy(
    records.filter((r) => r.order_ids.length === 1),
    (r) => r.order_ids[0]!,
  );
  for (const order of ours) {
    const what = `${order.type} order ${order.order_id} (partner ${order.partner_id}, ${supplier})`;
    const at = delivered.get(order.order_id) ?? [];
    checkOurOrder(found, check, supplier, what, order, at);
  }
  const charged = ours.filter((o) => o.status === "completed" || o.status === "refunded").length;
  if (records.length !== charged) {
    found.add(
      check,
      `${records.length} orders at ${supplier} for ${charged} completed or refunded orders of ours with it`,
    );
  }
  return {
    supplier,
    supplier_orders: records.length,
    supplier_esims: records.filter((r) => r.kind === "esim").length,
    supplier_topups: records.filter((r) => r.kind === "topup").length,
    supplier_refunded: records.filter((r) => r.refunded).length,
    completed: ours.filter((o) => o.status === "completed").length,
    refunded: ours.filter((o) => o.status === "refunded").length,
    failed: ours.filter((o) => o.status === "failed").length,
  };
}

/** Each supplier order: one id of ours, on no other supplier order, naming a charged order of that supplier. */
function checkRecordsAreOurs(
  found: BreachList,
  check: string,
  supplier: SupplierName,
  byId: Map<string, OrderFacts>,
  records: readonly SupplierOrder[],
): void {
  for (const record of records) {
    const name = `${supplier} order ${record.supplier_order} (${record.kind}, ICCID ${record.iccid})`;
    if (record.order_ids.length !== 1) {
      found.add(
        check,
        `${name} carries ${record.order_ids.length} order ids of ours (${record.order_ids.join(", ") || "none"}), not one`,
      );
      continue;
    }
    const order_id = record.order_ids[0]!;
    const order = byId.get(order_id);
    const charged = order?.status === "completed" || order?.status === "refunded";
    if (!order || !charged || order.supplier !== supplier || order.type !== record.kind) {
      found.add(
        check,
        `${name} is for ${order_id}, but ${order ? `that ${order.type} order of ${order.supplier} is ${order.status}` : "no such order exists"}: delivered and not charged`,
      );
    }
  }
  for (const [order_id, group] of groupBy(
    records.filter((r) => r.order_ids.length === 1),
    (r) => r.order_ids[0]!,
  )) {
    if (group.length > 1) {
      found.add(
        check,
        `order ${order_id} has ${group.length} orders at ${supplier}: ${group.map((r) => r.supplier_order).join(", ")}`,
      );
    }
  }
}

function checkOurOrder(
  found: BreachList,
  check: string,
  supplier: SupplierName,
  what: string,
  order: OrderFacts,
  at: SupplierOrder[],
): void {
  if (order.transfers !== 1)
    found.add(
      "one-transfer-per-order",
      `${what} is ${order.status} with ${order.transfers} purchase transfers`,
    );
  if (order.status === "pending") {
    found.add("no-pending-order", `${what} is still pending (${at.length} orders at ${supplier})`);
    return;
  }
  if (order.status === "failed") {
    if (order.voided !== 1 || order.posted !== 0)
      found.add(
        "failed-is-voided",
        `${what} failed but its transfers are ${order.posted} posted, ${order.voided} voided`,
      );
    if (at.length > 0 || order.purchases > 0 || order.esims > 0)
      found.add(
        check,
        `${what} failed (nothing charged) but ${supplier} has ${at.length} orders for it; ${order.purchases} purchases, ${order.esims} esims`,
      );
    if (order.refunds > 0) found.add("refund-once", `${what} is failed but has ${order.refunds} refunds`);
    return;
  }
  checkCompleted(
    found,
    what,
    order,
    at.map((r) => ({ reference: order.order_id, iccid: r.iccid })),
    supplier,
  );
  if (at.length === 1 && at[0]!.iccid === null)
    found.add(check, `${what}: ${supplier}'s order ${at[0]!.supplier_order} has no ICCID`);
  const refundedThere = at.some((r) => r.refunded);
  if (order.status === "completed") {
    if (order.refunds > 0) found.add("refund-once", `${what} is completed but has ${order.refunds} refunds`);
    if (refundedThere)
      found.add(check, `${what} is completed but refunded at ${supplier}: refunded and kept paid`);
    return;
  }
  if (order.refunds !== 1 || order.refunded_minor !== order.total_minor) {
    found.add(
      "refund-once",
      `${what} cost ${order.total_minor} but was credited ${order.refunded_minor ?? 0} in ${order.refunds} refunds`,
    );
  }
  if (!refundedThere) found.add(check, `${what} is refunded but ${supplier} never refunded it`);
}
