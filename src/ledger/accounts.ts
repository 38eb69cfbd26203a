// The ledger's accounts (design.md "Money"): each partner has a wallet account; the operator has
// a funding account and a revenue account per currency. Partner wallets keep running totals
// because the balance check needs them under row lock; the operator accounts are derived from
// transfers so no single row is updated by everyone.
import assert from "node:assert/strict";
import type { Executor } from "../db/executor.ts";
import { newId } from "../shared/ids.ts";
import {
  insertOperatorAccount,
  insertWallet,
  type LedgerEntry,
  type OperatorKind,
  operatorAccountId,
  selectWallet,
  selectWalletEntries,
  selectWallets,
  setLowBalanceThreshold,
  type WalletTotals,
} from "./ledger.sql.ts";
import {
  countStatementRows,
  type StatementQuery,
  type StatementRow,
  selectSettledBalanceBefore,
  selectStatementPage,
  selectStatementPageOldestFirst,
  selectStatementRow,
} from "./statements.sql.ts";

export type { LedgerEntry, StatementQuery, StatementRow };

/** Largest single amount we accept: far below 2^53, so sums of many stay exact in JS numbers. */
export const MAX_AMOUNT_MINOR = 1_000_000_000_00;

export type WalletBalance = Omit<WalletTotals, "account_id"> & {
  /** What the partner can spend now: posted credits minus posted and pending debits. */
  available_minor: number;
};

export type WalletRow = WalletBalance & { account_id: string };

export async function ensureOperatorAccounts(db: Executor, currency: string): Promise<void> {
  for (const kind of ["operator_funding", "operator_revenue"] as const) {
    await insertOperatorAccount(db, kind, currency);
  }
}

export async function openWallet(db: Executor, partner_id: string, currency: string): Promise<string> {
  const account_id = newId("account");
  await insertWallet(db, account_id, partner_id, currency);
  return account_id;
}

export async function operatorAccount(db: Executor, kind: OperatorKind, currency: string): Promise<string> {
  const account_id = await operatorAccountId(db, kind, currency);
  assert.ok(
    account_id,
    `operator account ${kind} ${currency} is missing (ensureOperatorAccounts runs at start-up)`,
  );
  return account_id;
}

function toBalance(row: WalletTotals): WalletRow {
  const available_minor = row.posted_credits_minor - row.posted_debits_minor - row.pending_debits_minor;
  assert.ok(available_minor >= 0, "a wallet's available balance is never negative");
  return { ...row, available_minor };
}

/** The partner's wallet and its balance, row-locked until the transaction ends when `lock`. */
export async function walletOf(db: Executor, partner_id: string, lock = false): Promise<WalletRow | null> {
  const row = await selectWallet(db, partner_id, lock);
  return row ? toBalance(row) : null;
}

/** The wallets of these partners by partner id, read in one statement; a partner with none is absent. */
export async function walletsOf(
  db: Executor,
  partner_ids: readonly string[],
): Promise<Map<string, WalletRow>> {
  const rows = await selectWallets(db, partner_ids);
  return new Map(rows.map(({ partner_id, ...row }) => [partner_id, toBalance(row)]));
}

/** The wallet's transfers, newest first. */
export async function walletEntries(db: Executor, partner_id: string, limit: number): Promise<LedgerEntry[]> {
  return selectWalletEntries(db, partner_id, limit);
}

/** Turns the wallet's low-balance alert on (a threshold) or off (null); false when no such wallet. */
export async function setWalletThreshold(
  db: Executor,
  partner_id: string,
  threshold_minor: number | null,
): Promise<boolean> {
  assert.ok(threshold_minor === null || (Number.isSafeInteger(threshold_minor) && threshold_minor >= 0));
  return setLowBalanceThreshold(db, partner_id, threshold_minor);
}

/** At most this many rows per statement page read. */
export const MAX_STATEMENT_PAGE = 1_000;

/**
 * A page of the wallet's statement: its posted transfers, newest first, each with the settled
 * balance it left (a running sum of the transfers in posted order, never stored).
 */
export async function walletStatementPage(db: Executor, query: StatementQuery): Promise<StatementRow[]> {
  assert.ok(query.limit >= 1 && query.limit <= MAX_STATEMENT_PAGE, "a statement page is bounded");
  const rows = await selectStatementPage(db, query);
  for (const [i, row] of rows.entries()) {
    const older = rows[i + 1];
    if (older) {
      assert.equal(older.balance_after_minor, row.balance_after_minor - row.signed_minor, "the chain holds");
    }
  }
  return rows;
}

/** A page of the wallet's statement oldest first: rows posted after `after_seq` (null: the first). */
export async function walletStatementPageOldestFirst(
  db: Executor,
  query: Omit<StatementQuery, "before_seq"> & { after_seq: number | null },
): Promise<StatementRow[]> {
  assert.ok(query.limit >= 1 && query.limit <= MAX_STATEMENT_PAGE, "a statement page is bounded");
  const rows = await selectStatementPageOldestFirst(db, query);
  for (const [i, row] of rows.entries()) {
    const newer = rows[i + 1];
    if (newer) {
      assert.equal(
        newer.balance_after_minor,
        row.balance_after_minor + newer.signed_minor,
        "the chain holds",
      );
    }
  }
  return rows;
}

/** One posted transfer of the wallet as its statement shows it; null when it is none of its. */
export async function walletStatementRow(
  db: Executor,
  account_id: string,
  transfer_id: string,
): Promise<StatementRow | null> {
  return selectStatementRow(db, account_id, transfer_id);
}

/** Rows of the wallet's statement in a date range, counted up to `cap` and no further. */
export async function walletStatementSize(
  db: Executor,
  query: Omit<StatementQuery, "limit">,
  cap: number,
): Promise<number> {
  return countStatementRows(db, query, cap);
}

/** The wallet's settled balance (credits minus confirmed debits) just before `instant`. */
export async function walletBalanceBefore(db: Executor, account_id: string, instant: Date): Promise<number> {
  const balance = await selectSettledBalanceBefore(db, account_id, instant);
  assert.ok(Number.isSafeInteger(balance), "a balance in minor units");
  return balance;
}
