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
//  9. With profiles from an SM-DP+ (input.smdp): released profiles there = completed eSIM orders
//     (test/support/audit/smdp.ts).
//  8. Confirmation emails: exactly one email_deliveries row per completed new-eSIM order and none
//     for anything else (a refunded one may have had its email before the refund); when the SMTP
//     server is given, one distinct message (by Message-ID) per such order, to the order's address,
//     and nothing else.
// 11. Orders sent to a wholesale supplier (orders.supplier airalo or esimgo) against that supplier's
//     own records (its fake's schema): one supplier order per completed or refunded order of ours,
//     carrying its id, none for anything else, refunds on both sides alike
//     (test/support/audit/suppliers.ts). Invariants 2-5, 9 and 10 read the carrier's records, so
//     they are checked on the carrier's orders only.
// 10. Refunds: refunded orders credited exactly their total, once, and cancelled at the carrier;
//     nothing cancelled at the carrier stays unrefunded, top-ups cancelled with their profile
//     included (checkRefunds; the ledger's own check of refund transfers against orders is in
//     auditLedger).
//
// 12. Group orders (quantity > 1, issue 34), line by line instead of 2-3 and 8: one provisioning per
//     completed line's reference, none for a failed one, charged = completed lines x price once, one
//     email per traveller whose eSIM was made (test/support/audit/groups.ts).
//
// The checks are in test/support/audit/: orders.ts (1-5, 10), books.ts (6-9), suppliers.ts (11),
// facts.ts (what they read).
import type { Kysely } from "kysely";
import type pg from "pg";
import { createKysely } from "../../src/db/pool.ts";
import type { Database } from "../../src/db/schema.ts";
import { auditLedger } from "../../src/wallet/audit-ledger.ts";
import {
  checkEmailDeliveries,
  checkIdempotencyKeys,
  checkSmtp,
  checkWallets,
  type ResendFacts,
} from "./audit/books.ts";
import { BreachList, ORDER_FACTS_SQL, type OrderFacts } from "./audit/facts.ts";
import {
  checkGroupSmtp,
  checkGroups,
  isGroup,
  type LineFacts,
  madeLineReferences,
  readLines,
} from "./audit/groups.ts";
import {
  checkCarrierDeliveries,
  checkDuplicateKeys,
  checkOrders,
  checkPendingList,
  checkRefunds,
  checkUniqueness,
} from "./audit/orders.ts";
import { checkSmdpProfiles } from "./audit/smdp.ts";
import {
  checkSupplier,
  readSupplierOrders,
  SUPPLIER_NAMES,
  type SupplierFigures,
} from "./audit/suppliers.ts";
import type { SimulatorAudit } from "./simulator.ts";
import type { SmdpAudit } from "./smdp.ts";
import type { ReceivedMessage } from "./smtp.ts";

export type AuditInput = {
  pool: pg.Pool;
  /** The carrier simulator (anything with its audit call, e.g. a SimulatorProcess). */
  simulator: { audit: () => Promise<SimulatorAudit> };
  /** The test SMTP server's received messages, to check what really went out. */
  smtp?: { messages: ReceivedMessage[] };
  /** The SM-DP+ simulator, when profiles come from it (CARRIER_PROFILES=es2plus). */
  smdp?: { audit: () => Promise<SmdpAudit> } | null;
  /** The driver gave each logical purchase or top-up its own client_reference. */
  uniqueClientReferences?: boolean;
};

