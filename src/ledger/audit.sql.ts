// SQL of the ledger audit: reads only, over the ledger's own tables. Private to src/ledger/;
// invariants.ts turns these rows into findings.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

/** Partner wallets whose running totals differ from what their transfers say. */
export async function walletDrift(
  db: Executor,
): Promise<Array<{ account_id: string; column: string; stored: number; derived: number }>> {
  const drift = await sql<{ account_id: string; column: string; stored: number; derived: number }>`
    with derived as (
      select a.account_id,
             a.posted_credits_minor, a.posted_debits_minor, a.pending_debits_minor,
             coalesce(sum(t.amount_minor) filter (where t.credit_account_id = a.account_id and t.state = 'posted'), 0)::bigint as credits,
             coalesce(sum(t.amount_minor) filter (where t.debit_account_id = a.account_id and t.state = 'posted'), 0)::bigint as debits,
             coalesce(sum(t.amount_minor) filter (where t.debit_account_id = a.account_id and t.state = 'pending'), 0)::bigint as pending
      from ledger_accounts a
      left join ledger_transfers t on t.credit_account_id = a.account_id or t.debit_account_id = a.account_id
      where a.kind = 'partner_wallet'
      group by a.account_id
    )
    select account_id, 'posted_credits_minor' as column, posted_credits_minor as stored, credits as derived from derived where posted_credits_minor <> credits
    union all
    select account_id, 'posted_debits_minor', posted_debits_minor, debits from derived where posted_debits_minor <> debits
    union all
    select account_id, 'pending_debits_minor', pending_debits_minor, pending from derived where pending_debits_minor <> pending`.execute(
    db,
  );
  return drift.rows;
}

/**
 * Posted transfers whose stored wallet balance (migration 0008) is not the running sum of their
 * wallet's posted transfers in posted_seq order up to them (at most 100).
 */
export async function walletBalanceBreaks(
  db: Executor,
): Promise<Array<{ transfer_id: string; account_id: string; stored: number | null; derived: number }>> {
  const result = await sql<{
    transfer_id: string;
    account_id: string;
    stored: number | null;
    derived: number;
  }>`
    with moves as (
      select t.transfer_id, a.account_id, t.posted_seq, t.wallet_balance_after_minor as stored,
             case when t.credit_account_id = a.account_id then t.amount_minor else -t.amount_minor end as signed_minor
      from ledger_transfers t
      join ledger_accounts a on a.kind = 'partner_wallet' and a.account_id in (t.credit_account_id, t.debit_account_id)
      where t.posted_seq is not null
    ), running as (
      select transfer_id, account_id, stored,
             (sum(signed_minor) over (partition by account_id order by posted_seq))::bigint as derived
      from moves
    )
    select transfer_id, account_id, stored, derived from running
    where stored is distinct from derived
    limit 100`.execute(db);
  return result.rows;
}

/** Transfers whose accounts are not both in the transfer's currency (at most 100). */
export async function crossCurrencyTransfers(db: Executor): Promise<Array<{ transfer_id: string }>> {
  const result = await sql<{ transfer_id: string }>`
    select t.transfer_id from ledger_transfers t
    join ledger_accounts d on d.account_id = t.debit_account_id
    join ledger_accounts c on c.account_id = t.credit_account_id
    where d.currency <> t.currency or c.currency <> t.currency
    limit 100`.execute(db);
  return result.rows;
}

export type OperatorTotals = {
  currency: string;
  revenue: number;
  /** What the revenue account paid back to wallets (refunds). */
  refunded: number;
  /** What the funding account paid out, net of what debit adjustments paid back into it. */
  funding: number;
  /** Posted wallet credits plus adjustments, signed as they moved the wallets. */
  credited: number;
};

/**
 * Per revenue account: what it received (posted), what the funding account of its currency paid
 * out net, and what the posted wallet credits and adjustments of that currency total.
 */
