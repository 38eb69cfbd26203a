// The ledger's invariants, checked from the transfers themselves. Used by the tests, the
// chaos run and the operator CLI; an empty list of breaches means the books balance. One
// function per invariant; the audit runs them in order, in one read-only snapshot, so the
// checks that compare the ledger with the orders see both as of the same moment.
import type { Kysely } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import {
  countAccountsAndTransfers,
  operatorBalances,
  purchaseTransferStates,
  transfersStayInTheirCurrency,
  walletsNeverNegative,
  walletTotalsMatchTransfers,
} from "../ledger/invariants.ts";
import { completedOrderTotals, orderStatusPage } from "../orders/order-totals.ts";

export type LedgerAudit = { breaches: string[]; accounts: number; transfers: number };

type Invariant = (db: Executor) => Promise<string[]>;

/** Findings reported per check that lists rows; the first ones are enough to investigate. */
const MAX_FINDINGS = 100;
/** Orders read per statement while comparing them with their transfers. */
const ORDER_BATCH = 1_000;

/**
 * The operator's revenue equals what completed orders cost, and its funding account paid out
 * exactly the wallet credits: the derived balances of the accounts without running totals.
 */
async function operatorBooksBalance(db: Executor): Promise<string[]> {
  const balances = await operatorBalances(db);
  const completed = await completedOrderTotals(db);
  const breaches: string[] = [];
  for (const row of balances) {
    const orders_total = completed.get(row.currency) ?? 0;
    if (row.revenue !== orders_total) {
      breaches.push(
        `revenue in ${row.currency} is ${row.revenue} but completed orders total ${orders_total}`,
      );
    }
    if (row.funding !== row.credited) {
      breaches.push(
        `funding in ${row.currency} paid ${row.funding} but wallet credits total ${row.credited}`,
      );
    }
  }
  return breaches;
}

const EXPECTED_STATE = { completed: "posted", failed: "voided", pending: "pending" } as const;

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

/** In report order. */
const INVARIANTS: readonly Invariant[] = [
  walletTotalsMatchTransfers,
  transfersStayInTheirCurrency,
  operatorBooksBalance,
  walletsNeverNegative,
  purchaseTransfersFollowOrders,
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
