// The optional notices to travellers (issue 35 item 4): 80% of a bundle's data used, and 24 hours
// before it expires, for partners with traveller_usage_emails on. Once each per bundle and kind:
//   1. queueing: in one transaction the eSIMs domain marks the bundles now due (SKIP LOCKED, so
//      concurrent sweeps take different ones, and a marked bundle is never due again) and the rows
//      are inserted here, unique per bundle and kind: the mark and the notice commit together;
//   2. sending: through the confirmation emails' path (the same Mailer, SMTP relay and message
//      composer), claimed with SKIP LOCKED under a lease, marked sent by the claim that sent it. The
//      window left is the confirmation's: the relay accepts, the process dies before the mark; the
//      notice goes again with the same Message-ID (`<notice.ID@…>`), one message to a mail client.
// A notice whose traveller unsubscribed (List-Unsubscribe, RFC 8058), whose partner turned the
// notices off meanwhile, or whose order was refunded is skipped, not sent. Failures retry as
// confirmations do, CONFIRMATION_EMAIL_MAX_ATTEMPTS in all, then stay `failed`.
import type { Kysely, Transaction } from "kysely";
import type pg from "pg";
import type { Database } from "../db/schema.ts";
import { newId } from "../shared/ids.ts";
import { rfc3339 } from "../shared/time.ts";
import { noticeRecipient } from "./group-emails.ts";
import { asciiRecipient, type Mailer } from "./mailer.ts";
import { isPlainAddress } from "./mime-message.ts";
import { renderTravellerNotice } from "./render-traveller-notice.ts";
import {
  brandedSender,
  brandLogoParts,
  CONFIRMATION_EMAIL_MAX_ATTEMPTS,
  DEFAULT_SENDER,
  EMAIL_LEASE_MS,
  type OrderForEmail,
  type TravellerSender,
} from "./send-confirmation-emails.ts";
import {
  type ClaimedNotice,
  claimDueNotices,
  insertNotices,
  markNoticeSent,
  markNoticeSkipped,
  type NewNotice,
  type NoticeKind,
  recordNoticeFailure,
  subscriptionOf,
} from "./traveller-notices.sql.ts";

export type { NoticeKind };

/** A bundle due for a notice, as the eSIMs domain marks it (esims/mark-bundles-for-notice.ts). */
export type DueBundle = Omit<NewNotice, "notice_id" | "kind">;

/** Partners with notices on that one round looks at, at most: the rest wait for the next round. */
export const MAX_NOTICE_PARTNERS_PER_ROUND = 1_000;

type Log = {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
};

export type TravellerNoticeDeps = {
  db: Kysely<Database>;
  pool: pg.Pool;
  mailer: Mailer;
  /** The partners with traveller_usage_emails on, from the first after `after`, wrapping (partners/traveller-settings.ts). */
  partnersWithNotices: (after: string | null, limit: number) => Promise<string[]>;
  /**
   * Where this process's sweep goes on from: the last partner its previous round looked at. Kept in
   * memory; a restart begins again at the first partner, which at worst delays a notice by rounds.
   */
  rotation: { after: string | null };
  /** MAX_NOTICE_PARTNERS_PER_ROUND unless given (tests pass a small bound). */
  partners_per_round?: number;
  /** Marks and returns the bundles due, in the caller's transaction (esims/mark-bundles-for-notice.ts). */
  markDueBundles: (
    trx: Transaction<Database>,
    kind: NoticeKind,
    partner_ids: readonly string[],
    limit: number,
  ) => Promise<DueBundle[]>;
  findOrders: (order_ids: string[]) => Promise<Map<string, OrderForEmail>>;
  findSenders: (partner_ids: string[]) => Promise<Map<string, TravellerSender>>;
  /** PUBLIC_BASE_URL: the List-Unsubscribe links point there. */
  public_base_url: string;
  log: Log;
  lease_ms?: number;
};

/** Queues the notices now due, at most `limit` of each kind; returns how many were queued. */
export async function queueTravellerNotices(deps: TravellerNoticeDeps, limit: number): Promise<number> {
  // Beyond one round's bound, each round takes the next partners, so every partner gets its turn.
  const partner_ids = await deps.partnersWithNotices(
    deps.rotation.after,
    deps.partners_per_round ?? MAX_NOTICE_PARTNERS_PER_ROUND,
  );
  if (partner_ids.length === 0) return 0;
  deps.rotation.after = partner_ids[partner_ids.length - 1]!;
  let queued = 0;
  for (const kind of ["usage_80", "expires_24h"] as const) {
    queued += await deps.db.transaction().execute(async (trx) => {
      const due = await deps.markDueBundles(trx, kind, partner_ids, limit);
      return insertNotices(
        trx,
        due.map((bundle) => ({ ...bundle, kind, notice_id: newId("notice") })),
      );
    });
  }
  return queued;
}

