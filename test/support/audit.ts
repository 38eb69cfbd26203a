// The whole-system audit: what "exactly once" means, checked from the records of both companies
// (our database and the carrier's) and from the mail that actually arrived. Used by the chaos
// run, the soak run and tests. An empty `breaches` list is a pass; every breach names the order,
// reference or account it is about and what each side says, so a failure is actionable as read.
//
// Invariants:
//  1. At most one order per cart_key, per (partner, Idempotency-Key), and, when the driver gave
//     every logical operation its own client_reference, per (partner, client_reference).
//  2. A completed order has exactly one transfer, posted, for its total; exactly one delivery at
//     the carrier under its order id (a profile for esim, a top-up for topup) naming its ICCID;
//     exactly one purchase row; an esim order exactly one esims row.
//  3. A failed order has a voided transfer, nothing delivered by the carrier under its reference,
//     the carrier's refusal on record, and no purchase.
//  4. No order is pending.
//  5. Nothing delivered by the carrier without a completed order of ours (money never lost the
//     other way: the partner got no eSIM we did not charge for, and we charged for none we lack).
//  6. The ledger balances (auditLedger): wallets' running totals, double entry, no negative wallet.
//  7. Idempotency keys: a completed key replays its order's real outcome; none left running on a
//     finished order; each key's order belongs to the key's partner.
//  8. Confirmation emails: exactly one email_deliveries row per completed new-eSIM order and none
//     for anything else; when the SMTP server is given, one distinct message (by Message-ID) per
//     such order, to the order's address, and nothing else.
import type { Kysely } from "kysely";
import type pg from "pg";
import { createKysely } from "../../src/db/pool.ts";
import type { Database } from "../../src/db/schema.ts";
import { auditLedger } from "../../src/wallet/audit-ledger.ts";
import type { SimulatorAudit } from "./simulator.ts";
import type { ReceivedMessage } from "./smtp.ts";

export type AuditInput = {
  pool: pg.Pool;
  /** The carrier simulator (anything with its audit call, e.g. a SimulatorProcess). */
  simulator: { audit: () => Promise<SimulatorAudit> };
  /** The test SMTP server's received messages, to check what really went out. */
  smtp?: { messages: ReceivedMessage[] };
  /** The driver gave each logical purchase or top-up its own client_reference. */
  uniqueClientReferences?: boolean;
};

export type AuditFigures = {
  orders: number;
  completed: number;
  failed: number;
  pending: number;
  esim_completed: number;
  topup_completed: number;
  carrier_provisionings: number;
  carrier_topups: number;
  carrier_refusals: number;
  email_deliveries: number;
  smtp_messages: number | null;
  ledger_accounts: number;
  ledger_transfers: number;
};

export type AuditResult = {
  /** Empty: every invariant holds. */
  breaches: string[];
  /**
   * Not breaches, but worth a line in a report: e.g. the documented at-least-once window of the
   * confirmation email (the same Message-ID received twice, which mail clients collapse into one).
   */
  notes: string[];
  figures: AuditFigures;
};

/** More breaches than this of one kind are summarised: a broken invariant shows in the first few. */
const MAX_LISTED_PER_CHECK = 20;

type OrderFacts = {
  order_id: string;
  partner_id: string;
  type: "esim" | "topup";
  status: "pending" | "completed" | "failed";
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
  purchases: number;
  esims: number;
  esim_iccid: string | null;
  deliveries: number;
  delivery_recipient: string | null;
};