export async function operatorTotals(db: Executor): Promise<OperatorTotals[]> {
  const result = await sql<OperatorTotals>`
    select a.currency,
           coalesce((select sum(amount_minor) from ledger_transfers t
                     where t.credit_account_id = a.account_id and t.state = 'posted'), 0)::bigint as revenue,
           coalesce((select sum(amount_minor) from ledger_transfers t
                     where t.debit_account_id = a.account_id and t.state = 'posted'), 0)::bigint as refunded,
           (coalesce((select sum(amount_minor) from ledger_transfers t join ledger_accounts f
                        on f.account_id = t.debit_account_id and f.kind = 'operator_funding'
                      where t.currency = a.currency and t.state = 'posted'), 0)
          - coalesce((select sum(amount_minor) from ledger_transfers t join ledger_accounts f
                        on f.account_id = t.credit_account_id and f.kind = 'operator_funding'
                      where t.currency = a.currency and t.state = 'posted'), 0))::bigint as funding,
           (coalesce((select sum(amount_minor) from ledger_transfers t
                      where t.kind = 'wallet_credit' and t.state = 'posted' and t.currency = a.currency), 0)
          + coalesce((select sum(case when w.kind = 'partner_wallet' then t.amount_minor else -t.amount_minor end)
                      from ledger_transfers t join ledger_accounts w on w.account_id = t.credit_account_id
                      where t.kind = 'adjustment' and t.state = 'posted' and t.currency = a.currency), 0))::bigint
             as credited
    from ledger_accounts a where a.kind = 'operator_revenue'`.execute(db);
  return result.rows;
}

export async function negativeWallets(
  db: Executor,
): Promise<Array<{ account_id: string; available: number }>> {
  const result = await sql<{ account_id: string; available: number }>`
    select account_id, posted_credits_minor - posted_debits_minor - pending_debits_minor as available
    from ledger_accounts where kind = 'partner_wallet'
      and posted_credits_minor - posted_debits_minor - pending_debits_minor < 0`.execute(db);
  return result.rows;
}

/** The state of each purchase transfer named by these references (order ids). */
export async function purchaseStates(
  db: Executor,
  references: string[],
): Promise<Array<{ reference: string; state: "pending" | "posted" | "voided" }>> {
  if (references.length === 0) return [];
  const result = await sql<{ reference: string; state: "pending" | "posted" | "voided" }>`
    select reference, state from ledger_transfers
    where kind = 'purchase' and reference = any(${references}::text[])`.execute(db);
  return result.rows;
}

export type RefundFacts = {
  reference: string;
  refunds: number;
  refunded_minor: number;
  /** Whether every refund of the order credited the wallet its purchase debited. */
  to_payer: boolean;
};

/** The refund transfers naming each of these references (order ids); an order without one is absent. */
export async function refundFacts(db: Executor, references: string[]): Promise<RefundFacts[]> {
  if (references.length === 0) return [];
  const result = await sql<RefundFacts>`
    select r.reference, count(*)::int as refunds, sum(r.amount_minor)::bigint as refunded_minor,
           bool_and(r.credit_account_id = p.debit_account_id and p.state = 'posted') as to_payer
    from ledger_transfers r
    left join ledger_transfers p on p.reference = r.reference and p.kind = 'purchase'
    where r.kind = 'refund' and r.reference = any(${references}::text[])
    group by r.reference`.execute(db);
  return result.rows.map((row) => ({ ...row, to_payer: row.to_payer === true }));
}

/** How many refund transfers exist (each names an order; compared with the refunded orders). */
export async function refundCount(db: Executor): Promise<number> {
  const result = await sql<{ n: number }>`
    select count(*)::int as n from ledger_transfers where kind = 'refund'`.execute(db);
  return result.rows[0]?.n ?? 0;
}

export async function ledgerSize(db: Executor): Promise<{ accounts: number; transfers: number }> {
  const counts = await sql<{ accounts: number; transfers: number }>`
    select (select count(*) from ledger_accounts)::int as accounts, (select count(*) from ledger_transfers)::int as transfers`.execute(
    db,
  );
  return counts.rows[0] ?? { accounts: 0, transfers: 0 };
}
