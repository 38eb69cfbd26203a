// Queues a resend of an order's confirmation email, in the caller's transaction and under its lock
// of the order's row (the support use case holds it: support/resend-confirmation-email.ts), so
// concurrent resends of one order take turns and the limit below is exact.
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { ApiError } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import {
  insertResend,
  lockRecentResendsToOtherAddresses,
  type ResendRow,
  recentResends,
  resendByKey,
  resendsOfRequest,
} from "./email-resends.sql.ts";

/** At most this many resends of one order per rolling 24 hours (contract: 5 a day). */
export const MAX_RESENDS_PER_DAY = 5;
const WINDOW_HOURS = 24;

export type ResendRequest = {
  order_id: string;
  partner_id: string;
  /** The (first) email's address: the order's, the one asked for, or a group's first traveller's. */
  recipient: string;
  /**
   * A group order's resend without an address: its other travellers', one email each
   * (group-emails.ts says what each carries). One request all the same: counted once by the
   * order's limit, its Idempotency-Key kept on the first email.
   */
  also_to?: readonly string[];
  /** Another address than the order's and its travellers' (case aside): counted by the partner's cap below. */
  to_other_address: boolean;
  idempotency_key: string | null;
};

/** At most one email per eSIM of an order: a group's quantity is at most 50 (migration 0047). */
const MAX_RECIPIENTS = 50;

/**
 * The partner's resends to other addresses than their orders' per rolling 24 hours
 * (RESENDS_TO_OTHER_ADDRESSES_PER_PARTNER_PER_DAY). The per-order limit alone would let a partner
 * with N completed orders send 5N emails a day to any address from the operator's domain.
 */
export type ResendLimits = { to_other_addresses_per_partner_per_day: number };

/**
 * The resend's email_id, and whether it is a replay of the request's Idempotency-Key (the same
 * order and recipient: the resend it made, nothing queued again). The same key for another order
 * or recipient is 422 idempotency_key_reused; over either limit (the order's, the partner's to
 * other addresses), 429 resend_limit_reached with Retry-After and a detail naming the limit (a
 * refused request uses no key, so the same key may be tried again later).
 */
export async function queueResend(
  trx: Transaction<Database>,
  request: ResendRequest,
  limits: ResendLimits,
): Promise<{ email_id: string; email_ids: string[]; replayed: boolean }> {
  const recipients = [request.recipient, ...(request.also_to ?? [])];
  if (recipients.length < 1 || recipients.length > MAX_RECIPIENTS) {
    throw new Error(`a resend goes to 1-${MAX_RECIPIENTS} addresses, not ${recipients.length}`);
  }
  if (request.idempotency_key !== null) {
    const earlier = await resendByKey(trx, request.partner_id, request.idempotency_key);
    if (earlier !== null) {
      if (earlier.order_id !== request.order_id || earlier.recipient !== recipients[0]) {
        throw new ApiError(
          "idempotency_key_reused",
          "This Idempotency-Key was used for another resend (another order or recipient).",
        );
      }
      const email_ids = await emailsOfRequest(trx, earlier, recipients);
      return { email_id: earlier.email_id, email_ids, replayed: true };
    }
  }
  const recent = await recentResends(trx, request.order_id, WINDOW_HOURS);
  if (recent.count >= MAX_RESENDS_PER_DAY) {
    throw new ApiError(
      "resend_limit_reached",
      `This order's confirmation email was resent ${recent.count} times in the last 24 hours; at most ${MAX_RESENDS_PER_DAY}.`,
      { headers: { "retry-after": String(recent.oldest_leaves_in_s) } },
    );
  }
  if (request.to_other_address) await checkOtherAddressCap(trx, request.partner_id, limits);
  const email_ids: string[] = [];
  for (const [i, recipient] of recipients.entries()) {
    const email_id = newId("email");
    email_ids.push(email_id);
    const row = {
      ...request,
      email_id,
      recipient,
      idempotency_key: i === 0 ? request.idempotency_key : null,
    };
    await insertResend(trx, row).catch((error: unknown) => {
      // The same key at once for another order (whose row lock this one does not wait on): the
      // first to commit keeps the key.
      const pg_error = error as { code?: string; constraint?: string };
      if (pg_error.code === "23505" && pg_error.constraint === "email_resends_key_idx") {
        throw new ApiError("idempotency_key_reused", "This Idempotency-Key was used for another resend.");
      }
      throw error;
    });
  }
  return { email_id: email_ids[0]!, email_ids, replayed: false };
}

/** The resends one earlier request queued (those of its first's transaction), in `recipients`' order. */
async function emailsOfRequest(
  trx: Transaction<Database>,
  first: ResendRow,
  recipients: readonly string[],
): Promise<string[]> {
  if (recipients.length === 1) return [first.email_id];
  const rows = await resendsOfRequest(trx, first);
  return recipients.flatMap((recipient) =>
    rows.filter((row) => row.recipient === recipient).map((row) => row.email_id),
  );
}

async function checkOtherAddressCap(
  trx: Transaction<Database>,
  partner_id: string,
  limits: ResendLimits,
): Promise<void> {
  const cap = limits.to_other_addresses_per_partner_per_day;
  const recent = await lockRecentResendsToOtherAddresses(trx, partner_id, WINDOW_HOURS);
  if (recent.count < cap) return;
  throw new ApiError(
    "resend_limit_reached",
    `This partner resent confirmation emails to addresses other than their orders' ${recent.count} times in ` +
      `the last 24 hours; at most ${cap}. Resending to the order's own address is still possible.`,
    { headers: { "retry-after": String(recent.oldest_leaves_in_s) } },
  );
}

/**
 * The address as a relay hands it on: the domain is case-insensitive and SMTP clients lower-case
 * it, so the log and the audit record what the recipient's server receives.
 */
export function normaliseRecipient(address: string): string {
  const trimmed = address.trim();
  const at = trimmed.lastIndexOf("@");
  if (at < 0) return trimmed;
  return `${trimmed.slice(0, at)}@${trimmed.slice(at + 1).toLowerCase()}`;
}
