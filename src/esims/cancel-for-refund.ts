// What a refund needs of the eSIM side (src/refunds/): whether an order's bundle was ever used, and,
// in the refund's own transaction, the eSIM (a new eSIM's order) or the bundle (a top-up order)
// made `cancelled`. Cancelled is final for both (apply-signal-merge.ts): no later signal revives it.
import type { Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Pool } from "../db/pool.ts";
import type { Database } from "../db/schema.ts";
import { esimChanged } from "./esim-cache.ts";
import {
  cancelBundleRow,
  cancelEsimRow,
  lockEsimRow,
  type RefundableState,
  selectRefundableState,
} from "./refunds.sql.ts";

export type { RefundableState };

/** The eSIM's status and the status of the bundle `order_id` bought on it; null: no such eSIM. */
export async function refundableState(
  db: Executor,
  iccid: string,
  order_id: string,
): Promise<RefundableState | null> {
  return selectRefundableState(db, iccid, order_id);
}

/** The eSIM locked for its refund: its top-ups take turns with it (see lockEsimRow). */
export async function lockEsimForRefund(trx: Transaction<Database>, iccid: string): Promise<void> {
  await lockEsimRow(trx, iccid);
}

/** A new eSIM's order refunded: the eSIM and its original bundle are cancelled. */
export async function cancelEsimForRefund(
  trx: Transaction<Database>,
  iccid: string,
  order_id: string,
): Promise<void> {
  await cancelEsimRow(trx, iccid, order_id);
}

/** A top-up order refunded: its bundle only is cancelled; the eSIM keeps its other bundles. */
export async function cancelBundleForRefund(trx: Transaction<Database>, order_id: string): Promise<void> {
  await cancelBundleRow(trx, order_id, null);
}

/** After the refund committed: this process reads its own write at once (others hear the NOTIFY). */
export function esimCancelled(pool: Pool, iccid: string): void {
  esimChanged(pool, iccid);
}