export type AuditFigures = {
  orders: number;
  completed: number;
  failed: number;
  pending: number;
  refunded: number;
  /** Group orders (quantity > 1), and their eSIMs made (completed lines). */
  group_orders: number;
  group_lines_made: number;
  esim_completed: number;
  topup_completed: number;
  carrier_provisionings: number;
  carrier_topups: number;
  carrier_refusals: number;
  carrier_cancellations: number;
  email_deliveries: number;
  smtp_messages: number | null;
  ledger_accounts: number;
  ledger_transfers: number;
  /** Per wholesale supplier: its own orders against ours (only suppliers with orders of either side). */
  suppliers: SupplierFigures[];
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

/**
 * What the SM-DP+ check compares with its released profiles: each completed single order, and each
 * completed line of a completed group as an order of its own (its reference, its ICCID).
 */
function soldProfiles(singles: OrderFacts[], groups: OrderFacts[], lines: LineFacts[]): OrderFacts[] {
  const completed = new Map(groups.filter((o) => o.status === "completed").map((o) => [o.order_id, o]));
  const made = lines.flatMap((line) => {
    const order = completed.get(line.order_id);
    return order && line.status === "completed"
      ? [{ ...order, order_id: line.reference, iccid: line.iccid }]
      : [];
  });
  return [...singles, ...made];
}

/** More breaches than this of one kind are summarised: a broken invariant shows in the first few. */
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
  await checkPendingList(found, input.pool);
  const carrierOrders = orders.filter((o) => o.supplier === "carrier");
  const singles = carrierOrders.filter((o) => !isGroup(o));
  const groups = carrierOrders.filter(isGroup);
  const groupLines = await readLines(input.pool);
  checkOrders(found, singles, carrier);
  checkCarrierDeliveries(found, carrierOrders, carrier, madeLineReferences(groupLines.lines));
  checkRefunds(found, singles, carrier);
  checkGroups(found, groups, groupLines, carrier);
  const suppliers: SupplierFigures[] = [];
  for (const supplier of SUPPLIER_NAMES) {
    const figures = checkSupplier(found, supplier, orders, await readSupplierOrders(input.pool, supplier));
    if (figures.supplier_orders + figures.completed + figures.refunded + figures.failed > 0)
      suppliers.push(figures);
  }
  const ledger = await auditLedger(db);
  for (const breach of ledger.breaches) found.add("ledger", breach);
  await checkWallets(found, input.pool);
  await checkIdempotencyKeys(found, input.pool);
  await checkEmailDeliveries(found, input.pool);
  if (input.smtp) {
    const resends = await input.pool.query<ResendFacts>(
      "select email_id, order_id, recipient from email_resends",
    );
    const groupMessages = checkGroupSmtp(found, groups, groupLines.lines, input.smtp.messages);
    checkSmtp(found, notes, orders, input.smtp.messages, resends.rows, groupMessages);
  }
  if (input.smdp)
    checkSmdpProfiles(found, soldProfiles(singles, groups, groupLines.lines), await input.smdp.audit());

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
      refunded: count((o) => o.status === "refunded"),
      group_orders: count(isGroup),
      group_lines_made: groupLines.lines.filter((line) => line.status === "completed").length,
      esim_completed: count((o) => o.status === "completed" && o.type === "esim"),
      topup_completed: count((o) => o.status === "completed" && o.type === "topup"),
      carrier_provisionings: carrier.counts.provisionings,
      carrier_topups: carrier.counts.topups,
      carrier_refusals: carrier.counts.refusals,
      carrier_cancellations: carrier.counts.cancellations,
      email_deliveries: deliveries.rows[0]?.n ?? 0,
      smtp_messages: input.smtp ? input.smtp.messages.length : null,
      ledger_accounts: ledger.accounts,
      ledger_transfers: ledger.transfers,
      suppliers,
    },
  };
}

export function formatAudit(result: AuditResult): string {
  const f = result.figures;
  const lines = [
    `audit: ${result.breaches.length === 0 ? "PASS" : `FAIL (${result.breaches.length} breaches)`}`,
    `  orders ${f.orders}: ${f.completed} completed (${f.esim_completed} esim, ${f.topup_completed} topup), ` +
      `${f.failed} failed, ${f.pending} pending, ${f.refunded} refunded; ${f.group_orders} group orders ` +
      `(${f.group_lines_made} of their eSIMs made)`,
    `  carrier: ${f.carrier_provisionings} provisionings, ${f.carrier_topups} top-ups, ${f.carrier_refusals} refusals, ` +
      `${f.carrier_cancellations} cancellations`,
    `  emails: ${f.email_deliveries} delivered (email_deliveries)` +
      (f.smtp_messages === null ? "" : `, ${f.smtp_messages} received by the SMTP server`),
    `  ledger: ${f.ledger_accounts} accounts, ${f.ledger_transfers} transfers`,
    ...f.suppliers.map(
      (s) =>
        `  ${s.supplier}: ${s.supplier_orders} orders there (${s.supplier_esims} eSIMs, ${s.supplier_topups} top-ups, ` +
        `${s.supplier_refunded} refunded) for ${s.completed + s.refunded} completed or refunded orders of ours ` +
        `(${s.refunded} refunded); ${s.failed} failed`,
    ),
    ...result.notes.map((note) => `  note: ${note}`),
    ...result.breaches.map((breach) => `  BREACH ${breach}`),
  ];
  return lines.join("\n");
}
