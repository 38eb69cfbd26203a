// SQL of wallet statements (migration 0006): a wallet's posted transfers in posted_seq order, each
// with the balance it left, derived from the transfers. Private to src/ledger/.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

export type StatementRow = {
  transfer_id: string;
  kind: "wallet_credit" | "purchase" | "refund";
  /** Positive into the wallet, negative out of it. */
  signed_minor: number;
  balance_after_minor: number;
  currency: string;
  reference: string;
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
 * One page, newest first. posted_at (clock_timestamp() under the wallet's row lock) rises with
 * posted_seq within a wallet, so a date range is a contiguous run of the wallet's order and
 * balance_after is the sum up to the page's newest row minus the newer rows of the page.
 * `not materialized`: each side is an index scan on (account, posted_seq), merged, stopped at limit.
 */
export async function selectStatementPage(db: Executor, q: StatementQuery): Promise<StatementRow[]> {
  const result = await sql<StatementRow>`
    with moves as not materialized (
      select transfer_id, kind, amount_minor as signed_minor, currency, reference, posted_seq, resolved_at as posted_at
      from ledger_transfers where credit_account_id = ${q.account_id} and posted_seq is not null
      union all
      select transfer_id, kind, -amount_minor, currency, reference, posted_seq, resolved_at
      from ledger_transfers where debit_account_id = ${q.account_id} and posted_seq is not null
    ), page as (
      select * from moves
      where (${q.before_seq}::bigint is null or posted_seq < ${q.before_seq}::bigint)
        and (${q.from}::timestamptz is null or posted_at >= ${q.from}::timestamptz)
        and (${q.until}::timestamptz is null or posted_at < ${q.until}::timestamptz)
      order by posted_seq desc
      limit ${q.limit}
    ), upto as (
      select coalesce(sum(signed_minor), 0)::bigint as total from moves
      where posted_seq <= (select max(posted_seq) from page)
    )
    select p.transfer_id, p.kind, p.signed_minor, p.currency, p.reference, p.posted_seq, p.posted_at,
           (u.total - coalesce(sum(p.signed_minor) over (order by p.posted_seq desc
                                 rows between unbounded preceding and 1 preceding), 0))::bigint
             as balance_after_minor
    from page p cross join upto u
    order by p.posted_seq desc`.execute(db);
  return result.rows;
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
