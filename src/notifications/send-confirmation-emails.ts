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
//   3. renders and sends them (the server's sweep keeps EMAIL_CONCURRENCY sends in flight and the
//      rest of a claimed batch queued), each send's delivery recorded by a statement that deletes
//      the row and records it, one statement for every delivery finished meanwhile
//      (record-deliveries.ts).
// Each row is one email, keyed (order_id, position): an order of one has position 0; a group order
// one row per named traveller whose eSIM was made (their line's position), or, without travellers,
// one row at position 0 carrying every eSIM (group-emails.ts). Claims, deliveries, drops, failures
// and releases all go by that key, so one traveller's send, retry or failure never touches another's.
// A failure (SMTP refused, relay away) keeps the row with its error, due again after
// exp(min(attempt, 10)) seconds: with 25 attempts about four days in all, enough to ride out a
// relay outage over a weekend. A row that used them all stays, with last_error, for an operator.
import type { Selectable } from "kysely";
import type pg from "pg";
import type { Database } from "../db/schema.ts";
import { BRAND_LOGO_CID, type Brand, DEFAULT_BRAND } from "../shared/brand.ts";
import {
  type ClaimedEmail,
  claimDueEmails,
  dropDelivered,
  dropUnsent,
  recordFailure,
  releaseClaims,
} from "./email-outbox.sql.ts";
import { releaseResendClaims } from "./email-resends.sql.ts";
import { type GroupEsimForEmail, groupEmail, type WhichEmail } from "./group-emails.ts";
import { type Mailer, SEND_TIMEOUT_MS } from "./mailer.ts";
import { DeliveryRecorder } from "./record-deliveries.ts";
import {
  type EmailAttachment,
  type RenderedEmail,
  renderConfirmationEmail,
  renderGroupConfirmationEmail,
} from "./render-confirmation-email.ts";

export type { GroupEsimForEmail, WhichEmail };

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
  "type" | "status" | "email" | "first_name" | "partner_id" | "language"
> & {
  [K in "iccid" | "smdp_address" | "activation_code" | "start_date"]:
    | Selectable<Database["purchases"]>[K]
    | null;
} & {
  package_name: string | null;
  /** The eSIM's install page (absolute), linked from the email; null: none to link. */
  install_page_url: string | null;
  /** 1 for an order of one; a group order's number of eSIMs asked for (migration 0047). */
  quantity: number;
  /** A group order's eSIMs made, by position (empty for an order of one). */
  esims: GroupEsimForEmail[];
};

/**
 * What sending a traveller email needs of the order's partner (partners/traveller-settings.ts
 * loads it: notifications never read the partners' tables): its brand, and which emails it wants.
 */
export type TravellerSender = {
  brand: Brand;
  notifications: { confirmation_email: boolean; traveller_usage_emails: boolean; top_up_url: string | null };
};

/** A partner that set nothing: the service's brand, the contract's defaults. */
export const DEFAULT_SENDER: TravellerSender = {
  brand: DEFAULT_BRAND,
  notifications: { confirmation_email: true, traveller_usage_emails: false, top_up_url: null },
};

/** The brand's part of a message: the From display name (null: MAIL_FROM's own) and Reply-To. */
export function brandedSender(brand: Brand): { from_name: string | null; reply_to: string | null } {
  return { from_name: brand.email_from_name ?? brand.display_name, reply_to: brand.reply_to };
}

/**
 * The brand's logo as an inline part, when the HTML shows it (`cid:` BRAND_LOGO_CID): the logo
 * travels in the message, never as a remote image a mail client would fetch (and block).
 */
export function brandLogoParts(brand: Brand, html: string): EmailAttachment[] {
  if (brand.logo_png === null || !html.includes(`cid:${BRAND_LOGO_CID}`)) return [];
  return [{ filename: "logo.png", content: brand.logo_png, content_type: "image/png", cid: BRAND_LOGO_CID }];
}

