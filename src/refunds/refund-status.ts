// The operator's view of one order's refund (`orders show`): under way or done, how many carrier
// attempts it took, the last unknown answer.
import type { Executor } from "../db/executor.ts";
import { type RefundStatus, selectRefundStatus } from "./refunds.sql.ts";

export type { RefundStatus };

export async function refundStatus(db: Executor, order_id: string): Promise<RefundStatus | null> {
  return selectRefundStatus(db, order_id);
}
