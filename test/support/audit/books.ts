// The audit's book checks: the ledger, Idempotency-Keys, email deliveries and the mail that
// arrived (invariants 6-9).
import type pg from "pg";
import type { ReceivedMessage } from "../smtp.ts";
import type { BreachList, OrderFacts } from "./facts.ts";

export async function checkWallets(found: BreachList, pool: pg.Pool): Promise<void> {
  const wallets = await pool.query<{ partner_id: string; available: number }>(`
    select partner_id, (posted_credits_minor - posted_debits_minor - pending_debits_minor)::bigint as available
    from ledger_accounts where kind = 'partner_wallet'`);
  for (const wallet of wallets.rows) {
    if (wallet.available < 0) {
      found.add(
        "wallet-not-negative",
        `partner ${wallet.partner_id} has available balance ${wallet.available}`,
      );
    }
  }
  // Each wallet's posted debits are exactly its charged orders' totals (completed, or refunded since:
  // a refund is a credit of its own, the purchase stays posted).
  const spent = await pool.query<{ partner_id: string; posted_debits: number; completed_total: number }>(`
    select a.partner_id, a.posted_debits_minor as posted_debits,
           coalesce((select sum(o.total_minor) from orders o where o.partner_id = a.partner_id
                     and o.status in ('completed', 'refunded')), 0)::bigint as completed_total
    from ledger_accounts a where a.kind = 'partner_wallet'`);
  for (const row of spent.rows) {
    if (row.posted_debits !== row.completed_total) {
      found.add(
        "charged-for-completed-only",
        `partner ${row.partner_id} was debited ${row.posted_debits} but its completed and refunded orders total ${row.completed_total}`,
      );
    }
  }
}

export async function checkIdempotencyKeys(found: BreachList, pool: pg.Pool): Promise<void> {
  const keys = await pool.query<{
    partner_id: string;
    idempotency_key: string;
    state: string;
    order_id: string | null;
    response_status: number | null;
    response_body: string | null;
    order_partner: string | null;
    order_status: string | null;
    refund_of: string | null;
    refunding: boolean;
  }>(`
    select k.partner_id, k.idempotency_key, k.state, coalesce(k.order_id, k.refund_of) as order_id,
           k.response_status, k.response_body, o.partner_id as order_partner, o.status as order_status, k.refund_of,
           exists (select 1 from order_refunds r where r.order_id = k.refund_of and r.state = 'refunding') as refunding
    from idempotency_keys k left join orders o on o.order_id = coalesce(k.order_id, k.refund_of)`);
  for (const key of keys.rows) {
    const what = `Idempotency-Key ${JSON.stringify(key.idempotency_key)} of partner ${key.partner_id}`;
    if (key.refund_of !== null) {
      checkRefundKey(found, what, key);
      continue;
    }
    if (key.order_id !== null && key.order_partner !== key.partner_id) {
      found.add("idempotency-key", `${what} names order ${key.order_id} of partner ${key.order_partner}`);
      continue;
    }
    if (key.state === "running") {
      if (key.order_status !== "pending") {
        found.add(
          "idempotency-key",
          `${what} is still running but its order ${key.order_id ?? "(none)"} is ${key.order_status ?? "missing"}: a retry would not replay`,
        );
      }
      continue;
    }
    if (key.order_id === null) {
      // Only a 402 is stored without an order (nothing was written but the key).
      if (key.response_status !== 402) {
        found.add("idempotency-key", `${what} stored ${key.response_status} without an order`);
      }
      continue;
    }
    // A top-up refunded since still replays the 200 its key stored when it completed.
    const charged = key.order_status === "completed" || key.order_status === "refunded";
    const expected = charged ? 200 : key.order_status === "failed" ? 502 : null;
    if (key.response_status !== expected) {
      found.add(
        "idempotency-key",
        `${what} replays ${key.response_status} but its order ${key.order_id} is ${key.order_status}`,
      );
    } else if (expected === 200 && !key.response_body?.includes(`"orderID":"${key.order_id}"`)) {
      found.add("idempotency-key", `${what} replays a 200 that does not name its order ${key.order_id}`);
    }
  }
}

