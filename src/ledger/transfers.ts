// Money moves only as transfers between accounts, in integer minor units, append-only
// (design.md "Money"). A purchase is a two-phase transfer: created pending (a hold on the
// wallet), then posted when the carrier confirms or voided when it refuses.
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { newId } from "../shared/ids.ts";
import { MAX_AMOUNT_MINOR, operatorAccount, type WalletBalance, walletOf } from "./accounts.ts";
import {
  addPostedCredit,
  holdOnWallet,
  insertPendingPurchase,
  insertWalletCredit,
  releaseHold,
  resolvePendingPurchase,
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

/**
 * Phase one of a purchase: a pending transfer from the wallet to revenue. The guarded UPDATE
 * takes the wallet's row lock and only succeeds when the available balance covers the amount,
 * so two concurrent purchases can never spend the same money; the table's CHECK constraint is
 * the backstop should this guard ever be wrong. Returns false (nothing written) when funds are short.
 */
export async function holdFunds(
  trx: Transaction<Database>,
  partner_id: string,
  order_id: string,
  amount_minor: number,
  currency: string,
): Promise<boolean> {
  assertAmount(amount_minor);
  const wallet = await holdOnWallet(trx, partner_id, amount_minor);
  if (!wallet) return false;
  assert.equal(wallet.currency, currency, "the order's currency is the wallet's currency");
  const revenue = await operatorAccount(trx, "operator_revenue", currency);
  await insertPendingPurchase(trx, { wallet: wallet.account_id, revenue, amount_minor, currency, order_id });
  return true;
}

/**
 * Phase two: post (the carrier delivered) or void (it refused) the order's pending transfer.
 * `where state = 'pending'` makes the transition happen once; a second caller gets false.
 */
export async function resolveHold(
  trx: Transaction<Database>,
  order_id: string,
  outcome: "posted" | "voided",
): Promise<boolean> {
  const transfer = await resolvePendingPurchase(trx, order_id, outcome);
  if (!transfer) return false;
  const moved = await releaseHold(
    trx,
    transfer.debit_account_id,
    transfer.amount_minor,
    outcome === "posted",
  );
  assert.equal(moved, 1, "the hold's wallet exists");
  return true;
}
