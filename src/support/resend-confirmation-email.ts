// Partner use case: resend an order's confirmation email (POST /v1/orders/{orderID}/resend-email,
// and the partner console's order page). One transaction: the order's row locked (concurrent
// resends of one order take turns, so the limit of 5 per rolling 24 hours is exact; a resend to
// another address also takes the partner's lock for its cap, queue-resend.ts), the rules checked, the resend queued (notifications/queue-resend.ts) and audited. The email sweep sends it
// after the commit (notifications/send-resent-emails.ts): a 202 is a promise kept by the database.

import { recordAudit } from "../audit/record-audit.ts";
import { queueResend } from "../notifications/queue-resend.ts";
import { lockSupportOrder, type SupportOrder, travellersOf } from "../orders/order-for-support.ts";
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
): Promise<{ email_id: string; email_ids: string[]; replayed: boolean }> {
  return ctx.db.transaction().execute(async (trx) => {
    const order = await lockSupportOrder(trx, input.partner_id, input.order_id);
    if (order === null) throw new ApiError("order_not_found", "No such order for this partner.");
    checkHasEmail(order);
    const travellers = distinctAddresses([...(await travellersOf(trx, order)).values()]);
    // Without an address, a group order's travellers each get their own email again, as at its
    // completion; with one (or without travellers), one email (group-emails.ts says what it carries).
    const [recipient = order.email, ...also_to] = input.email === null ? travellers : [input.email];
    // The order's own addresses (its end user's, its travellers') are not the partner's cap's.
    const to_other_address = ![order.email, ...travellers].some(
      (address) => address.toLowerCase() === recipient.toLowerCase(),
    );
    const queued = await queueResend(
      trx,
      {
        order_id: order.order_id,
        partner_id: input.partner_id,
        recipient,
        also_to,
        to_other_address,
        idempotency_key: input.idempotency_key,
      },
      { to_other_addresses_per_partner_per_day: ctx.config.resends_to_other_addresses_per_partner_per_day },
    );
    if (queued.replayed) return queued;
    // The address is the partner's own data about its traveller, shown to its team anyway.
    for (const [i, to] of [recipient, ...also_to].entries()) {
      await recordAudit(trx, {
        actor: input.actor,
        action: "order.email_resent",
        partner_id: input.partner_id,
        target: { type: "order", id: order.order_id },
        details: { email_id: queued.email_ids[i]!, to, to_order_address: !to_other_address },
      });
    }
    return queued;
  });
}

/** Each address once, case aside, in their order (two travellers of one address: one email). */
function distinctAddresses(addresses: readonly string[]): string[] {
  const seen = new Set<string>();
  return addresses.filter((address) => {
    const key = address.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
