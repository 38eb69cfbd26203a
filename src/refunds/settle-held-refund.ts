// Operator use case: settle a refund the carrier's answer left held (an ES2+ CancelOrder whose 3.5
// cannot tell "cancelled by our lost call" from "downloaded": cancel-profile.ts). The refund stays
// pending, crediting nothing, until evidence settles it; this is the operator's evidence, given
// after checking with the SM-DP+'s operator: the carrier records the verdict, then the refund is
// driven at once as any retry would (cancelled -> credited once; installed -> refused
// esim_installed, the order stays completed). "Cancelled" is refused (conflict) when a download
// notification or our eSIM's state says the profile reached a device. Called by `npm run cli --
// refunds settle` and POST /admin/orders/{orderID}/refund/settle.
import type { CancelVerdict } from "../carrier/carrier.ts";
import { refundableState } from "../esims/cancel-for-refund.ts";
import { orderOf } from "../orders/refunded-order.ts";
import type { AppContext } from "../shared/context.ts";
import { holderOf } from "../shared/liveness.ts";
import { type Driven, driveRefund } from "./drive-refund.ts";
import { refundLeaseMs } from "./refund-order.ts";
import { takeIdleLease } from "./refunds.sql.ts";

export class HeldRefundNotSettled extends Error {
  readonly code: "not_found" | "conflict";
  constructor(code: "not_found" | "conflict", message: string) {
    super(message);
    this.code = code;
  }
}

const OPERATOR_REQUEST_ID = "operator-settle";

/** The refund's final answer (status and body, as the partner's retry will see it), or still held. */
export async function settleHeldRefund(
  ctx: AppContext,
  order_id: string,
  verdict: CancelVerdict,
): Promise<Driven> {
  const order = await orderOf(ctx.db, order_id);
  if (order === null || order.type !== "esim" || order.iccid === null || order.status !== "completed") {
    throw new HeldRefundNotSettled("not_found", `order ${order_id} has no refund held by the carrier`);
  }
  // Our own records outrank the verdict too: an installation notification is applied to the eSIM
  // before it is recorded among the SM-DP+'s notifications (receive-download-progress.ts), and a
  // pull may report the profile on a device. A profile past `released` is not cancelled.
  if (verdict === "cancelled") {
    const esim = await refundableState(ctx.db, order.iccid, order_id);
    if (esim !== null && esim.esim_status !== "released" && esim.esim_status !== "cancelled") {
      throw new HeldRefundNotSettled(
        "conflict",
        `the eSIM of order ${order_id} is ${esim.esim_status}: it is not cancelled (the refund's next attempt refuses it once the SM-DP+'s notification is recorded)`,
      );
    }
  }
  const request = { reference: order_id, iccid: order.iccid, supplier: order.supplier };
  const settled = await ctx.carrier.settleHeldCancel(request, verdict);
  if (settled === "not_held") {
    throw new HeldRefundNotSettled("not_found", `order ${order_id} has no refund held by the carrier`);
  }
  if (settled === "downloaded") {
    throw new HeldRefundNotSettled(
      "conflict",
      "the SM-DP+ reported this profile downloaded: it is not cancelled (the refund's next attempt refuses it)",
    );
  }
  const lease = await takeIdleLease(ctx.db, order_id, refundLeaseMs(ctx), holderOf(ctx.liveness));
  // A driver holds it right now (a partner's retry): it reads the verdict just recorded.
  if (lease === null) return null;
  return driveRefund(ctx, lease, OPERATOR_REQUEST_ID, false);
}