type Log = {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
};

export type SendConfirmationEmailsDeps = {
  pool: pg.Pool;
  mailer: Mailer;
  /** The orders found among those ids (orders/order-for-email.ts). */
  findOrders: (order_ids: string[]) => Promise<Map<string, OrderForEmail>>;
  /** The partners' brands and settings (partners/traveller-settings.ts); absent: DEFAULT_SENDER's. */
  findSenders?: (partner_ids: string[]) => Promise<Map<string, TravellerSender>>;
  log: Log;
  /** How long a claim lasts (EMAIL_LEASE_MS when absent); a send outliving it may be sent twice. */
  lease_ms?: number;
  /** Shared by every round of a sweep, so deliveries of several rounds go in one statement. */
  recorder?: DeliveryRecorder;
};

/**
 * One claimed email: `run` sends it and records the outcome (settles as startDue… says below), and
 * calls `sent` once the send itself is over (accepted, refused or not needed), before the delivery
 * is recorded: the sender's slot is free then, the recording goes with others in one statement.
 */
export type EmailJob = {
  order_id: string;
  /** Which of the order's first confirmations (email_outbox.position); 0 for a resend. */
  position: number;
  /** A resend's id (send-resent-emails.ts); absent for the first confirmation. */
  email_id?: string;
  lease_token: string;
  run: (sent?: () => void) => Promise<void>;
};

export type EmailOutcome = "sent" | "already_delivered" | "failed";

export type LoadedOrder = Omit<
  OrderForEmail,
  "iccid" | "smdp_address" | "activation_code" | "package_name"
> & {
  iccid: string;
  smdp_address: string;
  activation_code: string;
  package_name: string;
};

/**
 * Claims at most `limit` due emails and reads their orders in one batch: one job per email, which
 * sends nothing until it is run. A claimed email must be run (or its claim released) within the
 * lease, else another process sends it too.
 */
export async function claimDueConfirmationEmails(
  deps: SendConfirmationEmailsDeps,
  limit: number,
): Promise<EmailJob[]> {
  const lease_ms = deps.lease_ms ?? EMAIL_LEASE_MS;
  const claimed = await claimDueEmails(deps.pool, {
    limit,
    lease_ms,
    max_attempts: CONFIRMATION_EMAIL_MAX_ATTEMPTS,
  });
  if (claimed.length === 0) return [];
  const orders = await deps.findOrders(claimed.filter((row) => !row.delivered).map((row) => row.order_id));
  const senders = await sendersOf(
    deps,
    [...orders.values()].map((order) => order.partner_id),
  );
  const recorder = deps.recorder ?? new DeliveryRecorder(deps.pool, lease_ms / 2);
  const claimed_at = performance.now();
  return claimed.map((row) => ({
    order_id: row.order_id,
    position: row.position,
    lease_token: row.lease_token,
    run: async (sent = () => undefined) => {
      // Read with the batch; read again when the job waited in a sweep's queue (a slow relay): a
      // refund meanwhile cancelled the eSIM, and its QR code must not go out. A job started at once
      // (the common case) costs no statement of its own.
      try {
        const order =
          performance.now() - claimed_at > REREAD_ORDER_AFTER_MS && !row.delivered
            ? ((await deps.findOrders([row.order_id])).get(row.order_id) ?? null)
            : (orders.get(row.order_id) ?? null);
        const sender = (order && senders.get(order.partner_id)) ?? DEFAULT_SENDER;
        return await processClaimed(deps, recorder, row, order, sender, sent);
      } finally {
        sent();
      }
    },
  }));
}

/** The senders of these partners, one batch; DEFAULT_SENDER's where the deps read none. */
export async function sendersOf(
  deps: Pick<SendConfirmationEmailsDeps, "findSenders">,
  partner_ids: string[],
): Promise<Map<string, TravellerSender>> {
  if (!deps.findSenders || partner_ids.length === 0) return new Map();
  return deps.findSenders([...new Set(partner_ids)]);
}

