// Whether an order can be refunded now, and why not, before anyone asks (the partner console shows
// it beside the refund button). The same rules the refund checks under the order's lock
// (refund-rules.ts), read without one: the refund itself checks again, and the carrier has the last
// word.
import { refundableState } from "../esims/cancel-for-refund.ts";
import type { SupportOrder } from "../orders/order-for-support.ts";
import type { AppContext } from "../shared/context.ts";
import { type RefusalReason, refusalDetail, refusalReason } from "./refund-rules.ts";

const DAY_MS = 86_400_000;

export type RefundPreview = {
  /** Null: it may be refunded now. */
  reason: RefusalReason | null;
  detail: string | null;
  window_days: number;
  /** The last moment of the refund window. */
  window_ends_at: Date;
};

export async function refundPreview(ctx: AppContext, order: SupportOrder): Promise<RefundPreview> {
  const window_days = ctx.config.refund_window_days;
  const esim = order.iccid === null ? null : await refundableState(ctx.db, order.iccid, order.order_id);
  const reason = refusalReason(order, esim, window_days, new Date());
  return {
    reason,
    detail: reason === null ? null : refusalDetail(reason),
    window_days,
    window_ends_at: new Date(new Date(order.created_at).getTime() + window_days * DAY_MS),
  };
}
