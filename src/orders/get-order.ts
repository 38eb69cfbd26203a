// Partner use case: one of the partner's orders as the API renders it, with what the console shows
// beside it (the end user it was bought for, and why it failed).
import type { Executor } from "../db/executor.ts";
import type { EndUser } from "./end-user.ts";
import { orderById, type PartnerOrderCounts, partnerOrderCounts, purchasesOf } from "./orders.sql.ts";
import { type OrderBody, renderOrder } from "./render-order.ts";

export type { PartnerOrderCounts };

export type OrderDetail = {
  order: OrderBody;
  end_user: EndUser;
  failure: { code: string | null; detail: string | null };
};

export async function getPartnerOrder(
  db: Executor,
  partner_id: string,
  order_id: string,
): Promise<OrderDetail | null> {
  const row = await orderById(db, order_id, partner_id);
  if (!row) return null;
  return {
    order: renderOrder(row, await purchasesOf(db, [row.order_id])),
    end_user: { email: row.email, phone: row.phone, first_name: row.first_name, last_name: row.last_name },
    failure: { code: row.failure_code, detail: row.failure_detail },
  };
}

/** Today's orders (UTC) by outcome and the pending ones: the console's overview. */
export async function countPartnerOrders(db: Executor, partner_id: string): Promise<PartnerOrderCounts> {
  return partnerOrderCounts(db, partner_id);
}
