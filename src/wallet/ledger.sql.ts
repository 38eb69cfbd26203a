// The double-entry ledger (design.md "Money"). Money moves only as transfers between accounts,
// in integer minor units, append-only. A purchase is a two-phase transfer: created pending
// (a hold on the wallet), then posted when the carrier confirms or voided when it refuses.
// Partner wallets keep running totals because the balance check needs them under row lock;
// the operator accounts are derived from transfers so no single row is updated by everyone.
import assert from "node:assert/strict";
import { type Kysely, sql, type Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { newId } from "../shared/ids.ts";

type Executor = Kysely<Database> | Transaction<Database>;

/** Largest single amount we accept: far below 2^53, so sums of many stay exact in JS numbers. */
export const MAX_AMOUNT_MINOR = 1_000_000_000_00;

export type WalletBalance = {
  currency: string;
  posted_credits_minor: number;
  posted_debits_minor: number;
  pending_debits_minor: number;
  /** What the partner can spend now: posted credits minus posted and pending debits. */
  available_minor: number;
};

function assertAmount(amount_minor: number): void {
  assert.ok(Number.isSafeInteger(amount_minor), "amount_minor must be an integer");
  assert.ok(amount_minor > 0 && amount_minor <= MAX_AMOUNT_MINOR, "amount_minor out of range");
}

export async function ensureOperatorAccounts(db: Executor, currency: string): Promise<void> {
  for (const kind of ["operator_funding", "operator_revenue"] as const) {
    await sql`
      insert into ledger_accounts (account_id, kind, currency)
      values (${newId("account")}, ${kind}, ${currency})
      on conflict (kind, currency) where partner_id is null do nothing`.execute(db);
  }
}

export async function openWallet(db: Executor, partner_id: string, currency: string): Promise<string> {
  const account_id = newId("account");
  await sql`
    insert into ledger_accounts (account_id, kind, partner_id, currency)
    values (${account_id}, 'partner_wallet', ${partner_id}, ${currency})`.execute(db);
  return account_id;
}

async function operatorAccount(
  db: Executor,
  kind: "operator_funding" | "operator_revenue",
  currency: string,
): Promise<string> {
  const result = await sql<{ account_id: string }>`
    select account_id from ledger_accounts where kind = ${kind} and currency = ${currency} and partner_id is null`.execute(
    db,
  );
  const row = result.rows[0];
  assert.ok(row, `operator account ${kind} ${currency} is missing (ensureOperatorAccounts runs at start-up)`);
  return row.account_id;
}

type WalletRow = WalletBalance & { account_id: string };

function toBalance(row: Omit<WalletRow, "available_minor">): WalletRow {
  const available_minor = row.posted_credits_minor - row.posted_debits_minor - row.pending_debits_minor;
  assert.ok(available_minor >= 0, "a wallet's available balance is never negative");
  return { ...row, available_minor };
}

export async function walletOf(db: Executor, partner_id: string, lock = false): Promise<WalletRow | null> {
  const result = await sql<Omit<WalletRow, "available_minor">>`
    select account_id, currency, posted_credits_minor, posted_debits_minor, pending_debits_minor
    from ledger_accounts where partner_id = ${partner_id} and kind = 'partner_wallet'
    ${lock ? sql`for update` : sql``}`.execute(db);
  const row = result.rows[0];
  return row ? toBalance(row) : null;
}

export type CreditOutcome =
  | { kind: "credited"; balance: WalletBalance; transfer_id: string }
  | { kind: "already_credited"; balance: WalletBalance; transfer_id: string }
  | { kind: "reference_conflict"; existing_amount_minor: number };

/**
 * Operator credit, idempotent by `reference` per wallet: the unique index on
 * (credit_account_id, reference) makes a repeated reference credit once, even when the two
 * requests race. Must run inside a transaction.
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
  const inserted = await sql<{ transfer_id: string }>`
    insert into ledger_transfers
      (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state, reference, resolved_at)
    values (${transfer_id}, ${funding}, ${wallet.account_id}, ${amount_minor}, ${wallet.currency},
            'wallet_credit', 'posted', ${reference}, now())
    on conflict (credit_account_id, reference) where kind = 'wallet_credit' do nothing
    returning transfer_id`.execute(trx);
  if (inserted.rows.length === 0) {
    const existing = await sql<{ transfer_id: string; amount_minor: number }>`
      select transfer_id, amount_minor from ledger_transfers
      where credit_account_id = ${wallet.account_id} and reference = ${reference} and kind = 'wallet_credit'`.execute(
      trx,
    );
    const row = existing.rows[0];
    assert.ok(row, "a conflicting credit reference exists");
    if (row.amount_minor !== amount_minor)
      return { kind: "reference_conflict", existing_amount_minor: row.amount_minor };
    return { kind: "already_credited", balance: wallet, transfer_id: row.transfer_id };
  }
  await sql`
    update ledger_accounts set posted_credits_minor = posted_credits_minor + ${amount_minor}
    where account_id = ${wallet.account_id}`.execute(trx);
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
  const held = await sql<{ account_id: string; currency: string }>`
    update ledger_accounts
    set pending_debits_minor = pending_debits_minor + ${amount_minor}
    where partner_id = ${partner_id} and kind = 'partner_wallet'
      and posted_credits_minor - posted_debits_minor - pending_debits_minor >= ${amount_minor}
    returning account_id, currency`.execute(trx);
  const wallet = held.rows[0];
  if (!wallet) return false;
  assert.equal(wallet.currency, currency, "the order's currency is the wallet's currency");
  const revenue = await operatorAccount(trx, "operator_revenue", currency);
  await sql`
    insert into ledger_transfers
      (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state, reference)
    values (${newId("transfer")}, ${wallet.account_id}, ${revenue}, ${amount_minor}, ${currency},
            'purchase', 'pending', ${order_id})`.execute(trx);
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
  const resolved = await sql<{ debit_account_id: string; amount_minor: number }>`
    update ledger_transfers set state = ${outcome}, resolved_at = now()
    where reference = ${order_id} and kind = 'purchase' and state = 'pending'
    returning debit_account_id, amount_minor`.execute(trx);
  const transfer = resolved.rows[0];
  if (!transfer) return false;
  const moved = await sql`
    update ledger_accounts
    set pending_debits_minor = pending_debits_minor - ${transfer.amount_minor},
        posted_debits_minor = posted_debits_minor + ${outcome === "posted" ? transfer.amount_minor : 0}
    where account_id = ${transfer.debit_account_id}`.execute(trx);
  assert.equal(Number(moved.numAffectedRows), 1, "the hold's wallet exists");
  return true;
}

export type LedgerEntry = {
  transfer_id: string;
  kind: "wallet_credit" | "purchase";
  state: "pending" | "posted" | "voided";
  direction: "credit" | "debit";
  amount_minor: number;
  currency: string;
  reference: string;
  created_at: Date;
  resolved_at: Date | null;
};

export async function walletEntries(db: Executor, partner_id: string, limit: number): Promise<LedgerEntry[]> {
  const result = await sql<LedgerEntry>`
    select t.transfer_id, t.kind, t.state,
           case when t.credit_account_id = a.account_id then 'credit' else 'debit' end as direction,
           t.amount_minor, t.currency, t.reference, t.created_at, t.resolved_at
    from ledger_accounts a
    join ledger_transfers t on t.credit_account_id = a.account_id or t.debit_account_id = a.account_id
    where a.partner_id = ${partner_id} and a.kind = 'partner_wallet'
    order by t.created_at desc, t.transfer_id desc
    limit ${limit}`.execute(db);
  return result.rows;
}