/**
 * Claims at most `limit` due notices and sends them, all at once; returns how many it claimed. The
 * sweep passes EMAIL_CONCURRENCY (the relay connections), so every send of a round starts at once and
 * ends within SEND_TIMEOUT_MS, well inside the claim's lease.
 */
export async function sendDueTravellerNotices(deps: TravellerNoticeDeps, limit: number): Promise<number> {
  const claimed = await claimDueNotices(deps.pool, { limit, lease_ms: deps.lease_ms ?? EMAIL_LEASE_MS });
  if (claimed.length === 0) return 0;
  const [orders, senders] = await Promise.all([
    deps.findOrders([...new Set(claimed.map((notice) => notice.esim_order_id))]),
    deps.findSenders([...new Set(claimed.map((notice) => notice.partner_id))]),
  ]);
  await Promise.all(
    claimed.map((notice) =>
      sendOne(
        deps,
        notice,
        orders.get(notice.esim_order_id) ?? null,
        senders.get(notice.partner_id) ?? DEFAULT_SENDER,
      ),
    ),
  );
  return claimed.length;
}

/** A round of the notice sweep: queue what is due, then send what is queued. */
export async function travellerNoticeRound(
  deps: TravellerNoticeDeps,
  limits: { queue: number; send: number },
): Promise<number> {
  await queueTravellerNotices(deps, limits.queue);
  return sendDueTravellerNotices(deps, limits.send);
}

/** Why a notice is not sent, or null when it is to be. */
function skipReason(
  order: OrderForEmail | null,
  recipient: string | null,
  sender: TravellerSender,
  unsubscribed: boolean,
): string | null {
  if (!sender.notifications.traveller_usage_emails) return "not sent: the partner turned the notices off";
  if (unsubscribed) return "not sent: the traveller unsubscribed";
  if (order === null) return "not sent: the eSIM's order was not found";
  if (order.status === "refunded") return "not sent: the order was refunded";
  // The stored address keeps an internationalised domain as typed; the mailer sends to its
  // ASCII form (mailer.ts asciiRecipient), so that is the form to check.
  if (recipient === null || !isPlainAddress(asciiRecipient(recipient)))
    return "not sent: the traveller's address is not a plain address";
  return null;
}

async function sendOne(
  deps: TravellerNoticeDeps,
  notice: ClaimedNotice,
  order: OrderForEmail | null,
  sender: TravellerSender,
): Promise<void> {
  try {
    const subscription = await subscriptionOf(deps.pool, notice.iccid);
    // A group order's eSIM goes to its line's traveller when the submit named one (group-emails.ts).
    const traveller = order === null ? null : noticeRecipient(order, notice.iccid);
    const reason = skipReason(order, traveller?.email ?? null, sender, subscription.unsubscribed);
    if (reason !== null || order === null || traveller === null) {
      deps.log.info({ notice_id: notice.notice_id, kind: notice.kind }, reason ?? "not sent");
      return await markNoticeSkipped(deps.pool, { ...notice, reason: reason ?? "not sent" });
    }
    const unsubscribe_url = `${deps.public_base_url}/unsubscribe/${subscription.unsubscribe_token}`;
    const brand = sender.brand;
    const rendered = renderTravellerNotice({
      kind: notice.kind,
      language: order.language,
      brand,
      first_name: traveller.first_name,
      package_name: notice.package_name,
      iccid: notice.iccid,
      data_used_mb: notice.data_used_mb,
      data_mb: notice.data_mb,
      expires_at: notice.expires_at === null ? null : rfc3339(notice.expires_at),
      top_up_url: sender.notifications.top_up_url?.replaceAll("{iccid}", notice.iccid) ?? null,
      install_page_url: traveller.install_page_url,
      unsubscribe_url,
    });
    const { message_id } = await deps.mailer.send({
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      // The logo inline, never a remote image, and only when the HTML shows it.
      attachments: brandLogoParts(brand, rendered.html),
      ...brandedSender(brand),
      language: rendered.language,
      headers: {
        // RFC 8058 one-click: a mail client POSTs "List-Unsubscribe=One-Click" to the URL.
        "List-Unsubscribe": `<${unsubscribe_url}>`,
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
      },
      key: `notice.${notice.notice_id}`,
      to: traveller.email,
    });
    await markNoticeSent(deps.pool, { ...notice, message_id });
    deps.log.info({ notice_id: notice.notice_id, kind: notice.kind }, "traveller notice sent");
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    // The ids say enough: the traveller's address is never logged.
    deps.log.warn(
      { notice_id: notice.notice_id, attempts: notice.attempts, error: message },
      "traveller notice failed",
    );
    await recordNoticeFailure(deps.pool, {
      ...notice,
      error: message,
      retry_after_s: Math.exp(Math.min(notice.attempts, 10)),
      max_attempts: CONFIRMATION_EMAIL_MAX_ATTEMPTS,
    });
  }
}
