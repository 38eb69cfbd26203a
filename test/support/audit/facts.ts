// What the audit reads about every order, and the list its checks add breaches to.

export const MAX_LISTED_PER_CHECK = 20;

export type OrderFacts = {
  order_id: string;
  partner_id: string;
  type: "esim" | "topup";
  /** Who the order was sent to (orders.supplier, migration 0038). */
  supplier: "carrier" | "airalo" | "esimgo";
  status: "pending" | "completed" | "failed" | "refunded";
  /** eSIMs ordered: more than 1 is a group order (issue 34), audited line by line (groups.ts). */
  quantity: number;
  cart_key: string | null;
  client_reference: string | null;
  iccid: string | null;
  email: string;
  total_minor: number;
  transfers: number;
  posted: number;
  voided: number;
  pending_transfers: number;
  transfer_amount_minor: number | null;
  /** What a group's hold held, when only part of it was posted (migration 0047); else null. */
  held_minor: number | null;
  purchases: number;
  esims: number;
  esim_iccid: string | null;
  deliveries: number;
  delivery_recipient: string | null;
  refunds: number;
  refunded_minor: number | null;
};

export const ORDER_FACTS_SQL = `
select o.order_id, o.partner_id, o.type, o.supplier, o.status, o.quantity, o.cart_key, o.client_reference, o.iccid, o.email,
       o.total_minor,
       (select count(*) from ledger_transfers t where t.reference = o.order_id and t.kind = 'purchase')::int as transfers,
       (select count(*) from ledger_transfers t where t.reference = o.order_id and t.kind = 'purchase' and t.state = 'posted')::int as posted,
       (select count(*) from ledger_transfers t where t.reference = o.order_id and t.kind = 'purchase' and t.state = 'voided')::int as voided,
       (select count(*) from ledger_transfers t where t.reference = o.order_id and t.kind = 'purchase' and t.state = 'pending')::int as pending_transfers,
       (select max(t.amount_minor) from ledger_transfers t where t.reference = o.order_id and t.kind = 'purchase') as transfer_amount_minor,
       (select max(t.held_minor) from ledger_transfers t where t.reference = o.order_id and t.kind = 'purchase')::bigint
         as held_minor,
       (select count(*) from purchases p where p.order_id = o.order_id)::int as purchases,
       (select count(*) from esims e where e.order_id = o.order_id)::int as esims,
       (select max(e.iccid) from esims e where e.order_id = o.order_id) as esim_iccid,
       (select count(*) from email_deliveries d where d.order_id = o.order_id)::int as deliveries,
       (select max(d.recipient) from email_deliveries d where d.order_id = o.order_id) as delivery_recipient,
       (select count(*) from ledger_transfers t where t.reference = o.order_id and t.kind = 'refund')::int as refunds,
       (select sum(t.amount_minor) from ledger_transfers t where t.reference = o.order_id and t.kind = 'refund')::bigint
         as refunded_minor
from orders o
order by o.seq`;

export class BreachList {
  readonly breaches: string[] = [];
  readonly #counts = new Map<string, number>();

  add(check: string, message: string): void {
    const count = (this.#counts.get(check) ?? 0) + 1;
    this.#counts.set(check, count);
    if (count <= MAX_LISTED_PER_CHECK) this.breaches.push(`[${check}] ${message}`);
  }

  finish(): string[] {
    for (const [check, count] of this.#counts) {
      if (count > MAX_LISTED_PER_CHECK) {
        this.breaches.push(`[${check}] ... and ${count - MAX_LISTED_PER_CHECK} more breaches of this check`);
      }
    }
    return this.breaches;
  }
}

export function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

export function ids(orders: OrderFacts[]): string {
  return orders.map((o) => `${o.order_id} (${o.status})`).join(", ");
}

/** Human summary, one line per figure and one per breach. */
