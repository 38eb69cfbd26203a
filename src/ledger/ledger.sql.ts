// SQL of the double-entry ledger (migration 0001: ledger_accounts, ledger_transfers). Private to
// src/ledger/: the rest of the service moves money through accounts.ts and transfers.ts, which
// add the assertions, and reads the books through invariants.ts.
import { type Selectable, sql, type Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import { newId } from "../shared/ids.ts";

export type OperatorKind = "operator_funding" | "operator_revenue";

export type WalletTotals = Pick<
  Selectable<Database["ledger_accounts"]>,
  | "account_id"
  | "currency"
  | "posted_credits_minor"
  | "posted_debits_minor"
  | "pending_debits_minor"
  | "low_balance_threshold_minor"
>;

export async function insertOperatorAccount(
  db: Executor,
  kind: OperatorKind,
  currency: string,
): Promise<void> {
  await sql`
    insert into ledger_accounts (account_id, kind, currency)
    values (${newId("account")}, ${kind}, ${currency})
    on conflict (kind, currency) where partner_id is null do nothing`.execute(db);
}

export async function insertWallet(
  db: Executor,
  account_id: string,
  partner_id: string,
  currency: string,
): Promise<void> {
  await sql`
    insert into ledger_accounts (account_id, kind, partner_id, currency)
    values (${account_id}, 'partner_wallet', ${partner_id}, ${currency})`.execute(db);
}

export async function operatorAccountId(
  db: Executor,
  kind: OperatorKind,
  currency: string,
): Promise<string | null> {
  const result = await sql<{ account_id: string }>`
    select account_id from ledger_accounts where kind = ${kind} and currency = ${currency} and partner_id is null`.execute(
    db,
  );
  return result.rows[0]?.account_id ?? null;
}

/**
 * With `lock`: FOR NO KEY UPDATE, which still makes every writer of the running totals take turns,
 * but not the foreign-key checks of transfers inserted against the wallet meanwhile (docs/
 * architecture.md, "Lock order": the wallet is the last row a money transaction waits for).
 */
export async function selectWallet(
  db: Executor,
  partner_id: string,
  lock: boolean,
): Promise<WalletTotals | null> {
  const result = await sql<WalletTotals>`
    select account_id, currency, posted_credits_minor, posted_debits_minor, pending_debits_minor,
           low_balance_threshold_minor
    from ledger_accounts where partner_id = ${partner_id} and kind = 'partner_wallet'
    ${lock ? sql`for no key update` : sql``}`.execute(db);
  return result.rows[0] ?? null;
}

/** The wallets of these partners, one statement (a page of partners: no query per partner). */
export async function selectWallets(
  db: Executor,
  partner_ids: readonly string[],
): Promise<Array<WalletTotals & { partner_id: string }>> {
  if (partner_ids.length === 0) return [];
  const result = await sql<WalletTotals & { partner_id: string }>`
    select partner_id, account_id, currency, posted_credits_minor, posted_debits_minor, pending_debits_minor,
           low_balance_threshold_minor
    from ledger_accounts where partner_id = any(${partner_ids}::text[]) and kind = 'partner_wallet'`.execute(
    db,
  );
  return result.rows;
}

/**
 * The wallet's settled balance once `amount_minor` more is credited to it (negative: debited from it;
 * migration 0008): read from
 * the wallet row, which the caller has row-locked, before its running totals take the credit.
 */
function settledAfterCredit(wallet: string, amount_minor: number) {
  return sql<number>`(select posted_credits_minor - posted_debits_minor + ${amount_minor}::bigint
                      from ledger_accounts where account_id = ${wallet})`;
}

export type AdjustmentRow = { transfer_id: string; signed_minor: number; reason: string };

/**
 * A posted adjustment (migration 0031), funding -> wallet when `signed_minor` is positive, wallet ->
 * funding when negative, its stored balance the wallet's settled balance after it (read from the
 * wallet row the caller has locked, before its totals move). False when the wallet already has an
 * adjustment with this reference, of either sign: nothing written.
 */
export async function insertAdjustment(
  trx: Transaction<Database>,
  adjustment: {
    transfer_id: string;
    funding: string;
    wallet: string;
    signed_minor: number;
    currency: string;
    reference: string;
    reason: string;
  },
): Promise<boolean> {
  const a = adjustment;
  const [debit, credit] = a.signed_minor > 0 ? [a.funding, a.wallet] : [a.wallet, a.funding];
  const inserted = await sql<{ transfer_id: string }>`
    insert into ledger_transfers
      (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state, reference, reason,
       resolved_at, posted_seq, wallet_balance_after_minor)
    values (${a.transfer_id}, ${debit}, ${credit}, ${Math.abs(a.signed_minor)}, ${a.currency}, 'adjustment', 'posted',
            ${a.reference}, ${a.reason}, clock_timestamp(), nextval('ledger_posted_seq'),
            ${settledAfterCredit(a.wallet, a.signed_minor)})
    on conflict ((least(debit_account_id, credit_account_id)), (greatest(debit_account_id, credit_account_id)), reference)
      where kind = 'adjustment' do nothing
    returning transfer_id`.execute(trx);
  return inserted.rows.length > 0;
}

/** The wallet's adjustment with this reference, its amount signed as it moved the wallet. */
export async function walletAdjustmentOf(
  trx: Transaction<Database>,
  account_id: string,
  reference: string,
): Promise<AdjustmentRow | null> {
  const existing = await sql<AdjustmentRow>`
    select transfer_id, reason,
           case when credit_account_id = ${account_id} then amount_minor else -amount_minor end as signed_minor
    from ledger_transfers
    where kind = 'adjustment' and reference = ${reference}
      and (credit_account_id = ${account_id} or debit_account_id = ${account_id})`.execute(trx);
  return existing.rows[0] ?? null;
}

/** A posted debit out of the wallet (an adjustment's): the caller checked the balance under the row lock. */
export async function addPostedDebit(
  trx: Transaction<Database>,
  account_id: string,
  amount_minor: number,
): Promise<void> {
  await sql`
    update ledger_accounts set posted_debits_minor = posted_debits_minor + ${amount_minor}
    where account_id = ${account_id}`.execute(trx);
}

/** A posted wallet credit; false when this wallet already has a credit with this reference. */
export async function insertWalletCredit(
  trx: Transaction<Database>,
  credit: { transfer_id: string; funding: string; wallet: string; amount_minor: number; currency: string },
  reference: string,
): Promise<boolean> {
  const inserted = await sql<{ transfer_id: string }>`
    insert into ledger_transfers
      (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state, reference, resolved_at,
       posted_seq, wallet_balance_after_minor)
    values (${credit.transfer_id}, ${credit.funding}, ${credit.wallet}, ${credit.amount_minor}, ${credit.currency},
            'wallet_credit', 'posted', ${reference}, clock_timestamp(), nextval('ledger_posted_seq'),
            ${settledAfterCredit(credit.wallet, credit.amount_minor)})
    on conflict (credit_account_id, reference) where kind = 'wallet_credit' do nothing
    returning transfer_id`.execute(trx);
  return inserted.rows.length > 0;
}

export async function walletCreditOf(
  trx: Transaction<Database>,
  account_id: string,
  reference: string,
): Promise<{ transfer_id: string; amount_minor: number } | null> {
  const existing = await sql<{ transfer_id: string; amount_minor: number }>`
    select transfer_id, amount_minor from ledger_transfers
    where credit_account_id = ${account_id} and reference = ${reference} and kind = 'wallet_credit'`.execute(
    trx,
  );
  return existing.rows[0] ?? null;
}

export async function addPostedCredit(
  trx: Transaction<Database>,
  account_id: string,
  amount_minor: number,
): Promise<void> {
  await sql`
    update ledger_accounts set posted_credits_minor = posted_credits_minor + ${amount_minor}
    where account_id = ${account_id}`.execute(trx);
}

export type HeldWallet = {
  account_id: string;
  currency: string;
  /** The available balance once this hold is on (before it: this plus the amount held). */
  available_minor: number;
  low_balance_threshold_minor: number | null;
};

/**
 * Holds `amount_minor` on the wallet only if its available balance covers it, and records the
 * pending transfer from the wallet to the operator's revenue account of the wallet's currency, in
 * one statement (the revenue account looked up inside it: no round trip of its own, and no row of
 * it locked or updated, so purchases of all partners never queue on it). Null when funds are short:
 * then nothing is written.
 */
export async function holdOnWallet(
  trx: Transaction<Database>,
  hold: { partner_id: string; amount_minor: number; order_id: string },
): Promise<(HeldWallet & { transfers: number }) | null> {
  const held = await sql<HeldWallet & { transfers: number }>`
    with held as (
      update ledger_accounts
      set pending_debits_minor = pending_debits_minor + ${hold.amount_minor}
      where partner_id = ${hold.partner_id} and kind = 'partner_wallet'
        and posted_credits_minor - posted_debits_minor - pending_debits_minor >= ${hold.amount_minor}
      returning account_id, currency, low_balance_threshold_minor,
                posted_credits_minor - posted_debits_minor - pending_debits_minor as available_minor
    ), transfer as (
      insert into ledger_transfers
        (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state, reference)
      select ${newId("transfer")}, h.account_id, r.account_id, ${hold.amount_minor}, h.currency, 'purchase', 'pending',
             ${hold.order_id}
      from held h
      join ledger_accounts r on r.kind = 'operator_revenue' and r.currency = h.currency and r.partner_id is null
      returning transfer_id
    )
    select h.*, (select count(*) from transfer)::int as transfers from held h`.execute(trx);
  return held.rows[0] ?? null;
}

/**
 * pending -> posted or voided, once, and the hold moved out of the wallet's pending debits (into
 * its posted debits when posted), in one statement that fails (assert_holds, migration 0013)
 * unless it resolved exactly one pending transfer: its caller may send it without waiting for
 * the answer. The order matters: the transfer row is locked first (a concurrent resolver then
 * finds it no longer pending and fails), then the wallet row, and only then is posted_seq
 * drawn, so per wallet it follows commit order (0006). `posted_minor`: the part of the hold to post
 * (a group order's completed lines), at least 1 and at most what was held, else the statement fails;
 * null: all of it.
 */
export async function resolvePendingPurchase(
  trx: Transaction<Database>,
  order_id: string,
  outcome: "posted" | "voided",
  posted_minor: number | null = null,
): Promise<void> {
  const posted = outcome === "posted";
  const invariant = `order ${order_id} has one pending purchase transfer to ${posted ? "post" : "void"}`;
  // A part of the hold posted (a group order's completed lines): the transfer's amount becomes what
  // was posted, held_minor keeps what was held (migration 0047); the wallet releases all it held.
  const part = posted ? posted_minor : null;
  await sql`
    with pending as (
      select transfer_id, debit_account_id, amount_minor,
             coalesce(${part}::bigint, amount_minor) as posted_minor
      from ledger_transfers
      where reference = ${order_id} and kind = 'purchase' and state = 'pending'
      for update
    ), wallet as (
      update ledger_accounts a
      set pending_debits_minor = a.pending_debits_minor - p.amount_minor,
          posted_debits_minor = a.posted_debits_minor + (case when ${posted}::boolean then p.posted_minor else 0 end)
      from pending p where a.account_id = p.debit_account_id and p.posted_minor between 1 and p.amount_minor
      returning a.account_id, a.posted_credits_minor - a.posted_debits_minor as settled_after_minor
    ), resolved as (
      update ledger_transfers t
      set state = ${outcome}, resolved_at = clock_timestamp(),
          amount_minor = case when ${posted}::boolean then p.posted_minor else t.amount_minor end,
          held_minor = case when ${posted}::boolean and p.posted_minor < t.amount_minor then t.amount_minor end,
          posted_seq = case when ${posted}::boolean then nextval('ledger_posted_seq') end,
          wallet_balance_after_minor = case when ${posted}::boolean then w.settled_after_minor end
      from pending p join wallet w on w.account_id = p.debit_account_id
      where t.transfer_id = p.transfer_id
      returning t.transfer_id
    )
    select assert_holds(count(*) = 1, ${invariant}) from resolved`.execute(trx);
}

export type PostedPurchase = {
  transfer_id: string;
  debit_account_id: string;
  amount_minor: number;
  currency: string;
};

/** The order's purchase transfer, when it is posted (what a refund may give back, at most). */
export async function selectPostedPurchase(
  trx: Transaction<Database>,
  order_id: string,
): Promise<PostedPurchase | null> {
  const result = await sql<PostedPurchase>`
    select transfer_id, debit_account_id, amount_minor, currency from ledger_transfers
    where reference = ${order_id} and kind = 'purchase' and state = 'posted'`.execute(trx);
  return result.rows[0] ?? null;
}

/**
 * The refund of an order: posted at once, revenue -> wallet, naming the order. posted_seq is drawn
 * here, after the caller took the wallet's row lock (0006). False when the order already has one
 * (the unique index on refunds' reference): nothing written.
 */
export async function insertRefund(
  trx: Transaction<Database>,
  refund: {
    transfer_id: string;
    revenue: string;
    wallet: string;
    amount_minor: number;
    currency: string;
    order_id: string;
  },
): Promise<boolean> {
  const inserted = await sql<{ transfer_id: string }>`
    insert into ledger_transfers
      (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state, reference, resolved_at,
       posted_seq, wallet_balance_after_minor)
    values (${refund.transfer_id}, ${refund.revenue}, ${refund.wallet}, ${refund.amount_minor}, ${refund.currency},
            'refund', 'posted', ${refund.order_id}, clock_timestamp(), nextval('ledger_posted_seq'),
            ${settledAfterCredit(refund.wallet, refund.amount_minor)})
    on conflict (reference) where kind = 'refund' do nothing
    returning transfer_id`.execute(trx);
  return inserted.rows.length > 0;
}

export async function setLowBalanceThreshold(
  db: Executor,
  partner_id: string,
  threshold_minor: number | null,
): Promise<boolean> {
  const updated = await sql`
    update ledger_accounts set low_balance_threshold_minor = ${threshold_minor}
    where partner_id = ${partner_id} and kind = 'partner_wallet'`.execute(db);
  return Number(updated.numAffectedRows) === 1;
}

export type LedgerEntry = Pick<
  Selectable<Database["ledger_transfers"]>,
  "transfer_id" | "kind" | "state" | "amount_minor" | "currency" | "reference" | "created_at" | "resolved_at"
> & { direction: "credit" | "debit" };

export async function selectWalletEntries(
  db: Executor,
  partner_id: string,
  limit: number,
): Promise<LedgerEntry[]> {
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