const ORDER_FACTS_SQL = `
select o.order_id, o.partner_id, o.type, o.status, o.cart_key, o.client_reference, o.iccid, o.email,
       o.total_minor,
       (select count(*) from ledger_transfers t where t.reference = o.order_id and t.kind = 'purchase')::int as transfers,
       (select count(*) from ledger_transfers t where t.reference = o.order_id and t.kind = 'purchase' and t.state = 'posted')::int as posted,
       (select count(*) from ledger_transfers t where t.reference = o.order_id and t.kind = 'purchase' and t.state = 'voided')::int as voided,
       (select count(*) from ledger_transfers t where t.reference = o.order_id and t.kind = 'purchase' and t.state = 'pending')::int as pending_transfers,
       (select max(t.amount_minor) from ledger_transfers t where t.reference = o.order_id and t.kind = 'purchase') as transfer_amount_minor,
       (select count(*) from purchases p where p.order_id = o.order_id)::int as purchases,
       (select count(*) from esims e where e.order_id = o.order_id)::int as esims,
       (select max(e.iccid) from esims e where e.order_id = o.order_id) as esim_iccid,
       (select count(*) from email_deliveries d where d.order_id = o.order_id)::int as deliveries,
       (select max(d.recipient) from email_deliveries d where d.order_id = o.order_id) as delivery_recipient
from orders o
order by o.seq`;

