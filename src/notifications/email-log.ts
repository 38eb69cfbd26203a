// The email log of one order (GET /v1/orders/{orderID}/emails and the consoles' order pages): the
// first confirmations (email_outbox / email_deliveries; one per traveller of a group order) and every resend (email_resends), each with
// its delivery status as the SMTP server's answer left it; a failure told as a class and the SMTP
// reply code, never the raw text, which may name the operator's relay (describe-email-error.ts).
import type { Executor } from "../db/executor.ts";
import { rfc3339 } from "../shared/time.ts";
import { describeEmailError } from "./describe-email-error.ts";
import { confirmationStates, type ResendRow, resendsOf } from "./email-resends.sql.ts";
import { confirmationKey } from "./send-confirmation-emails.ts";

/** At most this many resends in a log: 5 a day are allowed, so 200 cover more than a month of them. */
export const MAX_LOGGED_RESENDS = 200;

export type EmailStatus = "queued" | "sent" | "failed";

export type EmailLogEntry = {
  /** `confirmation.{order_id}` (`.{position}` for a group traveller's past the first) for a first confirmation, `eml_…` for a resend. */
  email_id: string;
  to: string;
  kind: "confirmation" | "resend";
  status: EmailStatus;
  sent_at: string | null;
  /** The last failure as a partner may read it (describe-email-error.ts); the raw text stays stored. */
  last_error: string | null;
};

/**
 * A first confirmation's id: its Message-ID key (send-confirmation-emails.ts confirmationKey),
 * `confirmation.{order_id}` for an order of one and a group's order email, with `.{position}` for a
 * group traveller's own past the first.
 */
export function confirmationEmailId(order_id: string, position = 0): string {
  return confirmationKey(order_id, position);
}

/** "failed" is the last attempt's outcome: the row is retried until it used its attempts. */
function statusOf(sent: boolean, last_error: string | null): EmailStatus {
  if (sent) return "sent";
  return last_error === null ? "queued" : "failed";
}

function resendEntry(row: ResendRow): EmailLogEntry {
  return {
    email_id: row.email_id,
    to: row.recipient,
    kind: "resend",
    status: statusOf(row.sent_at !== null, row.last_error),
    sent_at: row.sent_at === null ? null : rfc3339(row.sent_at),
    last_error: row.sent_at === null ? describeEmailError(row.last_error) : null,
  };
}

/**
 * The order's emails: its first confirmations by position, then its resends oldest first. A first
 * confirmation is listed while it waits in the outbox and once delivered; an order that never had
 * one (a top-up, a partner sending its own, an order refunded before it went out) lists only its
 * resends. A group order with travellers lists each traveller's own (`travellers`: the address of
 * each named line by position, where a queued one goes; the order's address otherwise).
 */
export async function emailLog(
  db: Executor,
  order: { order_id: string; email: string },
  travellers: ReadonlyMap<number, string> = new Map(),
): Promise<EmailLogEntry[]> {
  const [states, resends] = await Promise.all([
    confirmationStates(db, order.order_id),
    resendsOf(db, order.order_id, MAX_LOGGED_RESENDS),
  ]);
  const first = states.flatMap((state): EmailLogEntry[] => {
    const email_id = confirmationEmailId(order.order_id, state.position);
    if (state.delivered) {
      return [
        {
          email_id,
          to: state.delivered.recipient,
          kind: "confirmation",
          status: "sent",
          sent_at: rfc3339(state.delivered.delivered_at),
          last_error: null,
        },
      ];
    }
    if (!state.outbox) return [];
    return [
      {
        email_id,
        to: travellers.get(state.position) ?? order.email,
        kind: "confirmation",
        status: statusOf(false, state.outbox.last_error),
        sent_at: null,
        last_error: describeEmailError(state.outbox.last_error),
      },
    ];
  });
  return [...first, ...resends.map(resendEntry)];
}