/** A job that waited longer than this after its claim reads its order again before sending. */
export const REREAD_ORDER_AFTER_MS = 1_000;

/**
 * Claims at most `limit` due emails and starts sending them all: returns how many it claimed and
 * one promise per email, settled once that email is sent and recorded, or its failure recorded
 * (never rejected for a send that failed; rejected only when even the failure could not be recorded).
 */
export async function startDueConfirmationEmails(
  deps: SendConfirmationEmailsDeps,
  limit: number,
): Promise<{ claimed: number; sending: Promise<void>[] }> {
  const jobs = await claimDueConfirmationEmails(deps, limit);
  return { claimed: jobs.length, sending: jobs.map((job) => job.run()) };
}

async function processClaimed(
  deps: SendConfirmationEmailsDeps,
  recorder: DeliveryRecorder,
  row: ClaimedEmail,
  order: OrderForEmail | null,
  sender: TravellerSender,
  sent: () => void,
): Promise<void> {
  if (row.delivered) return dropDelivered(deps.pool, row);
  const ids = { order_id: row.order_id, position: row.position };
  if (order?.status === "refunded") {
    // Refunded before its email went out: its eSIM is cancelled, so there is nothing to install.
    deps.log.info(ids, "confirmation email not sent: the order was refunded");
    return dropUnsent(deps.pool, row);
  }
  if (order && !sender.notifications.confirmation_email) {
    // The partner emails its travellers itself (PUT /v1/profile/notifications): the row goes, and
    // the order's email log lists no first confirmation; a resend is still sent when asked for.
    deps.log.info(ids, "confirmation email not sent: the partner sends its own");
    return dropUnsent(deps.pool, row);
  }
  try {
    await sendOne(deps, recorder, row, order, sender, sent);
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    // The ids say enough: the end user's and travellers' addresses and phone number are never logged.
    deps.log.warn({ ...ids, attempts: row.attempts, error: message }, "confirmation email failed");
    await recordFailure(deps.pool, {
      ...ids,
      lease_token: row.lease_token,
      error: message,
      retry_after_s: Math.exp(Math.min(row.attempts, 10)),
    });
  }
}

/**
 * How many claimed emails a sweep with `concurrency` sends at once may hold, in flight and queued: as
 * many rounds of sends as fit in the lease, each send at most SEND_TIMEOUT_MS, with a tenth of the
 * lease kept for the render, the recording and clocks. So the last email claimed starts and ends
 * before its claim runs out even when every send before it times out. A lease shorter than two
 * sends holds no queue (claims only free slots); four rounds at most, so a killed process's emails
 * wait one lease, whatever their number.
 */
export function emailClaimCapacity(concurrency: number, lease_ms: number): number {
  const rounds = Math.max(1, Math.min(4, Math.floor((lease_ms * 0.9) / SEND_TIMEOUT_MS)));
  return concurrency * rounds;
}

