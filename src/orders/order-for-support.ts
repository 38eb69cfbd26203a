// What support work (src/support/: resends, the email log, the timeline) reads of an order,
// through the orders domain: the partner's own order only, another partner's is not found.
import type { Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import type { OrderRow } from "./order.ts";
import { linesOf } from "./order-lines.sql.ts";
import { lockOrder, orderById } from "./orders.sql.ts";

export type SupportOrder = Pick<
  OrderRow,
  "order_id" | "partner_id" | "type" | "status" | "email" | "iccid" | "created_at" | "quantity"
>;

function pick(row: OrderRow | null): SupportOrder | null {
  if (row === null) return null;
  const { order_id, partner_id, type, status, email, iccid, created_at, quantity } = row;
  return { order_id, partner_id, type, status, email, iccid, created_at, quantity };
}

/** The partner's order as it stands, or null. */
export async function supportOrder(
  db: Executor,
  partner_id: string,
  order_id: string,
): Promise<SupportOrder | null> {
  return pick(await orderById(db, order_id, partner_id));
}

/** The partner's order, its row locked to the transaction's end (resends of one order take turns). */
export async function lockSupportOrder(
  trx: Transaction<Database>,
  partner_id: string,
  order_id: string,
): Promise<SupportOrder | null> {
  return pick(await lockOrder(trx, order_id, partner_id));
}

/**
 * A group order's travellers (migration 0047) whose eSIM was made, by position: each was sent (or
 * is to be sent) their own confirmation, and a resend goes to each of them. Empty for an order of
 * one and for a group whose submit named no traveller.
 */
export async function travellersOf(db: Executor, order: SupportOrder): Promise<Map<number, string>> {
  if (order.quantity <= 1) return new Map();
  const lines = await linesOf(db, order.order_id);
  return new Map(
    lines.flatMap((line) =>
      line.status === "completed" && line.email !== null ? [[line.position, line.email] as const] : [],
    ),
  );
}
