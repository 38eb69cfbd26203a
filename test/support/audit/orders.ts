// The audit's order checks: uniqueness, each order's transfer, carrier delivery, purchase and eSIM,
// and nothing delivered by the carrier without a completed order of ours (invariants 1-5).
import type pg from "pg";
import type { SimulatorAudit } from "../simulator.ts";
import { type BreachList, groupBy, ids, type OrderFacts } from "./facts.ts";

export function checkUniqueness(
  found: BreachList,
  orders: OrderFacts[],
  uniqueClientReferences: boolean,
): void {
  const byCart = groupBy(
    orders.filter((o) => o.cart_key !== null),
    (o) => o.cart_key!,
  );
  for (const [cart_key, group] of byCart) {
    if (group.length > 1) {
      found.add("one-order-per-cart", `cart ${cart_key} has ${group.length} orders: ${ids(group)}`);
    }
  }
  if (!uniqueClientReferences) return;
  const byReference = groupBy(
    orders.filter((o) => o.client_reference !== null),
    (o) => `${o.partner_id} ${o.client_reference}`,
  );
  for (const [key, group] of byReference) {
    if (group.length > 1) {
      found.add(
        "one-order-per-operation",
        `partner/client_reference ${key} (one logical operation of the driver) has ${group.length} orders: ${ids(group)}`,
      );
    }
  }
}

export async function checkDuplicateKeys(found: BreachList, pool: pg.Pool): Promise<void> {
  // The primary key forbids it; checked anyway, because the audit must not trust the code it audits.
  const duplicates = await pool.query<{ partner_id: string; idempotency_key: string; n: number }>(`
    select partner_id, idempotency_key, count(distinct order_id)::int as n from idempotency_keys
    group by partner_id, idempotency_key having count(*) > 1 or count(distinct order_id) > 1`);
  for (const row of duplicates.rows) {
    found.add(
      "one-order-per-idempotency-key",
      `partner ${row.partner_id} Idempotency-Key ${JSON.stringify(row.idempotency_key)} has ${row.n} orders`,
    );
  }
  // An order linked from two keys would be one purchase answered under two keys.
  const shared = await pool.query<{ order_id: string; n: number }>(`
    select order_id, count(*)::int as n from idempotency_keys where order_id is not null
    group by order_id having count(*) > 1`);
  for (const row of shared.rows) {
    found.add(
      "one-order-per-idempotency-key",
      `order ${row.order_id} is linked from ${row.n} idempotency keys`,
    );
  }
}

/**
 * The resolver reads pending orders from pending_orders (migration 0046), which the statements that
 * insert, complete and fail an order keep: a pending order missing from it would never be resolved,
 * and a listed order that is no longer pending would be a leak.
 */
export async function checkPendingList(found: BreachList, pool: pg.Pool): Promise<void> {
  const drift = await pool.query<{ order_id: string; status: string | null; listed: boolean }>(`
    select coalesce(o.order_id, p.order_id) as order_id, o.status, p.order_id is not null as listed
    from (select order_id, status from orders where status = 'pending') o
    full join pending_orders p on p.order_id = o.order_id
    where o.order_id is null or p.order_id is null`);
  for (const row of drift.rows) {
    found.add(
      "pending-list",
      row.listed
        ? `order ${row.order_id} is listed as pending but is not pending`
        : `order ${row.order_id} is pending but not listed in pending_orders`,
    );
  }
}

export function checkOrders(found: BreachList, orders: OrderFacts[], carrier: SimulatorAudit): void {
  const provisioned = groupBy(carrier.provisionings, (p) => p.reference);
  const toppedUp = groupBy(carrier.topups, (t) => t.reference);
  const refused = groupBy(carrier.refusals, (r) => r.reference);
  for (const order of orders) {
    const what = `${order.type} order ${order.order_id} (partner ${order.partner_id})`;
    const profiles = provisioned.get(order.order_id) ?? [];
    const topups = toppedUp.get(order.order_id) ?? [];
    const refusals = refused.get(order.order_id) ?? [];
    if (order.transfers !== 1) {
      found.add(
        "one-transfer-per-order",
        `${what} is ${order.status} with ${order.transfers} purchase transfers`,
      );
    }
    if (order.status === "pending") {
      found.add(
        "no-pending-order",
        `${what} is still pending (transfer pending: ${order.pending_transfers}, ` +
          `carrier: ${profiles.length} profiles, ${topups.length} top-ups, ${refusals.length} refusals)`,
      );
      continue;
    }
    if (order.status === "completed" || order.status === "refunded") {
      checkCompleted(found, what, order, order.type === "esim" ? profiles : topups);
      const wrongKind = order.type === "esim" ? topups : profiles;
      if (wrongKind.length > 0) {
        found.add(
          "carrier-delivery",
          `${what} is completed but the carrier also has a delivery of the other kind`,
        );
      }
      if (refusals.length > 0) {
        found.add("carrier-delivery", `${what} is completed but the carrier refused its reference`);
      }
      continue;
    }
    // failed
    if (order.voided !== 1 || order.posted !== 0) {
      found.add(
        "failed-is-voided",
        `${what} failed but its transfers are ${order.posted} posted, ${order.voided} voided, ${order.pending_transfers} pending`,
      );
    }
    if (profiles.length + topups.length > 0) {
      found.add(
        "failed-nothing-delivered",
        `${what} failed (nothing charged) but the carrier delivered ${profiles.length} profiles and ${topups.length} top-ups for it`,
      );
    }
    if (refusals.length !== 1) {
      found.add(
        "failed-was-refused",
        `${what} failed but the carrier has ${refusals.length} refusals for it: an order fails only on a refusal`,
      );
    }
    if (order.purchases > 0 || order.esims > 0) {
      found.add(
        "failed-nothing-delivered",
        `${what} failed but has ${order.purchases} purchases, ${order.esims} esims`,
      );
    }
  }
}

