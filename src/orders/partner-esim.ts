// The eSIMs this service provisioned, as other domains may read them (top-ups, by ICCID).
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import { type EsimRow, esimProfile } from "./esims.sql.ts";
import { lockOrder } from "./orders.sql.ts";

export type { EsimRow };

/** The partner's eSIM, or null: another partner's eSIM is indistinguishable from an unknown one. */
export async function partnerEsim(db: Executor, partner_id: string, iccid: string): Promise<EsimRow | null> {
  const esim = await esimProfile(db, iccid);
  return esim && esim.partner_id === partner_id ? esim : null;
}

/**
 * Whether a refund of the eSIM's own order is under way, read under that order's row lock: a refund
 * writes its intent under the same lock (refund-order.ts), so a top-up created meanwhile and the
 * refund's start take turns, and neither misses the other. The lock goes before the wallet's, as
 * a refund's does (docs/architecture.md, "Lock order").
 */
export async function lockEsimOrderRefundUnderWay(
  trx: Transaction<Database>,
  esim: EsimRow,
): Promise<boolean> {
  const order = await lockOrder(trx, esim.order_id);
  assert.ok(order, "an eSIM's order exists");
  return order.refund_requested_at !== null;
}