class BreachList {
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

export async function auditSystem(input: AuditInput): Promise<AuditResult> {
  const found = new BreachList();
  const notes: string[] = [];
  const db: Kysely<Database> = createKysely<Database>(input.pool);
  const orders = (await input.pool.query<OrderFacts>(ORDER_FACTS_SQL)).rows;
  const carrier = await input.simulator.audit();
  if (carrier.truncated) {
    found.add("carrier", "the simulator's audit is truncated: the carrier side cannot be fully checked");
  }

  checkUniqueness(found, orders, input.uniqueClientReferences === true);
  await checkDuplicateKeys(found, input.pool);
  checkOrders(found, orders, carrier);
  checkCarrierDeliveries(found, orders, carrier);
  const ledger = await auditLedger(db);
  for (const breach of ledger.breaches) found.add("ledger", breach);
  await checkWallets(found, input.pool);
  await checkIdempotencyKeys(found, input.pool);
  await checkEmailDeliveries(found, input.pool);
  if (input.smtp) checkSmtp(found, notes, orders, input.smtp.messages);

  const count = (predicate: (order: OrderFacts) => boolean) => orders.filter(predicate).length;
  const deliveries = await input.pool.query<{ n: number }>("select count(*)::int as n from email_deliveries");
  return {
    breaches: found.finish(),
    notes,
    figures: {
      orders: orders.length,
      completed: count((o) => o.status === "completed"),
      failed: count((o) => o.status === "failed"),
      pending: count((o) => o.status === "pending"),
      esim_completed: count((o) => o.status === "completed" && o.type === "esim"),
      topup_completed: count((o) => o.status === "completed" && o.type === "topup"),
      carrier_provisionings: carrier.counts.provisionings,
      carrier_topups: carrier.counts.topups,
      carrier_refusals: carrier.counts.refusals,
      email_deliveries: deliveries.rows[0]?.n ?? 0,
      smtp_messages: input.smtp ? input.smtp.messages.length : null,
      ledger_accounts: ledger.accounts,
      ledger_transfers: ledger.transfers,
    },
  };
}

function checkUniqueness(found: BreachList, orders: OrderFacts[], uniqueClientReferences: boolean): void {
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

async function checkDuplicateKeys(found: BreachList, pool: pg.Pool): Promise<void> {
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

function checkOrders(found: BreachList, orders: OrderFacts[], carrier: SimulatorAudit): void {
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
    if (order.status === "completed") {
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

function checkCompleted(
  found: BreachList,
  what: string,
  order: OrderFacts,
  deliveries: { reference: string; iccid: string }[],
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
      `${what} completed (charged) with ${deliveries.length} ${order.type === "esim" ? "provisionings" : "top-ups"} at the carrier`,
    );
  } else if (deliveries[0]!.iccid !== order.iccid) {
    found.add(
      "completed-delivered-once",
      `${what} names ICCID ${order.iccid} but the carrier delivered ${deliveries[0]!.iccid} for it`,
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

function checkCarrierDeliveries(found: BreachList, orders: OrderFacts[], carrier: SimulatorAudit): void {
  const byId = new Map(orders.map((o) => [o.order_id, o]));
  const check = (kind: "esim" | "topup", rows: { reference: string; iccid: string }[]) => {
    for (const row of rows) {
      const order = byId.get(row.reference);
      if (order?.status !== "completed" || order.type !== kind) {
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

async function checkWallets(found: BreachList, pool: pg.Pool): Promise<void> {
  const wallets = await pool.query<{ partner_id: string; available: number }>(`
    select partner_id, (posted_credits_minor - posted_debits_minor - pending_debits_minor)::bigint as available
    from ledger_accounts where kind = 'partner_wallet'`);
  for (const wallet of wallets.rows) {
    if (wallet.available < 0) {
      found.add(
        "wallet-not-negative",
        `partner ${wallet.partner_id} has available balance ${wallet.available}`,
      );
    }
  }
  // Each wallet's posted debits are exactly its completed orders' totals.
  const spent = await pool.query<{ partner_id: string; posted_debits: number; completed_total: number }>(`
    select a.partner_id, a.posted_debits_minor as posted_debits,
           coalesce((select sum(o.total_minor) from orders o where o.partner_id = a.partner_id and o.status = 'completed'), 0)::bigint as completed_total
    from ledger_accounts a where a.kind = 'partner_wallet'`);
  for (const row of spent.rows) {
    if (row.posted_debits !== row.completed_total) {
      found.add(
        "charged-for-completed-only",
        `partner ${row.partner_id} was debited ${row.posted_debits} but its completed orders total ${row.completed_total}`,
      );
    }
  }
}

async function checkIdempotencyKeys(found: BreachList, pool: pg.Pool): Promise<void> {
  const keys = await pool.query<{
    partner_id: string;
    idempotency_key: string;
    state: string;
    order_id: string | null;
    response_status: number | null;
    response_body: string | null;
    order_partner: string | null;
    order_status: string | null;
  }>(`
    select k.partner_id, k.idempotency_key, k.state, k.order_id, k.response_status, k.response_body,
           o.partner_id as order_partner, o.status as order_status
    from idempotency_keys k left join orders o on o.order_id = k.order_id`);
  for (const key of keys.rows) {
    const what = `Idempotency-Key ${JSON.stringify(key.idempotency_key)} of partner ${key.partner_id}`;
    if (key.order_id !== null && key.order_partner !== key.partner_id) {
      found.add("idempotency-key", `${what} names order ${key.order_id} of partner ${key.order_partner}`);
      continue;
    }
    if (key.state === "running") {
      if (key.order_status !== "pending") {
        found.add(
          "idempotency-key",
          `${what} is still running but its order ${key.order_id ?? "(none)"} is ${key.order_status ?? "missing"}: a retry would not replay`,
        );
      }
      continue;
    }
    if (key.order_id === null) {
      // Only a 402 is stored without an order (nothing was written but the key).
      if (key.response_status !== 402) {
        found.add("idempotency-key", `${what} stored ${key.response_status} without an order`);
      }
      continue;
    }
    const expected = key.order_status === "completed" ? 200 : key.order_status === "failed" ? 502 : null;
    if (key.response_status !== expected) {
      found.add(
        "idempotency-key",
        `${what} replays ${key.response_status} but its order ${key.order_id} is ${key.order_status}`,
      );
    } else if (expected === 200 && !key.response_body?.includes(`"orderID":"${key.order_id}"`)) {
      found.add("idempotency-key", `${what} replays a 200 that does not name its order ${key.order_id}`);
    }
  }
}

async function checkEmailDeliveries(found: BreachList, pool: pg.Pool): Promise<void> {
  const wrong = await pool.query<{ order_id: string; type: string | null; status: string | null }>(`
    select d.order_id, o.type, o.status from email_deliveries d left join orders o on o.order_id = d.order_id
    where o.order_id is null or o.type <> 'esim' or o.status <> 'completed'`);
  for (const row of wrong.rows) {
    found.add(
      "one-email-per-new-esim",
      `an email was delivered for order ${row.order_id}, which is ${row.type ?? "unknown"} ${row.status ?? "(missing)"}`,
    );
  }
  const missing = await pool.query<{ order_id: string }>(`
    select o.order_id from orders o
    where o.type = 'esim' and o.status = 'completed'
      and not exists (select 1 from email_deliveries d where d.order_id = o.order_id)`);
  for (const row of missing.rows) {
    found.add(
      "one-email-per-new-esim",
      `completed new-eSIM order ${row.order_id} has no delivered confirmation email`,
    );
  }
  const misaddressed = await pool.query<{ order_id: string }>(`
    select d.order_id from email_deliveries d join orders o on o.order_id = d.order_id where d.recipient <> o.email`);
  for (const row of misaddressed.rows) {
    found.add(
      "one-email-per-new-esim",
      `the email of order ${row.order_id} went to another address than the order's`,
    );
  }
}

/** The order id our mailer puts in the Message-ID: `<confirmation.ORDER_ID@domain>`. */
const MESSAGE_ID = /^<confirmation\.([A-Za-z0-9_-]{1,64})@[^>]+>$/;

function checkSmtp(
  found: BreachList,
  notes: string[],
  orders: OrderFacts[],
  messages: ReceivedMessage[],
): void {
  const expected = new Map(
    orders.filter((o) => o.type === "esim" && o.status === "completed").map((o) => [o.order_id, o]),
  );
  const received = new Map<string, ReceivedMessage[]>();
  for (const message of messages) {
    const head = (message.raw.split("\r\n\r\n")[0] ?? "").replace(/\r\n[ \t]+/g, " ");
    const header = /^message-id:[ \t]*(\S+)/im.exec(head)?.[1] ?? "";
    const order_id = MESSAGE_ID.exec(header)?.[1];
    if (order_id === undefined) {
      found.add(
        "smtp",
        `the SMTP server received a message with Message-ID ${JSON.stringify(header)}, not a confirmation`,
      );
      continue;
    }
    received.set(order_id, [...(received.get(order_id) ?? []), message]);
  }
  for (const [order_id, copies] of received) {
    const order = expected.get(order_id);
    if (!order) {
      found.add(
        "smtp",
        `the SMTP server received a confirmation for order ${order_id}, which is not a completed new eSIM`,
      );
      continue;
    }
    if (copies.some((copy) => copy.envelope.rcpt_to.join(",") !== order.email)) {
      found.add(
        "smtp",
        `the confirmation of order ${order_id} was sent to another recipient than ${order.email}`,
      );
    }
    if (copies.length > 1) {
      // The documented window of send-confirmation-email.ts: the relay accepted the message and
      // the process died before recording it. Same Message-ID, so the recipient sees one email.
      notes.push(
        `order ${order_id}: the SMTP server received its confirmation ${copies.length} times, with one Message-ID`,
      );
    }
  }
  for (const order_id of expected.keys()) {
    if (!received.has(order_id)) {
      found.add("smtp", `completed new-eSIM order ${order_id}: no confirmation reached the SMTP server`);
    }
  }
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

function ids(orders: OrderFacts[]): string {
  return orders.map((o) => `${o.order_id} (${o.status})`).join(", ");
}

/** Human summary, one line per figure and one per breach. */
export function formatAudit(result: AuditResult): string {
  const f = result.figures;
  const lines = [
    `audit: ${result.breaches.length === 0 ? "PASS" : `FAIL (${result.breaches.length} breaches)`}`,
    `  orders ${f.orders}: ${f.completed} completed (${f.esim_completed} esim, ${f.topup_completed} topup), ` +
      `${f.failed} failed, ${f.pending} pending`,
    `  carrier: ${f.carrier_provisionings} provisionings, ${f.carrier_topups} top-ups, ${f.carrier_refusals} refusals`,
    `  emails: ${f.email_deliveries} delivered (email_deliveries)` +
      (f.smtp_messages === null ? "" : `, ${f.smtp_messages} received by the SMTP server`),
    `  ledger: ${f.ledger_accounts} accounts, ${f.ledger_transfers} transfers`,
    ...result.notes.map((note) => `  note: ${note}`),
    ...result.breaches.map((breach) => `  BREACH ${breach}`),
  ];
  return lines.join("\n");
}
