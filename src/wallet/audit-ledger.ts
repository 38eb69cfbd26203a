// The ledger's invariants, checked from the transfers themselves. Used by the tests, the
// chaos run and the operator CLI; an empty list of breaches means the books balance. One
// function per invariant; the audit runs them in order, in one read-only snapshot, so the
// checks that compare the ledger with the orders see both as of the same moment.
import type { Kysely } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import {
  countAccountsAndTransfers,
  countRefundTransfers,
  operatorBalances,
  purchaseTransferStates,
  refundTransfersOf,
  transfersStayInTheirCurrency,
  walletBalancesMatchTransfers,
  walletsNeverNegative,
  walletTotalsMatchTransfers,
} from "../ledger/invariants.ts";
import { chargedOrderTotals, orderStatusPage } from "../orders/order-totals.ts";

export type LedgerAudit = { breaches: string[]; accounts: number; transfers: number };

type Invariant = (db: Executor) => Promise<string[]>;

/** Findings reported per check that lists rows; the first ones are enough to investigate. */
const MAX_FINDINGS = 100;
/** Orders read per statement while comparing them with their transfers. */
const ORDER_BATCH = 1_000;

/**
 * The operator's revenue received what charged orders (completed, or refunded since) cost and paid
 * back what the refunded ones cost, and its funding account paid out (net of debit adjustments paid
 * back into it) exactly the wallet credits and adjustments:
 * the derived balances of the accounts without running totals.
 */
async function operatorBooksBalance(db: Executor): Promise<string[]> {
  const balances = await operatorBalances(db);
  const charged = await chargedOrderTotals(db);
  const breaches: string[] = [];
  for (const row of balances) {
    const orders = charged.get(row.currency) ?? { charged_minor: 0, refunded_minor: 0 };
    if (row.revenue !== orders.charged_minor) {
      breaches.push(
        `revenue in ${row.currency} is ${row.revenue} but completed and refunded orders total ${orders.charged_minor}`,
      );
    }
    if (row.refunded !== orders.refunded_minor) {
      breaches.push(
        `revenue in ${row.currency} paid back ${row.refunded} but refunded orders total ${orders.refunded_minor}`,
      );
    }
    if (row.funding !== row.credited) {
      breaches.push(
        `funding in ${row.currency} paid ${row.funding} net but wallet credits and adjustments total ${row.credited}`,
      );
    }
  }
  return breaches;
}

const EXPECTED_STATE = {
  completed: "posted",
  refunded: "posted",
  failed: "voided",
  pending: "pending",
} as const;

/** Every order has exactly one purchase transfer (a unique index), in the state its status says. */
async function purchaseTransfersFollowOrders(db: Executor): Promise<string[]> {
  const breaches: string[] = [];
  let after_seq = 0;
  while (breaches.length < MAX_FINDINGS) {
    const orders = await orderStatusPage(db, after_seq, ORDER_BATCH);
    const states = await purchaseTransferStates(
      db,
      orders.map((order) => order.order_id),
    );
    for (const order of orders) {
      const state = states.get(order.order_id);
      if (state === EXPECTED_STATE[order.status]) continue;
      breaches.push(`order ${order.order_id} is ${order.status} but its transfer is ${state ?? "missing"}`);
    }
    if (orders.length < ORDER_BATCH) break;
    after_seq = orders.at(-1)!.seq;
  }
  return breaches.slice(0, MAX_FINDINGS);
}

/**
 * Refunded orders credited exactly their total, once, to the wallet that paid; no other order has a
 * refund (the ledger holds as many refund transfers as there are refunded orders).
 */
async function refundsFollowOrders(db: Executor): Promise<string[]> {
  const breaches: string[] = [];
  let after_seq = 0;
  let refunded_orders = 0;
  for (;;) {
    const orders = await orderStatusPage(db, after_seq, ORDER_BATCH);
    const refunds = await refundTransfersOf(
      db,
      orders.map((order) => order.order_id),
    );
    for (const order of orders) {
      const refund = refunds.get(order.order_id);
      if (order.status === "refunded") refunded_orders++;
      const finding = refundFinding(order, refund);
      if (finding !== null && breaches.length < MAX_FINDINGS)
        breaches.push(`order ${order.order_id} ${finding}`);
    }
    if (orders.length < ORDER_BATCH) break;
    after_seq = orders.at(-1)!.seq;
  }
  const transfers = await countRefundTransfers(db);
  if (transfers !== refunded_orders) {
    breaches.push(`${transfers} refund transfers but ${refunded_orders} refunded orders`);
  }
  return breaches;
}

function refundFinding(
  order: { status: string; total_minor: number },
  refund: { refunds: number; refunded_minor: number; to_payer: boolean } | undefined,
): string | null {
  if (order.status !== "refunded") {
    return refund === undefined ? null : `is ${order.status} but has ${refund.refunds} refund transfers`;
  }
  if (refund === undefined) return "is refunded but has no refund transfer";
  if (refund.refunds !== 1) return `is refunded with ${refund.refunds} refund transfers`;
  if (refund.refunded_minor !== order.total_minor) {
    return `cost ${order.total_minor} but was refunded ${refund.refunded_minor}`;
  }
  return refund.to_payer ? null : "was refunded to another wallet than the one its posted purchase debited";
}

/** In report order. */
const INVARIANTS: readonly Invariant[] = [
  walletTotalsMatchTransfers,
  walletBalancesMatchTransfers,
  transfersStayInTheirCurrency,
  operatorBooksBalance,
  walletsNeverNegative,
  purchaseTransfersFollowOrders,
  refundsFollowOrders,
];

export async function auditLedger(db: Kysely<Database>): Promise<LedgerAudit> {
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .setAccessMode("read only")
    .execute(async (trx) => {
      const breaches: string[] = [];
      for (const invariant of INVARIANTS) breaches.push(...(await invariant(trx)));
      return { breaches, ...(await countAccountsAndTransfers(trx)) };
    });
}
