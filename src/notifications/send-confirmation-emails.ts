// The confirmation email (spec section 6) of a completed new-eSIM order, delivered at least once
// and, in all but one crash window, exactly once.
//
// The statement that completes the order inserts its row in `email_outbox` (orders.sql.ts), so the
// row exists if and only if the order completed. The email sweep (server/worker.ts) runs rounds of
// sendDueConfirmationEmails, each of which:
//   1. claims up to `limit` due rows with SKIP LOCKED; the claim pushes each row's due_at past the
//      longest a send may take (the lease), so no other process claims it meanwhile and a sender
//      that dies leaves it to come due again;
//   2. reads those orders in one batch, through the function the orders domain gives it
//      (`findOrders`: notifications never read the orders' tables);
//   3. renders and sends them side by side (the round's `limit` is the bound on sends at once),
//      each send followed by one statement that deletes the row and records the delivery.
// A failure (SMTP refused, relay away) keeps the row with its error, due again after
// exp(min(attempt, 10)) seconds: with 25 attempts about four days in all, enough to ride out a
// relay outage over a weekend. A row that used them all stays, with last_error, for an operator.
import type { Selectable } from "kysely";
import type pg from "pg";
import type { Database } from "../db/schema.ts";
import {
  claimDueEmails,
  dropDelivered,
  dropRefunded,
  recordDelivery,
  recordFailure,
} from "./email-outbox.sql.ts";
import { type Mailer, SEND_TIMEOUT_MS } from "./mailer.ts";
import { renderConfirmationEmail } from "./render-confirmation-email.ts";

export const CONFIRMATION_EMAIL_MAX_ATTEMPTS = 25;

/**
 * How long a claim lasts by default: longer than the longest send (SEND_TIMEOUT_MS) and the render
 * before it. The server passes STALE_JOB_AFTER_MS (at least 30 s more than a carrier call in
 * production): what a process SIGKILLed mid-send claimed is sent by another that much later.
 */
export const EMAIL_LEASE_MS = SEND_TIMEOUT_MS + 35_000;

/** What the email needs of an order; purchase fields are null when it has no first purchase. */
export type OrderForEmail = Pick<
  Selectable<Database["orders"]>,
  "type" | "status" | "email" | "first_name"
> & {
  [K in "iccid" | "smdp_address" | "activation_code" | "start_date"]:
    | Selectable<Database["purchases"]>[K]
    | null;
} & { package_name: string | null };

type Log = {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
};

export type SendConfirmationEmailsDeps = {
  pool: pg.Pool;
  mailer: Mailer;
  /** The orders found among those ids (orders/order-for-email.ts). */
  findOrders: (order_ids: string[]) => Promise<Map<string, OrderForEmail>>;
  log: Log;
  /** How long a claim lasts (EMAIL_LEASE_MS when absent); a send outliving it may be sent twice. */
  lease_ms?: number;
};

export type EmailOutcome = "sent" | "already_delivered" | "failed";

type LoadedOrder = Omit<OrderForEmail, "iccid" | "smdp_address" | "activation_code" | "package_name"> & {
  iccid: string;
  smdp_address: string;
  activation_code: string;
  package_name: string;
};

/**
 * Claims at most `limit` due emails and starts sending them: returns how many it claimed and one
 * promise per email, settled once that email is sent and recorded, or its failure recorded (never
 * rejected for a send that failed; rejected only when even the failure could not be recorded).
 */
export async function startDueConfirmationEmails(
  deps: SendConfirmationEmailsDeps,
  limit: number,
): Promise<{ claimed: number; sending: Promise<void>[] }> {
  const claimed = await claimDueEmails(deps.pool, {
    limit,
    lease_ms: deps.lease_ms ?? EMAIL_LEASE_MS,
    max_attempts: CONFIRMATION_EMAIL_MAX_ATTEMPTS,
  });
  if (claimed.length === 0) return { claimed: 0, sending: [] };
  const orders = await deps.findOrders(claimed.filter((row) => !row.delivered).map((row) => row.order_id));
  const sending = claimed.map(async (row) => {
    if (row.delivered) return dropDelivered(deps.pool, row.order_id);
    if (orders.get(row.order_id)?.status === "refunded") {
      // Refunded before its email went out: its eSIM is cancelled, so there is nothing to install.
      deps.log.info({ order_id: row.order_id }, "confirmation email not sent: the order was refunded");
      return dropRefunded(deps.pool, row.order_id);
    }
    try {
      await sendOne(deps, row.order_id, orders.get(row.order_id) ?? null);
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      // The order id says enough: the end user's address and phone number are never logged.
      deps.log.warn(
        { order_id: row.order_id, attempts: row.attempts, error: message },
        "confirmation email failed",
      );
      await recordFailure(deps.pool, {
        order_id: row.order_id,
        lease_token: row.lease_token,
        error: message,
        retry_after_s: Math.exp(Math.min(row.attempts, 10)),
      });
    }
  });
  return { claimed: claimed.length, sending };
}

/** One whole round: claims, sends and records at most `limit` due emails; returns how many it claimed. */
export async function sendDueConfirmationEmails(
  deps: SendConfirmationEmailsDeps,
  limit: number,
): Promise<number> {
  const { claimed, sending } = await startDueConfirmationEmails(deps, limit);
  await Promise.all(sending);
  return claimed;
}

async function sendOne(deps: SendConfirmationEmailsDeps, order_id: string, found: OrderForEmail | null) {
  const order = checkOrder(order_id, found);
  const email = await renderConfirmationEmail({
    order_id,
    first_name: order.first_name,
    package_name: order.package_name,
    iccid: order.iccid,
    smdp_address: order.smdp_address,
    activation_code: order.activation_code,
    start_date: order.start_date,
  });
  // The one window this cannot close: the relay accepts the message and this process dies (or
  // the recording fails) before the delivery is recorded. The row then comes due again and the
  // email is sent again, with the same Message-ID, which mail clients and many relays use to
  // drop the duplicate.
  const { message_id } = await deps.mailer.send({
    ...email,
    key: `confirmation.${order_id}`,
    to: order.email,
  });
  await recordDelivery(deps.pool, { order_id, message_id, recipient: order.email });
  deps.log.info({ order_id }, "confirmation email sent");
}

// The row is inserted by the statement that completes a new-eSIM order, so anything else here is
// a bug. It fails the attempt rather than dropping the row: the row keeps its last_error in
// email_outbox, where an operator sees it, instead of an email silently never sent.
function checkOrder(order_id: string, row: OrderForEmail | null): LoadedOrder {
  // Order ids become part of a Message-ID and a file name: letters, digits, - and _ only.
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(order_id)) throw new Error("order_id must be 1-64 of [A-Za-z0-9_-]");
  if (!row) throw new Error(`order ${order_id} not found`);
  if (row.type !== "esim") throw new Error(`order ${order_id} is a ${row.type} order, not esim`);
  if (row.status !== "completed") throw new Error(`order ${order_id} is ${row.status}, not completed`);
  const { iccid, smdp_address, activation_code, package_name } = row;
  if (iccid === null || smdp_address === null || activation_code === null || package_name === null) {
    throw new Error(`order ${order_id} has no purchase at position 0`);
  }
  return { ...row, iccid, smdp_address, activation_code, package_name };
}
