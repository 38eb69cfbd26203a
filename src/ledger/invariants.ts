// The ledger's own invariants, each checked from the transfers themselves and returned as
// findings (an empty list: it holds). wallet/audit-ledger.ts runs them beside the checks that
// compare the ledger with the orders it charged for.
import type { Executor } from "../db/executor.ts";
import {
  crossCurrencyTransfers,
  ledgerSize,
  negativeWallets,
  type OperatorTotals,
  operatorTotals,
  purchaseStates,
  type RefundFacts,
  refundCount,
  refundFacts,
  walletBalanceBreaks,
  walletDrift,
} from "./audit.sql.ts";

export type { OperatorTotals, RefundFacts };

/** The refund transfers of each order id given, by order id; an order without one is absent. */
export async function refundTransfersOf(
  db: Executor,
  order_ids: string[],
): Promise<Map<string, RefundFacts>> {
  const rows = await refundFacts(db, order_ids);
  return new Map(rows.map((row) => [row.reference, row]));
}

/** How many refund transfers the ledger holds. */
export async function countRefundTransfers(db: Executor): Promise<number> {
  return refundCount(db);
}

/** Each wallet's running totals equal what its transfers say. */
export async function walletTotalsMatchTransfers(db: Executor): Promise<string[]> {
  const drift = await walletDrift(db);
  return drift.map(
    (row) => `${row.account_id}: ${row.column} is ${row.stored} but its transfers say ${row.derived}`,
  );
}

/**
 * Each posted transfer's stored wallet balance (what statements show as balance_after) is the
 * running sum of its wallet's posted transfers in posted_seq order: the value was written under the
 * wallet's lock when it was posted, and is re-derived here from the transfers alone.
 */
export async function walletBalancesMatchTransfers(db: Executor): Promise<string[]> {
  const rows = await walletBalanceBreaks(db);
  return rows.map(
    (row) =>
      `${row.account_id}: transfer ${row.transfer_id} stores balance ${row.stored} but the transfers before it sum to ${row.derived}`,
  );
}

/**
 * Double entry: every transfer moves money between two accounts of its own currency, so the
 * accounts sum to zero by construction; what can go wrong is a transfer across currencies.
 */
export async function transfersStayInTheirCurrency(db: Executor): Promise<string[]> {
  const rows = await crossCurrencyTransfers(db);
  return rows.map((row) => `transfer ${row.transfer_id} crosses currencies`);
}

export async function walletsNeverNegative(db: Executor): Promise<string[]> {
  const rows = await negativeWallets(db);
  return rows.map((row) => `${row.account_id}: available balance ${row.available} < 0`);
}

/** The derived balances of the operator accounts, which keep no running totals, per currency. */
export async function operatorBalances(db: Executor): Promise<OperatorTotals[]> {
  return operatorTotals(db);
}

/** The state of the purchase transfer of each order id given; an order without one is absent. */
export async function purchaseTransferStates(
  db: Executor,
  order_ids: string[],
): Promise<Map<string, "pending" | "posted" | "voided">> {
  const rows = await purchaseStates(db, order_ids);
  return new Map(rows.map((row) => [row.reference, row.state]));
}

export async function countAccountsAndTransfers(
  db: Executor,
): Promise<{ accounts: number; transfers: number }> {
  return ledgerSize(db);
}
