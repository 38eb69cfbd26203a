// The ledger's invariants, checked from the transfers themselves. Used by the tests, the
// chaos run and the operator CLI; an empty list of breaches means the books balance.
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";

export type LedgerAudit = { breaches: string[]; accounts: number; transfers: number };

export async function auditLedger(db: Kysely<Database>): Promise<LedgerAudit> {
  const breaches: string[] = [];

  // Each wallet's running totals equal what its transfers say.
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
  for (const row of drift.rows) {
    breaches.push(`${row.account_id}: ${row.column} is ${row.stored} but its transfers say ${row.derived}`);
  }

  // Double entry: every transfer moves money between two accounts of its own currency, so the
  // accounts sum to zero by construction; what can go wrong is a transfer across currencies.
  const crossCurrency = await sql<{ transfer_id: string }>`
    select t.transfer_id from ledger_transfers t
    join ledger_accounts d on d.account_id = t.debit_account_id
    join ledger_accounts c on c.account_id = t.credit_account_id
    where d.currency <> t.currency or c.currency <> t.currency
    limit 100`.execute(db);
  for (const row of crossCurrency.rows) breaches.push(`transfer ${row.transfer_id} crosses currencies`);

  // The operator's revenue equals what completed orders cost, and its funding account paid out
  // exactly the wallet credits: the derived balances of the accounts without running totals.
  const operator = await sql<{
    currency: string;
    revenue: number;
    completed: number;
    funding: number;
    credited: number;
  }>`
    select a.currency,
           coalesce((select sum(amount_minor) from ledger_transfers t
                     where t.credit_account_id = a.account_id and t.state = 'posted'), 0)::bigint as revenue,
           coalesce((select sum(total_minor) from orders o
                     where o.status = 'completed' and o.currency = a.currency), 0)::bigint as completed,
           coalesce((select sum(amount_minor) from ledger_transfers t join ledger_accounts f
                       on f.account_id = t.debit_account_id and f.kind = 'operator_funding'
                     where t.currency = a.currency and t.state = 'posted'), 0)::bigint as funding,
           coalesce((select sum(amount_minor) from ledger_transfers t
                     where t.kind = 'wallet_credit' and t.state = 'posted' and t.currency = a.currency), 0)::bigint
             as credited
    from ledger_accounts a where a.kind = 'operator_revenue'`.execute(db);
  for (const row of operator.rows) {
    if (row.revenue !== row.completed) {
      breaches.push(
        `revenue in ${row.currency} is ${row.revenue} but completed orders total ${row.completed}`,
      );
    }
    if (row.funding !== row.credited) {
      breaches.push(
        `funding in ${row.currency} paid ${row.funding} but wallet credits total ${row.credited}`,
      );
    }
  }

  const negative = await sql<{ account_id: string; available: number }>`
    select account_id, posted_credits_minor - posted_debits_minor - pending_debits_minor as available
    from ledger_accounts where kind = 'partner_wallet'
      and posted_credits_minor - posted_debits_minor - pending_debits_minor < 0`.execute(db);
  for (const row of negative.rows) breaches.push(`${row.account_id}: available balance ${row.available} < 0`);

  // Every purchase transfer belongs to exactly one order, and its state matches the order's.
  const mismatched = await sql<{ order_id: string; status: string; state: string | null }>`
    select o.order_id, o.status, t.state
    from orders o left join ledger_transfers t on t.reference = o.order_id and t.kind = 'purchase'
    where t.state is null
       or (o.status = 'completed' and t.state <> 'posted')
       or (o.status = 'failed' and t.state <> 'voided')
       or (o.status = 'pending' and t.state <> 'pending')
    limit 100`.execute(db);
  for (const row of mismatched.rows) {
    breaches.push(`order ${row.order_id} is ${row.status} but its transfer is ${row.state ?? "missing"}`);
  }

  const counts = await sql<{ accounts: number; transfers: number }>`
    select (select count(*) from ledger_accounts)::int as accounts, (select count(*) from ledger_transfers)::int as transfers`.execute(
    db,
  );
  return { breaches, accounts: counts.rows[0]?.accounts ?? 0, transfers: counts.rows[0]?.transfers ?? 0 };
}
