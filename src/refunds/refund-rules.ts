// Which completed orders may be refunded (contract "Order additions"): one whose bundle was never
// used (a new eSIM still `released`, a top-up's bundle still `queued`), within REFUND_WINDOW_DAYS
// of the purchase. Pure: the caller reads the order and the eSIM's state. Our view of the eSIM may
// lag the carrier's; the carrier is asked next and has the last word (it refuses the same way).
import type { RefundableState } from "../esims/cancel-for-refund.ts";
import type { OrderRow } from "../orders/order.ts";
import { ApiError } from "../shared/errors.ts";

export const REFUSAL_REASONS = [
  "not_completed",
  "esim_installed",
  "bundle_used",
  "window_passed",
  "topups_not_refunded",
  "group_order",
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

const DAY_MS = 86_400_000;

/** Why the order may not be refunded, checked in the order of REFUSAL_REASONS; null: it may. */
export function refusalReason(
  order: Pick<OrderRow, "status" | "type" | "created_at" | "quantity">,
  esim: RefundableState | null,
  window_days: number,
  now: Date,
): RefusalReason | null {
  if (order.status !== "completed" || esim === null) return "not_completed";
  if (order.quantity > 1) return "group_order";
  if (order.type === "esim") {
    // Cancelled: our own earlier cancel (its refund did not commit yet); the carrier answers ok.
    if (esim.esim_status === "installed" || esim.esim_status === "deleted") return "esim_installed";
    if (esim.esim_status !== "released" && esim.esim_status !== "cancelled") return "bundle_used";
  }
  if (esim.bundle_status !== "queued" && esim.bundle_status !== "cancelled") return "bundle_used";
  if (now.getTime() - new Date(order.created_at).getTime() > window_days * DAY_MS) return "window_passed";
  return null;
}

/** The carrier's refusal in the contract's words: its own reason when it is one of ours. */
export function carrierRefusalReason(order: Pick<OrderRow, "type">, carrier_reason: string): RefusalReason {
  if (carrier_reason === "esim_installed" || carrier_reason === "bundle_used") return carrier_reason;
  return order.type === "esim" ? "esim_installed" : "bundle_used";
}

const DETAILS: Record<RefusalReason, string> = {
  not_completed: "Only a completed order can be refunded.",
  esim_installed: "The eSIM was installed on a device.",
  bundle_used: "The order's bundle has been used.",
  window_passed: "The refund window has passed.",
  topups_not_refunded:
    "The eSIM has top-ups that are not refunded: its network cancels the eSIM's own bundle only, so refund each top-up first (where the network allows it).",
  group_order:
    "A group order (several eSIMs) is not refunded through the API: the operator credits what a traveller did not use.",
};

/**
 * A supplier's eSIM with a top-up not refunded (pending or completed) is not refunded: eSIM Go's
 * cancel revokes the eSIM order's own bundle only, and Airalo approves a refund by the eSIM order
 * alone, so crediting the top-ups with it would pay for bundles the traveller keeps. Our carrier's
 * cancel takes every bundle of the profile with it (finish-refund.ts credits them all).
 */
export function supplierTopUpsReason(
  order: Pick<OrderRow, "type" | "supplier">,
  has_unrefunded_topups: boolean,
): RefusalReason | null {
  if (order.type !== "esim" || order.supplier === "carrier") return null;
  return has_unrefunded_topups ? "topups_not_refunded" : null;
}

/** The reason in a sentence, for a person (the console's refund rules). */
export function refusalDetail(reason: RefusalReason): string {
  return DETAILS[reason];
}

export function refundNotAllowed(order_id: string, reason: RefusalReason, window_days: number): ApiError {
  const window =
    reason === "window_passed" ? ` Refunds are possible for ${window_days} days after purchase.` : "";
  return new ApiError(
    "refund_not_allowed",
    `Order ${order_id} cannot be refunded: ${DETAILS[reason]}${window}`,
    {
      reason,
      order_id,
    },
  );
}
