// SQL of wallet statements (migrations 0006, 0008): a wallet's posted transfers in posted_seq order,
// each with the settled balance it left, stored when it was posted. Private to src/ledger/.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

export type StatementRow = {
  transfer_id: string;
  kind: "wallet_credit" | "purchase" | "refund" | "adjustment";
  /** Positive into the wallet, negative out of it. */
  signed_minor: number;
  balance_after_minor: number;
  currency: string;
  reference: string;
  /** An adjustment's reason (migration 0031); null on every other kind. */
  reason: string | null;
  posted_seq: number;
  posted_at: Date;
};

export type StatementQuery = {
  account_id: string;
  /** Only rows posted before this one (the keyset cursor); null: from the newest. */
  before_seq: number | null;
  /** Posted at or after / strictly before (UTC instants); null: unbounded. */
  from: Date | null;
  until: Date | null;
  limit: number;
};

/**
 * One page, newest first, in O(page): each side (the wallet credited, the wallet debited) is its own
 * backward index scan on (account, posted_seq) stopped at `limit`, the two merged and cut again;
 * balance_after is the value the posting stored under the wallet's row lock (migration 0008), not a
 * sum over the wallet's history.
 */
export async function selectStatementPage(db: Executor, q: StatementQuery): Promise<StatementRow[]> {
  const range = sql`
    -- Always a bound on posted_seq (no cursor: below any seq), so the planner reads the index from the top.
    posted_seq < coalesce(${q.before_seq}::bigint, ${Number.MAX_SAFE_INTEGER}::bigint)
    and (${q.from}::timestamptz is null or resolved_at >= ${q.from}::timestamptz)
    and (${q.until}::timestamptz is null or resolved_at < ${q.until}::timestamptz)`;
  const result = await sql<StatementRow>`
    select * from (
      (select transfer_id, kind, amount_minor as signed_minor, currency, reference, reason, posted_seq,
              resolved_at as posted_at, wallet_balance_after_minor as balance_after_minor
       from ledger_transfers
       where credit_account_id = ${q.account_id} and posted_seq is not null and ${range}
       order by posted_seq desc limit ${q.limit})
      union all
      (select transfer_id, kind, -amount_minor, currency, reference, reason, posted_seq, resolved_at,
              wallet_balance_after_minor
       from ledger_transfers
       where debit_account_id = ${q.account_id} and posted_seq is not null and ${range}
       order by posted_seq desc limit ${q.limit})
    ) moves
    order by posted_seq desc
    limit ${q.limit}`.execute(db);
  return result.rows;
}

/** A page oldest first: rows posted after `after_seq` (null: from the first), as selectStatementPage does. */
export async function selectStatementPageOldestFirst(
  db: Executor,
  q: Omit<StatementQuery, "before_seq"> & { after_seq: number | null },
): Promise<StatementRow[]> {
  const range = sql`
    posted_seq > coalesce(${q.after_seq}::bigint, 0)
    and (${q.from}::timestamptz is null or resolved_at >= ${q.from}::timestamptz)
    and (${q.until}::timestamptz is null or resolved_at < ${q.until}::timestamptz)`;
  const result = await sql<StatementRow>`
    select * from (
      (select transfer_id, kind, amount_minor as signed_minor, currency, reference, reason, posted_seq,
              resolved_at as posted_at, wallet_balance_after_minor as balance_after_minor
       from ledger_transfers
       where credit_account_id = ${q.account_id} and posted_seq is not null and ${range}
       order by posted_seq limit ${q.limit})
      union all
      (select transfer_id, kind, -amount_minor, currency, reference, reason, posted_seq, resolved_at,
              wallet_balance_after_minor
       from ledger_transfers
       where debit_account_id = ${q.account_id} and posted_seq is not null and ${range}
       order by posted_seq limit ${q.limit})
    ) moves
    order by posted_seq
    limit ${q.limit}`.execute(db);
  return result.rows;
}

/** One posted transfer of the wallet as a statement row; null when it is not one. */
export async function selectStatementRow(
  db: Executor,
  account_id: string,
  transfer_id: string,
): Promise<StatementRow | null> {
  const result = await sql<StatementRow>`
    select transfer_id, kind,
           case when credit_account_id = ${account_id} then amount_minor else -amount_minor end as signed_minor,
           currency, reference, reason, posted_seq, resolved_at as posted_at,
           wallet_balance_after_minor as balance_after_minor
    from ledger_transfers
    where transfer_id = ${transfer_id} and posted_seq is not null
      and (credit_account_id = ${account_id} or debit_account_id = ${account_id})`.execute(db);
  return result.rows[0] ?? null;
}

/** How many rows the range holds, counting no further than `cap` (a bounded pre-check of an export). */
export async function countStatementRows(
  db: Executor,
  q: Omit<StatementQuery, "limit">,
  cap: number,
): Promise<number> {
  const result = await sql<{ n: number }>`
    select count(*)::int as n from (
      select 1 from ledger_transfers
      where (credit_account_id = ${q.account_id} or debit_account_id = ${q.account_id}) and posted_seq is not null
        and (${q.before_seq}::bigint is null or posted_seq < ${q.before_seq}::bigint)
        and (${q.from}::timestamptz is null or resolved_at >= ${q.from}::timestamptz)
        and (${q.until}::timestamptz is null or resolved_at < ${q.until}::timestamptz)
      limit ${cap}
    ) bounded`.execute(db);
  return result.rows[0]?.n ?? 0;
}

/**
 * The wallet's settled balance at an instant: the signed sum of its transfers posted before it. A
 * sum over the wallet's history, read once per monthly statement (migration 0006's indexes on
 * (account, posted_seq) serve it; a month's statement is read far less often than a page).
 */
export async function selectSettledBalanceBefore(
  db: Executor,
  account_id: string,
  before: Date,
): Promise<number> {
  const result = await sql<{ balance: string }>`
    select (coalesce((select sum(amount_minor) from ledger_transfers
                      where credit_account_id = ${account_id} and posted_seq is not null
                        and resolved_at < ${before}::timestamptz), 0)
          - coalesce((select sum(amount_minor) from ledger_transfers
                      where debit_account_id = ${account_id} and posted_seq is not null
                        and resolved_at < ${before}::timestamptz), 0))::text as balance`.execute(db);
  return Number(result.rows[0]!.balance);
}