/** Gives back the claims of jobs never run (a sweep closing), resends included: due again at once. */
export async function releaseConfirmationEmails(pool: pg.Pool, jobs: readonly EmailJob[]): Promise<void> {
  const resends = jobs.flatMap((job) =>
    job.email_id === undefined ? [] : [{ email_id: job.email_id, lease_token: job.lease_token }],
  );
  await releaseClaims(
    pool,
    jobs.filter((job) => job.email_id === undefined),
  );
  await releaseResendClaims(pool, resends);
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

/**
 * The Message-ID key (and email log id) of an order's first confirmation number `position`: an
 * order of one keeps `confirmation.{order_id}`; a group traveller's own email past the first adds
 * its position, so each message of one order has its own id.
 */
export function confirmationKey(order_id: string, position: number): string {
  return position === 0 ? `confirmation.${order_id}` : `confirmation.${order_id}.${position}`;
}

async function sendOne(
  deps: SendConfirmationEmailsDeps,
  recorder: DeliveryRecorder,
  row: ClaimedEmail,
  found: OrderForEmail | null,
  sender: TravellerSender,
  sent: () => void,
) {
  const { order_id, position } = row;
  const { email, to } = await renderOrderEmail(order_id, found, sender.brand, { position });
  // The one window this cannot close: the relay accepts the message and this process dies (or
  // the recording fails) before the delivery is recorded. The row then comes due again and the
  // email is sent again, with the same Message-ID, which mail clients and many relays use to
  // drop the duplicate.
  const { message_id } = await deps.mailer.send({
    ...email,
    ...brandedSender(sender.brand),
    key: confirmationKey(order_id, position),
    to,
  });
  sent();
  await recorder.record({ order_id, position, message_id, recipient: to });
  deps.log.info({ order_id, position }, "confirmation email sent");
}

/**
 * The order checked and the email rendered, with its recipient: the first confirmation's and a
 * resend's. An order of one: its one eSIM, to its address (or the resend's). A group order: what
 * groupEmail picks, one eSIM in the very email of an order of one, several numbered in one email.
 */
export async function renderOrderEmail(
  order_id: string,
  found: OrderForEmail | null,
  brand: Brand,
  which: WhichEmail,
): Promise<{ email: RenderedEmail; to: string }> {
  if (found !== null && found.quantity > 1) return renderGroupOrderEmail(order_id, found, brand, which);
  const order = checkOrder(order_id, found);
  if ("position" in which && which.position !== 0) {
    throw new Error(`order ${order_id} is an order of one: it has no email at position ${which.position}`);
  }
  const email = await renderConfirmationEmail(
    {
      order_id,
      first_name: order.first_name,
      package_name: order.package_name,
      iccid: order.iccid,
      smdp_address: order.smdp_address,
      activation_code: order.activation_code,
      start_date: order.start_date,
      language: order.language,
      install_page_url: order.install_page_url,
    },
    brand,
  );
  return { email, to: "position" in which ? order.email : which.recipient };
}

/** A group order's email `which` (group-emails.ts): one eSIM as an order of one's, several numbered. */
async function renderGroupOrderEmail(
  order_id: string,
  found: OrderForEmail,
  brand: Brand,
  which: WhichEmail,
): Promise<{ email: RenderedEmail; to: string }> {
  const group = checkGroupOrder(order_id, found);
  const picked = groupEmail(group, which);
  const common = {
    order_id,
    first_name: picked.first_name,
    package_name: group.package_name,
    language: group.language,
  };
  const email =
    picked.esims.length === 1
      ? await renderConfirmationEmail({ ...picked.esims[0]!, ...common }, brand)
      : await renderGroupConfirmationEmail({ ...common, esims: picked.esims }, brand);
  return { email, to: picked.to };
}

// The row is inserted by the statement that completes a new-eSIM order, so anything else here is
// a bug. It fails the attempt rather than dropping the row: the row keeps its last_error in
// email_outbox, where an operator sees it, instead of an email silently never sent.
export function checkOrder(order_id: string, row: OrderForEmail | null): LoadedOrder {
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

/** A group order as checkOrder checks an order of one: completed, and with eSIMs to send. */
function checkGroupOrder(order_id: string, row: OrderForEmail): OrderForEmail & { package_name: string } {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(order_id)) throw new Error("order_id must be 1-64 of [A-Za-z0-9_-]");
  if (row.type !== "esim") throw new Error(`order ${order_id} is a ${row.type} order, not esim`);
  if (row.status !== "completed") throw new Error(`order ${order_id} is ${row.status}, not completed`);
  if (row.package_name === null) throw new Error(`order ${order_id} has no package name`);
  if (row.esims.length === 0 || row.esims.length > row.quantity) {
    throw new Error(`order ${order_id} has ${row.esims.length} eSIMs of ${row.quantity}`);
  }
  return { ...row, package_name: row.package_name };
}
