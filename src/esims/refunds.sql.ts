// SQL of what a refund reads and changes on the eSIM side: the state of an order's eSIM and bundle,
// and their cancellation. Each write notifies `esim_changed` (delivered at commit) so every
// process drops its cached body of the eSIM (esim-cache.ts).
import { sql, type Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { BundleStatus, Database, EsimStatus } from "../db/schema.ts";

export type RefundableState = { esim_status: EsimStatus; bundle_status: BundleStatus | null };

export async function selectRefundableState(
  db: Executor,
  iccid: string,
  order_id: string,
): Promise<RefundableState | null> {
  const result = await sql<RefundableState>`
    select e.status as esim_status,
           (select b.status from esim_bundles b where b.order_id = ${order_id} and b.iccid = e.iccid)
             as bundle_status
    from esims e where e.iccid = ${iccid}`.execute(db);
  return result.rows[0] ?? null;
}

/**
 * The eSIM row, locked as a top-up's completion locks it (drive-order.ts: pullSoonLater) when the
 * eSIM is not due for a pull yet. A completion that finds it due already takes no lock on it, so the
 * refund asks whether a top-up is pending before it reads the completed ones (orders/
 * refunded-order.ts: lockTopUpsForRefund).
 */
export async function lockEsimRow(trx: Transaction<Database>, iccid: string): Promise<void> {
  await sql`select iccid from esims where iccid = ${iccid} for no key update`.execute(trx);
}

/** The eSIM, final (`cancelled`), and the bundle its own order bought. */
export async function cancelEsimRow(
  trx: Transaction<Database>,
  iccid: string,
  order_id: string,
): Promise<void> {
  await sql`
    update esims set status = 'cancelled' where iccid = ${iccid}
    returning pg_notify('esim_changed', iccid)`.execute(trx);
  await cancelBundleRow(trx, order_id, iccid);
}

/** The bundle `order_id` bought: of the eSIM `iccid` (an order may buy several), or its only one (a top-up). */
export async function cancelBundleRow(
  trx: Transaction<Database>,
  order_id: string,
  iccid: string | null,
): Promise<void> {
  await sql`
    update esim_bundles set status = 'cancelled'
    where order_id = ${order_id} and (${iccid}::text is null or iccid = ${iccid})
    returning pg_notify('esim_changed', iccid)`.execute(trx);
}