export function checkCompleted(
  found: BreachList,
  what: string,
  order: OrderFacts,
  deliveries: { reference: string; iccid: string | null }[],
  where = "the carrier",
): void {
  if (order.posted !== 1 || order.voided !== 0 || order.pending_transfers !== 0) {
    found.add(
      "completed-is-posted",
      `${what} completed but its transfers are ${order.posted} posted, ${order.voided} voided, ${order.pending_transfers} pending`,
    );
  } else if (order.transfer_amount_minor !== order.total_minor) {
    found.add(
      "completed-is-posted",
      `${what} completed for ${order.total_minor} but its transfer is ${order.transfer_amount_minor}`,
    );
  }
  if (deliveries.length !== 1) {
    found.add(
      "completed-delivered-once",
      `${what} completed (charged) with ${deliveries.length} ${order.type === "esim" ? "provisionings" : "top-ups"} at ${where}`,
    );
  } else if (deliveries[0]!.iccid !== order.iccid) {
    found.add(
      "completed-delivered-once",
      `${what} names ICCID ${order.iccid} but ${where} delivered ${deliveries[0]!.iccid} for it`,
    );
  }
  if (order.purchases !== 1) {
    found.add("completed-delivered-once", `${what} completed with ${order.purchases} purchase rows`);
  }
  if (order.type === "esim" && (order.esims !== 1 || order.esim_iccid !== order.iccid)) {
    found.add(
      "completed-delivered-once",
      `${what} completed with ${order.esims} esims rows (ICCID ${order.esim_iccid} vs order ${order.iccid})`,
    );
  }
}

export function checkCarrierDeliveries(
  found: BreachList,
  orders: OrderFacts[],
  carrier: SimulatorAudit,
  madeLines: ReadonlySet<string> = new Set(),
): void {
  const byId = new Map(orders.map((o) => [o.order_id, o]));
  const check = (kind: "esim" | "topup", rows: { reference: string; iccid: string }[]) => {
    for (const row of rows) {
      // A group's completed line: checked with its order (groups.ts).
      if (kind === "esim" && madeLines.has(row.reference)) continue;
      const order = byId.get(row.reference);
      const charged = order?.status === "completed" || order?.status === "refunded";
      if (!charged || order?.type !== kind) {
        found.add(
          "nothing-delivered-unpaid",
          `the carrier delivered ${kind === "esim" ? "a profile" : "a top-up"} (ICCID ${row.iccid}) for reference ` +
            `${row.reference}, but ${order ? `that ${order.type} order is ${order.status}` : "no such order exists"}: delivered and not charged`,
        );
      }
    }
  };
  check("esim", carrier.provisionings);
  check("topup", carrier.topups);
}

/**
 * Refunds (invariant 10): a refunded order was credited exactly its total, once, and cancelled at
 * the carrier (its profile, or its bundle, or the profile its bundle was on); no other order has a
 * refund; nothing was cancelled at the carrier that we did not refund (a cancelled eSIM kept paid),
 * top-ups cancelled with their profile included.
 */
export function checkRefunds(found: BreachList, orders: OrderFacts[], carrier: SimulatorAudit): void {
  const cancelled = new Set(carrier.cancellations.map((c) => c.reference));
  const cancelledProfiles = new Set(
    carrier.cancellations.filter((c) => c.kind === "profile").map((c) => c.iccid),
  );
  const byId = new Map(orders.map((o) => [o.order_id, o]));
  for (const order of orders) {
    const what = `${order.type} order ${order.order_id} (partner ${order.partner_id})`;
    if (order.status !== "refunded") {
      if (order.refunds > 0)
        found.add("refund-once", `${what} is ${order.status} but has ${order.refunds} refunds`);
      // The profile's cancel took every bundle on it: a top-up still charged there was kept paid.
      if (order.type === "topup" && order.status === "completed" && cancelledProfiles.has(order.iccid ?? ""))
        found.add("refund-cancelled", `${what} is completed but its profile ${order.iccid} was cancelled`);
      continue;
    }
    if (order.refunds !== 1 || order.refunded_minor !== order.total_minor) {
      found.add(
        "refund-once",
        `${what} cost ${order.total_minor} but was credited ${order.refunded_minor ?? 0} in ${order.refunds} refunds`,
      );
    }
    const atCarrier =
      cancelled.has(order.order_id) || (order.type === "topup" && cancelledProfiles.has(order.iccid ?? ""));
    if (!atCarrier) found.add("refund-cancelled", `${what} is refunded but the carrier never cancelled it`);
  }
  for (const cancellation of carrier.cancellations) {
    if (byId.get(cancellation.reference)?.status !== "refunded") {
      found.add(
        "refund-cancelled",
        `the carrier cancelled ${cancellation.kind} ${cancellation.reference} (ICCID ${cancellation.iccid}) but that order is ` +
          `${byId.get(cancellation.reference)?.status ?? "unknown"}: cancelled and not refunded`,
      );
    }
  }
}
