// The Order object of the contract, rendered from the database. Deterministic: the same order
// renders to the same bytes, which is what lets a retried submit return the identical body.
import { type Static, Type } from "typebox";
import { installKit } from "../shared/install-kit.ts";
import { Money, money } from "../shared/schemas.ts";
import { rfc3339 } from "../shared/time.ts";
import type { OrderRow, PurchaseEntry, PurchaseRow } from "./order.ts";

export const CompletedPurchase = Type.Object(
  {
    package_id: Type.String(),
    status: Type.Literal("completed", { description: "This eSIM was provisioned and charged." }),
    iccid: Type.String({ pattern: "^89[0-9]{17,18}$" }),
    qr_code: Type.String({
      description: "The LPA string `LPA:1$<smdp_address>$<activation_code>`; encode it as a QR code.",
    }),
    activation_code: Type.String({ description: "The matching ID, for manual entry." }),
    smdp_address: Type.String(),
    ios_install_url: Type.String({ description: "Opens the iOS eSIM installer with this eSIM (iOS 17.4+)." }),
    android_install_url: Type.String({ description: "Opens the Android eSIM installer with this eSIM." }),
    start_date: Type.Union([Type.String({ format: "date" }), Type.Null()]),
  },
  { additionalProperties: false },
);

export const FailedPurchase = Type.Object(
  {
    package_id: Type.String(),
    status: Type.Literal("failed", {
      description: "The carrier refused this eSIM of a group order for good: it was not charged.",
    }),
    start_date: Type.Union([Type.String({ format: "date" }), Type.Null()]),
  },
  { additionalProperties: false },
);

export const Purchase = Type.Union([CompletedPurchase, FailedPurchase], {
  description:
    "One eSIM of the order, by `status`. Only a group order (`quantity` > 1) can have `failed` entries: " +
    "`purchases[i]` is the submit's `travellers[i]`'s.",
});

export const Order = Type.Object(
  {
    orderID: Type.String(),
    type: Type.Union([Type.Literal("esim"), Type.Literal("topup")]),
    status: Type.Union([
      Type.Literal("completed"),
      Type.Literal("pending"),
      Type.Literal("failed"),
      Type.Literal("refunded"),
    ]),
    client_reference: Type.Union([Type.String(), Type.Null()]),
    language: Type.String({
      description:
        "The language of the traveller's confirmation email and install page: the submit's `language` if " +
        "supported, else its base language (`pt-BR` -> `pt`), else `en`. A top-up sends no email: `en`.",
    }),
    quantity: Type.Integer({
      minimum: 1,
      maximum: 50,
      description: "eSIMs ordered (the cart's `quantity`); 1 for a top-up. More than 1: a group order.",
    }),
    total: Type.Object(Money.properties, {
      additionalProperties: false,
      description:
        "What the order costs: charged once completed. A group order's is what was charged, its completed " +
        "eSIMs' price: eSIMs the carrier refused are not charged.",
    }),
    created_at: Type.String({ format: "date-time" }),
    purchases: Type.Array(Purchase, {
      maxItems: 50,
      description:
        "Empty until the order is completed; then one entry per eSIM ordered, in order. A refunded order keeps what " +
        "it had bought.",
    }),
    esim_iccid: Type.Union([Type.String({ pattern: "^89[0-9]{17,18}$" }), Type.Null()], {
      description:
        "The eSIM this order bought or topped up, once the order is completed (see GET /v1/esims/{iccid}); " +
        "null before, and for a failed order. A refunded order keeps it. Of a group order: its first eSIM's.",
    }),
    refunded_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "When the order was refunded (status `refunded`); null otherwise.",
    }),
    refund_requested_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description:
        "When a refund of this order was asked for (POST /v1/orders/{orderID}/refund); null when none is, or the " +
        "carrier refused it. Set while `status` is still `completed`: the refund is under way (it may wait for the " +
        "carrier's answer, or for a top-up of the eSIM still pending at the carrier) and the carrier may already " +
        "have cancelled the eSIM's profile, so do not hand the eSIM out. Kept once `refunded`. A replayed submit " +
        "or top-up answers as the order was when it completed, with null.",
    }),
  },
  { additionalProperties: false },
);

export type OrderBody = Static<typeof Order>;

/** A purchases row (an eSIM made) or an order line: rows without `status` are eSIMs made. */

function renderPurchase(p: PurchaseEntry): Static<typeof Purchase> {
  if ("status" in p && p.status === "failed") {
    return { package_id: p.package_id, status: "failed", start_date: p.start_date };
  }
  const made = p as PurchaseRow;
  return {
    package_id: made.package_id,
    status: "completed",
    iccid: made.iccid,
    // The install kit the Esim and the confirmation email carry too (shared/install-kit.ts).
    ...installKit(made.smdp_address, made.activation_code),
    start_date: made.start_date,
  };
}

export function renderOrder(order: OrderRow, purchases: readonly PurchaseEntry[]): OrderBody {
  const delivered = order.status === "completed" || order.status === "refunded";
  return {
    orderID: order.order_id,
    type: order.type,
    status: order.status,
    client_reference: order.client_reference,
    language: order.language,
    quantity: order.quantity,
    total: money(order.total_minor, order.currency),
    created_at: rfc3339(order.created_at),
    purchases: delivered ? purchases.map(renderPurchase) : [],
    // From the order row alone, like every field here: a replayed submit stays byte-identical.
    esim_iccid: delivered ? order.iccid : null,
    refunded_at: order.refunded_at === null ? null : rfc3339(order.refunded_at),
    refund_requested_at: order.refund_requested_at === null ? null : rfc3339(order.refund_requested_at),
  };
}
