// What the confirmation email (notifications/send-confirmation-email.ts) reads of an order: given
// to the email job by the server, since notifications sit below orders and never read their tables.
import { packageName } from "../catalog/find-packages.ts";
import type { Executor } from "../db/executor.ts";
import type { OrderForEmail } from "../notifications/send-confirmation-email.ts";
import { orderWithFirstPurchase } from "./orders.sql.ts";

/** The order, its first purchase and that purchase's package name; null for an unknown order. */
export async function orderForEmail(db: Executor, order_id: string): Promise<OrderForEmail | null> {
  const order = await orderWithFirstPurchase(db, order_id);
  if (order === null) return null;
  const { package_id, ...rest } = order;
  return { ...rest, package_name: package_id === null ? null : await packageName(db, package_id) };
}
