// Money moves only as transfers between accounts, in integer minor units, append-only
// (design.md "Money"). A purchase is a two-phase transfer: created pending (a hold on the
// wallet), then posted when the carrier confirms or voided when it refuses.
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import { deferWrite } from "../db/pool.ts";
import type { Database } from "../db/schema.ts";
import { newId } from "../shared/ids.ts";
import { MAX_AMOUNT_MINOR, operatorAccount, type WalletBalance, walletOf } from "./accounts.ts";
import {
  addPostedCredit,
  addPostedDebit,
  holdOnWallet,
  insertAdjustment,
  insertRefund,
  insertWalletCredit,
  resolvePendingPurchase,
  selectPostedPurchase,
  walletAdjustmentOf,
  walletCreditOf,
} from "./ledger.sql.ts";

function assertAmount(amount_minor: number): void {
  assert.ok(Number.isSafeInteger(amount_minor), "amount_minor must be an integer");
  assert.ok(amount_minor > 0 && amount_minor <= MAX_AMOUNT_MINOR, "amount_minor out of range");
}

export type CreditOutcome =
  | { kind: "credited"; balance: WalletBalance; transfer_id: string }
  | { kind: "already_credited"; balance: WalletBalance; transfer_id: string }
  | { kind: "reference_conflict"; existing_amount_minor: number };

/**
 * Operator credit, idempotent by `reference` per wallet: the unique index on
 * (credit_account_id, reference) makes a repeated reference credit once, even when the two
 * requests race. Must run inside a transaction. Null when the partner has no wallet.
 */
export async function creditWallet(
  trx: Transaction<Database>,
  partner_id: string,
  amount_minor: number,
  reference: string,
): Promise<CreditOutcome | null> {
  assertAmount(amount_minor);
  const wallet = await walletOf(trx, partner_id, true);
  if (!wallet) return null;
  const funding = await operatorAccount(trx, "operator_funding", wallet.currency);
  const transfer_id = newId("transfer");
  const credit = { transfer_id, funding, wallet: wallet.account_id, amount_minor, currency: wallet.currency };
  if (!(await insertWalletCredit(trx, credit, reference))) {
    const row = await walletCreditOf(trx, wallet.account_id, reference);
    assert.ok(row, "a conflicting credit reference exists");
    if (row.amount_minor !== amount_minor)
      return { kind: "reference_conflict", existing_amount_minor: row.amount_minor };
    return { kind: "already_credited", balance: wallet, transfer_id: row.transfer_id };
  }
  await addPostedCredit(trx, wallet.account_id, amount_minor);
  const after = await walletOf(trx, partner_id);
  assert.ok(
    after && after.available_minor === wallet.available_minor + amount_minor,
    "credit added exactly once",
  );
  return { kind: "credited", balance: after, transfer_id };
}

export type AdjustmentOutcome =
  | { kind: "adjusted"; balance: WalletBalance; transfer_id: string; crossed: ThresholdCrossing | null }
  | { kind: "already_adjusted"; balance: WalletBalance; transfer_id: string }
  | { kind: "reference_conflict"; existing_signed_minor: number }
  /** A debit beyond the available balance (holds count): nothing written. */
  | { kind: "insufficient_balance"; balance: WalletBalance };

/**
 * The operator's correction of a wallet, posted at once: `signed_minor` > 0 funding -> wallet, < 0
 * wallet -> funding. Takes the wallet's row lock first, so the balance check, the posting's
 * posted_seq and a racing purchase's hold take turns: a debit is refused (nothing written) when it
 * exceeds the available balance, and the wallet's CHECK is the backstop. Idempotent by reference
 * per wallet, whatever the sign (migration 0031's unique index): the same reference with the same
 * signed amount replays the first (its reason kept), as a credit's does; another amount or sign is a
 * conflict. Must run inside a transaction. Null
 * when the partner has no wallet.
 */
export async function adjustWallet(
  trx: Transaction<Database>,
  partner_id: string,
  input: { signed_minor: number; reference: string; reason: string },
): Promise<AdjustmentOutcome | null> {
  assertAmount(Math.abs(input.signed_minor));
  const wallet = await walletOf(trx, partner_id, true);
  if (!wallet) return null;
  const existing = await walletAdjustmentOf(trx, wallet.account_id, input.reference);
  if (existing) {
    if (existing.signed_minor !== input.signed_minor) {
      return { kind: "reference_conflict", existing_signed_minor: existing.signed_minor };
    }
    return { kind: "already_adjusted", balance: wallet, transfer_id: existing.transfer_id };
  }
  if (wallet.available_minor + input.signed_minor < 0)
    return { kind: "insufficient_balance", balance: wallet };
  const funding = await operatorAccount(trx, "operator_funding", wallet.currency);
  const transfer_id = newId("transfer");
  const adjustment = { transfer_id, funding, wallet: wallet.account_id, currency: wallet.currency, ...input };
  // The row lock above serialises adjustments of this wallet, so the reference was free just now.
  assert.ok(await insertAdjustment(trx, adjustment), "an adjustment reference free under the wallet's lock");
  if (input.signed_minor > 0) await addPostedCredit(trx, wallet.account_id, input.signed_minor);
  else await addPostedDebit(trx, wallet.account_id, -input.signed_minor);
  const after = await walletOf(trx, partner_id);
  assert.ok(
    after && after.available_minor === wallet.available_minor + input.signed_minor,
    "adjustment applied exactly once",
  );
  const threshold = after.low_balance_threshold_minor;
  const crossed =
    threshold !== null && after.available_minor < threshold && wallet.available_minor >= threshold
      ? { balance_minor: after.available_minor, threshold_minor: threshold, currency: after.currency }
      : null;
  return { kind: "adjusted", balance: after, transfer_id, crossed };
}