/** A refund's key: running only while its refund is under way; completed with 200 or 409 refund_not_allowed. */
function checkRefundKey(
  found: BreachList,
  what: string,
  key: {
    state: string;
    order_id: string | null;
    order_partner: string | null;
    partner_id: string;
    order_status: string | null;
    response_status: number | null;
    response_body: string | null;
    refunding: boolean;
  },
): void {
  if (key.order_partner !== key.partner_id) {
    found.add("idempotency-key", `${what} refunds order ${key.order_id} of partner ${key.order_partner}`);
  } else if (key.state === "running") {
    if (!key.refunding)
      found.add("idempotency-key", `${what} is running but order ${key.order_id} has no refund under way`);
  } else if (key.response_status === 200) {
    if (key.order_status !== "refunded" || !key.response_body?.includes(`"orderID":"${key.order_id}"`)) {
      found.add(
        "idempotency-key",
        `${what} replays a refund of order ${key.order_id}, which is ${key.order_status}`,
      );
    }
  } else if (key.response_status !== 409 || !key.response_body?.includes('"refund_not_allowed"')) {
    found.add("idempotency-key", `${what} of a refund stored ${key.response_status}`);
  }
}

export async function checkEmailDeliveries(found: BreachList, pool: pg.Pool): Promise<void> {
  const wrong = await pool.query<{ order_id: string; type: string | null; status: string | null }>(`
    select d.order_id, o.type, o.status from email_deliveries d left join orders o on o.order_id = d.order_id
    where o.order_id is null or o.type <> 'esim' or o.status not in ('completed', 'refunded')`);
  for (const row of wrong.rows) {
    found.add(
      "one-email-per-new-esim",
      `an email was delivered for order ${row.order_id}, which is ${row.type ?? "unknown"} ${row.status ?? "(missing)"}`,
    );
  }
  const missing = await pool.query<{ order_id: string }>(`
    select o.order_id from orders o
    where o.type = 'esim' and o.status = 'completed' and o.quantity = 1
      and not exists (select 1 from email_deliveries d where d.order_id = o.order_id)`);
  for (const row of missing.rows) {
    found.add(
      "one-email-per-new-esim",
      `completed new-eSIM order ${row.order_id} has no delivered confirmation email`,
    );
  }
  const misaddressed = await pool.query<{ order_id: string }>(`
    select d.order_id from email_deliveries d join orders o on o.order_id = d.order_id
    where d.recipient <> o.email and o.quantity = 1`);
  for (const row of misaddressed.rows) {
    found.add(
      "one-email-per-new-esim",
      `the email of order ${row.order_id} went to another address than the order's`,
    );
  }
}

/** The order id our mailer puts in the Message-ID: `<confirmation.ORDER_ID@domain>`. */
export const MESSAGE_ID = /^<confirmation\.([A-Za-z0-9_-]{1,64})@[^>]+>$/;
/** A resend's Message-ID (notifications/send-resent-emails.ts): `<resend.EMAIL_ID@domain>`. */
export const RESEND_MESSAGE_ID = /^<resend\.(eml_[A-Za-z0-9_-]{16,64})@[^>]+>$/;

/** A resend as email_resends records it: which order, to whom. */
export type ResendFacts = { email_id: string; order_id: string; recipient: string };

/**
 * A resend reached the SMTP server: it must be one the service recorded (POST .../resend-email), of
 * a new eSIM that completed, to the recipient recorded. Copies with one Message-ID are the
 * documented crash window, as for confirmations.
 */
