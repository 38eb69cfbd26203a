// SQL of the carrier checks owed on orders failed without the carrier's word (migration 0036).
import { sql, type Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database, PackageSupplier } from "../db/schema.ts";

export type CarrierCheckWord = "nothing_made" | "cancelled" | "refused" | "unavailable";

/** Owes the order a look-up at the carrier `after_s` from now, in the transaction that failed it. */
export async function oweCarrierCheck(
  trx: Transaction<Database>,
  order_id: string,
  after_s: number,
): Promise<void> {
  await sql`
    update orders set carrier_check = 'due', carrier_check_attempts = 0,
                      carrier_check_after = now() + make_interval(secs => ${after_s})
    where order_id = ${order_id} and status = 'failed'`.execute(trx);
}

/** The follow-up's final word: nothing more is owed. */
export async function settleCarrierCheck(
  db: Executor,
  order_id: string,
  word: CarrierCheckWord,
): Promise<void> {
  await sql`
    update orders set carrier_check = ${word}, carrier_check_after = null
    where order_id = ${order_id}`.execute(db);
}

export type DueCheck = {
  order_id: string;
  type: "esim" | "topup";
  iccid: string | null;
  carrier_check_attempts: number;
  /** Where the order was sent, so where it is looked up again. */
  supplier: PackageSupplier;
};

/**
 * Claims up to `limit` due checks by moving each one's next look `retry_s` ahead (its lease: another
 * process skips it meanwhile, and one that dies leaves it due again then), counting the attempt.
 */
export async function claimDueChecks(db: Executor, limit: number, retry_s: number): Promise<DueCheck[]> {
  const result = await sql<DueCheck>`
    update orders set carrier_check_after = now() + make_interval(secs => ${retry_s}),
                      carrier_check_attempts = carrier_check_attempts + 1
    where order_id in (
      select order_id from orders
      where carrier_check_after <= now()
      order by carrier_check_after
      limit ${limit}
      for update skip locked)
    returning order_id, type, iccid, carrier_check_attempts, supplier`.execute(db);
  return result.rows;
}

/**
 * Failed orders the carrier may still hold something for: owed a look, or left `refused` /
 * `unavailable` for the operator (a partial index: cheap at scrape time).
 */
export async function unreconciledCount(db: Executor): Promise<number> {
  const result = await sql<{ count: number }>`
    select count(*)::int as count from orders
    where carrier_check in ('due', 'refused', 'unavailable')`.execute(db);
  return result.rows[0]?.count ?? 0;
}