/** The wallet's available balance went from at or above its low-balance threshold to below it. */
export type ThresholdCrossing = { balance_minor: number; threshold_minor: number; currency: string };

export type Hold = { available_minor: number; crossed: ThresholdCrossing | null };

/**
 * Phase one of a purchase: a pending transfer from the wallet to revenue. The guarded UPDATE
 * takes the wallet's row lock and only succeeds when the available balance covers the amount,
 * so two concurrent purchases can never spend the same money; the table's CHECK constraint is
 * the backstop should this guard ever be wrong. Returns null (nothing written) when funds are
 * short. Only a hold lowers the available balance, so only here can it cross the low-balance
 * threshold: the same UPDATE returns the balance after and the threshold (no extra query), and
 * the balance before is that plus the amount, under the same row lock.
 */
export async function holdFunds(
  trx: Transaction<Database>,
  partner_id: string,
  order_id: string,
  amount_minor: number,
  currency: string,
): Promise<Hold | null> {
  assertAmount(amount_minor);
  const wallet = await holdOnWallet(trx, { partner_id, amount_minor, order_id });
  if (!wallet) return null;
  // Checked after the write: a failed assertion throws, and the caller's transaction rolls back.
  assert.equal(wallet.currency, currency, "the order's currency is the wallet's currency");
  assert.equal(
    wallet.transfers,
    1,
    `operator account operator_revenue ${currency} is missing (ensureOperatorAccounts runs at start-up)`,
  );
  const threshold = wallet.low_balance_threshold_minor;
  const crossed =
    threshold !== null &&
    wallet.available_minor < threshold &&
    wallet.available_minor + amount_minor >= threshold
      ? { balance_minor: wallet.available_minor, threshold_minor: threshold, currency }
      : null;
  return { available_minor: wallet.available_minor, crossed };
}

/**
 * Phase two: post (the carrier delivered) or void (it refused) the order's pending transfer and
 * release its hold, in one statement (ledger.sql.ts says why in that order), for the caller that
 * has just moved the order out of pending, so knows its hold is pending: sent with the
 * transaction's next statement or COMMIT (deferWrite), a round trip fewer. The statement checks
 * that it resolved one pending transfer; if not (a second caller), it fails, and with it the
 * transaction.
 */
export async function resolveHoldLater(
  trx: Transaction<Database>,
  order_id: string,
  outcome: "posted" | "voided",
): Promise<void> {
  await deferWrite(() => resolvePendingPurchase(trx, order_id, outcome));
}

/**
 * Phase two of a group order: posts `posted_minor` of the order's hold (its completed lines) and
 * releases the rest, at once. Lines refused for good are never charged. The statement fails, and
 * with it the transaction, unless it resolved one pending transfer holding at least that much.
 */
export async function postPartOfHold(
  trx: Transaction<Database>,
  order_id: string,
  posted_minor: number,
): Promise<void> {
  assertAmount(posted_minor);
  await resolvePendingPurchase(trx, order_id, "posted", posted_minor);
}

export type RefundOutcome =
  | { kind: "refunded"; transfer_id: string; amount_minor: number }
  /** The order has its refund already: nothing was written. */
  | { kind: "already_refunded" };

/**
 * The money of a completed order back to the wallet that paid it: a new posted transfer from
 * revenue to that wallet, naming the order. Never more than was paid: the amount is the order's
 * posted purchase transfer's, asserted equal to the order's total; once per order (a unique index).
 * Takes the wallet's row lock first, so posted_seq follows the wallet's commit order like every
 * posting (migration 0006). Must run inside the transaction that marks the order refunded.
 */
export async function refundToWallet(
  trx: Transaction<Database>,
  partner_id: string,
  order: { order_id: string; total_minor: number; currency: string },
): Promise<RefundOutcome> {
  assertAmount(order.total_minor);
  const wallet = await walletOf(trx, partner_id, true);
  assert.ok(wallet, "a partner with orders has a wallet");
  const purchase = await selectPostedPurchase(trx, order.order_id);
  assert.ok(purchase, "only an order whose purchase was posted can be refunded");
  assert.equal(purchase.debit_account_id, wallet.account_id, "the refund goes to the wallet that paid");
  assert.equal(purchase.amount_minor, order.total_minor, "a refund gives back exactly what was paid");
  assert.equal(purchase.currency, wallet.currency, "the refund is in the wallet's currency");
  const revenue = await operatorAccount(trx, "operator_revenue", wallet.currency);
  const transfer_id = newId("transfer");
  const refund = {
    transfer_id,
    revenue,
    wallet: wallet.account_id,
    amount_minor: purchase.amount_minor,
    currency: purchase.currency,
    order_id: order.order_id,
  };
  if (!(await insertRefund(trx, refund))) return { kind: "already_refunded" };
  await addPostedCredit(trx, wallet.account_id, purchase.amount_minor);
  const after = await walletOf(trx, partner_id);
  assert.ok(
    after && after.available_minor === wallet.available_minor + purchase.amount_minor,
    "refund credited exactly once",
  );
  return { kind: "refunded", transfer_id, amount_minor: purchase.amount_minor };
}