function checkResent(
  found: BreachList,
  notes: string[],
  orders: OrderFacts[],
  resends: ResendFacts[],
  received: Map<string, ReceivedMessage[]>,
): void {
  const known = new Map(resends.map((resend) => [resend.email_id, resend]));
  const esims = new Map(
    orders
      .filter((o) => o.type === "esim" && (o.status === "completed" || o.status === "refunded"))
      .map((o) => [o.order_id, o]),
  );
  for (const [email_id, copies] of received) {
    const resend = known.get(email_id);
    if (!resend) {
      found.add("smtp", `the SMTP server received resend ${email_id}, which the service never recorded`);
      continue;
    }
    if (!esims.has(resend.order_id)) {
      found.add("smtp", `resend ${email_id} went out for order ${resend.order_id}, not a completed new eSIM`);
    }
    if (copies.some((copy) => copy.envelope.rcpt_to.join(",") !== resend.recipient)) {
      found.add("smtp", `resend ${email_id} was sent to another recipient than the one recorded`);
    }
    if (copies.length > 1) {
      notes.push(
        `resend ${email_id}: the SMTP server received it ${copies.length} times, with one Message-ID`,
      );
    }
  }
}

export function checkSmtp(
  found: BreachList,
  notes: string[],
  orders: OrderFacts[],
  messages: ReceivedMessage[],
  resends: ResendFacts[] = [],
  groupMessages: ReadonlySet<ReceivedMessage> = new Set(),
): void {
  // Group orders' confirmations are checked per traveller (groups.ts): every other order is one email.
  const single = orders.filter((o) => o.quantity === 1);
  const expected = new Map(
    single.filter((o) => o.type === "esim" && o.status === "completed").map((o) => [o.order_id, o]),
  );
  // A refunded new eSIM may have had its email before the refund, or not (refunded first).
  const refunded = new Map(
    single.filter((o) => o.type === "esim" && o.status === "refunded").map((o) => [o.order_id, o]),
  );
  const received = new Map<string, ReceivedMessage[]>();
  const resent = new Map<string, ReceivedMessage[]>();
  for (const message of messages) {
    if (groupMessages.has(message)) continue;
    const head = (message.raw.split("\r\n\r\n")[0] ?? "").replace(/\r\n[ \t]+/g, " ");
    const header = /^message-id:[ \t]*(\S+)/im.exec(head)?.[1] ?? "";
    const order_id = MESSAGE_ID.exec(header)?.[1];
    const email_id = RESEND_MESSAGE_ID.exec(header)?.[1];
    if (email_id !== undefined) {
      resent.set(email_id, [...(resent.get(email_id) ?? []), message]);
      continue;
    }
    if (order_id === undefined) {
      found.add(
        "smtp",
        `the SMTP server received a message with Message-ID ${JSON.stringify(header)}, not a confirmation`,
      );
      continue;
    }
    received.set(order_id, [...(received.get(order_id) ?? []), message]);
  }
  for (const [order_id, copies] of received) {
    const order = expected.get(order_id) ?? refunded.get(order_id);
    if (!order) {
      found.add(
        "smtp",
        `the SMTP server received a confirmation for order ${order_id}, which is not a completed new eSIM`,
      );
      continue;
    }
    if (copies.some((copy) => copy.envelope.rcpt_to.join(",") !== order.email)) {
      found.add(
        "smtp",
        `the confirmation of order ${order_id} was sent to another recipient than ${order.email}`,
      );
    }
    if (copies.length > 1) {
      // The documented window of send-confirmation-emails.ts: the relay accepted the message and
      // the process died before recording it. Same Message-ID, so the recipient sees one email.
      notes.push(
        `order ${order_id}: the SMTP server received its confirmation ${copies.length} times, with one Message-ID`,
      );
    }
  }
  for (const order_id of expected.keys()) {
    if (!received.has(order_id)) {
      found.add("smtp", `completed new-eSIM order ${order_id}: no confirmation reached the SMTP server`);
    }
  }
  checkResent(found, notes, orders, resends, resent);
}
