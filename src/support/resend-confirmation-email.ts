// Partner use case: resend an order's confirmation email (POST /v1/orders/{orderID}/resend-email,
// and the partner console's order page). One transaction: the order's row locked (concurrent
// resends of one order take turns, so the limit of 5 per rolling 24 hours is exact; a resend to
// another address also takes the partner's lock for its cap, queue-resend.ts), the rules checked, the resend queued (notifications/queue-resend.ts) and audited. The email sweep sends it
// after the commit (notifications/send-resent-emails.ts): a 202 is a promise kept by the database.

import { recordAudit } from "../audit/record-audit.ts";
import { queueResend } from "../notifications/queue-resend.ts";
import { lockSupportOrder, type SupportOrder } from "../orders/order-for-support.ts";
import type { Actor } from "../shared/actor.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";

export type ResendInput = {
  partner_id: string;
  order_id: string;
  /** Another address than the order's (already validated and trimmed), or null for the order's. */
  email: string | null;
  idempotency_key: string | null;
  actor: Actor;
};

/**
 * Only a completed new-eSIM order has a confirmation email: a top-up sends none, and a pending,
 * failed or refunded order has no eSIM to install (refunded: cancelled). All answer 409.
 */
function checkHasEmail(order: SupportOrder): void {
  if (order.type !== "esim") {
    throw new ApiError(
      "no_email_for_order",
      "A top-up order has no confirmation email: its eSIM's order has.",
    );
  }
  if (order.status !== "completed") {
    throw new ApiError(
      "no_email_for_order",
      `This order is ${order.status}: only a completed new-eSIM order has a confirmation email (an eSIM to install).`,
    );
  }
}

export async function resendConfirmationEmail(
  ctx: AppContext,
  input: ResendInput,
): Promise<{ email_id: string; replayed: boolean }> {
  return ctx.db.transaction().execute(async (trx) => {
    const order = await lockSupportOrder(trx, input.partner_id, input.order_id);
    if (order === null) throw new ApiError("order_not_found", "No such order for this partner.");
    checkHasEmail(order);
    const recipient = input.email ?? order.email;
    const to_other_address = recipient.toLowerCase() !== order.email.toLowerCase();
    const queued = await queueResend(
      trx,
      {
        order_id: order.order_id,
        partner_id: input.partner_id,
        recipient,
        to_other_address,
        idempotency_key: input.idempotency_key,
      },
      { to_other_addresses_per_partner_per_day: ctx.config.resends_to_other_addresses_per_partner_per_day },
    );
    if (queued.replayed) return queued;
    // The address is the partner's own data about its traveller, shown to its team anyway.
    await recordAudit(trx, {
      actor: input.actor,
      action: "order.email_resent",
      partner_id: input.partner_id,
      target: { type: "order", id: order.order_id },
      details: { email_id: queued.email_id, to: recipient, to_order_address: !to_other_address },
    });
    return queued;
  });
}
