// Resent confirmation emails (POST /v1/orders/{orderID}/resend-email), sent by the same sweep and
// with the same promises as the first confirmation (send-confirmation-emails.ts):
//   - the request's transaction inserts the row (email-resends.sql.ts), so a 202 is never lost;
//   - the sweep claims due rows with SKIP LOCKED under a lease, so no two processes send one;
//   - the row is marked sent by one statement after the relay accepted it. The one window left is
//     the first confirmation's: accepted, then the process dies before the mark; the row comes due
//     again and goes out again with the same Message-ID (`<resend.EMAIL_ID@…>`), one message to a
//     mail client.
// A refused or failed attempt keeps its last_error (the log says "failed") and is tried again after
// exp(min(attempt, 10)) seconds, CONFIRMATION_EMAIL_MAX_ATTEMPTS attempts in all; after the last
// one "failed" is final. A resend whose order was refunded meanwhile is given up at once (final
// "failed"): its eSIM is cancelled, there is nothing to install.
import type pg from "pg";
import { GroupCommit, recordingRetries } from "../shared/group-commit.ts";
import {
  type ClaimedResend,
  claimDueResends,
  type ResendSent,
  recordResendFailure,
  recordResendsSent,
} from "./email-resends.sql.ts";
import {
  brandedSender,
  CONFIRMATION_EMAIL_MAX_ATTEMPTS,
  claimDueConfirmationEmails,
  DEFAULT_SENDER,
  EMAIL_LEASE_MS,
  type EmailJob,
  type OrderForEmail,
  renderOrderEmail,
  type SendConfirmationEmailsDeps,
  sendersOf,
  type TravellerSender,
} from "./send-confirmation-emails.ts";

/** A resend's Message-ID key: stable for the resend, so a retried send is recognisably one message. */
export function resendMessageKey(email_id: string): string {
  return `resend.${email_id}`;
}

/** Marks accepted resends sent in batches, retrying a failed write as DeliveryRecorder does. */
export class ResendRecorder {
  readonly #batches: GroupCommit<ResendSent>;

  constructor(pool: pg.Pool, retry_within_ms: number) {
    this.#batches = new GroupCommit(
      (sent) => recordResendsSent(pool, sent),
      recordingRetries(retry_within_ms),
    );
  }

  record(sent: ResendSent): Promise<void> {
    return this.#batches.add(sent);
  }
}

export type SendResentEmailsDeps = SendConfirmationEmailsDeps & { resend_recorder?: ResendRecorder };

/** Claims at most `limit` due resends: one job each, as for confirmations, that sends nothing until run. */
export async function claimDueResentEmails(deps: SendResentEmailsDeps, limit: number): Promise<EmailJob[]> {
  const lease_ms = deps.lease_ms ?? EMAIL_LEASE_MS;
  const claimed = await claimDueResends(deps.pool, {
    limit,
    lease_ms,
    max_attempts: CONFIRMATION_EMAIL_MAX_ATTEMPTS,
  });
  if (claimed.length === 0) return [];
  const recorder = deps.resend_recorder ?? new ResendRecorder(deps.pool, lease_ms / 2);
  return claimed.map((row) => ({
    order_id: row.order_id,
    position: 0,
    email_id: row.email_id,
    lease_token: row.lease_token,
    run: async (sent = () => undefined) => {
      try {
        // Resends are few: each reads its order when it starts (not with the claim), so a refund
        // made while it waited in the sweep's queue is seen.
        const order = (await deps.findOrders([row.order_id])).get(row.order_id) ?? null;
        const sender = order ? (await sendersOf(deps, [order.partner_id])).get(order.partner_id) : undefined;
        return await processResend(deps, recorder, row, order, sender ?? DEFAULT_SENDER, sent);
      } finally {
        sent();
      }
    },
  }));
}

/**
 * One claim of the email sweep, at most `wanted` jobs: resends first, first confirmations in the
 * room they leave. A resend is asked for by a person waiting on it and there are few (5 per order,
 * a per-partner cap to other addresses), while confirmations pile up by the thousand behind a relay
 * outage: claimed the other way round, that backlog would hold a resend back for as long as it lasts.
 */
export async function claimDueEmailJobs(deps: SendResentEmailsDeps, wanted: number): Promise<EmailJob[]> {
  const resent = await claimDueResentEmails(deps, wanted);
  const confirmations =
    resent.length < wanted ? await claimDueConfirmationEmails(deps, wanted - resent.length) : [];
  return [...resent, ...confirmations];
}

async function processResend(
  deps: SendResentEmailsDeps,
  recorder: ResendRecorder,
  row: ClaimedResend,
  order: OrderForEmail | null,
  sender: TravellerSender,
  sent: () => void,
): Promise<void> {
  const fail = (error: string, retry_after_s: number | null) =>
    recordResendFailure(deps.pool, {
      email_id: row.email_id,
      lease_token: row.lease_token,
      error,
      retry_after_s,
      max_attempts: CONFIRMATION_EMAIL_MAX_ATTEMPTS,
    });
  if (order?.status === "refunded") {
    deps.log.info(
      { order_id: row.order_id, email_id: row.email_id },
      "resent email given up: the order was refunded",
    );
    return fail("not sent: the order was refunded, its eSIM is cancelled", null);
  }
  try {
    // The renderer attaches the brand's logo inline with the QR code. A group order's resend
    // carries what group-emails.ts picks for its recipient.
    const { email } = await renderOrderEmail(row.order_id, order, sender.brand, { recipient: row.recipient });
    const { message_id } = await deps.mailer.send({
      ...email,
      // Sent whatever confirmation_email says: a resend is asked for by the partner.
      ...brandedSender(sender.brand),
      key: resendMessageKey(row.email_id),
      to: row.recipient,
    });
    sent();
    await recorder.record({ email_id: row.email_id, message_id });
    deps.log.info({ order_id: row.order_id, email_id: row.email_id }, "resent email sent");
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    // The ids say enough: the recipient's address is never logged.
    deps.log.warn(
      { order_id: row.order_id, email_id: row.email_id, attempts: row.attempts, error: message },
      "resent email failed",
    );
    await fail(message, Math.exp(Math.min(row.attempts, 10)));
  }
}
