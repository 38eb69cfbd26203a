// What the confirmation email (notifications/send-confirmation-email.ts) reads of an order: given
// to the email job by the server, since notifications sit below orders and never read their tables.
import type { Executor } from "../db/executor.ts";
import type { OrderForEmail } from "../notifications/send-confirmation-email.ts";
import { orderWithFirstPurchase } from "./orders.sql.ts";

/** The order, its first purchase and that purchase's package name; null for an unknown order. */
export async function orderForEmail(db: Executor, order_id: string): Promise<OrderForEmail | null> {
  return orderWithFirstPurchase(db, order_id);
}
