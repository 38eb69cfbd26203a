// Resent confirmation emails below the HTTP layer (notifications/send-resent-emails.ts,
// email-log.ts): no sweep runs here but the rounds the test drives, so the log's `queued` is seen
// before any send; a real SMTP server accepts or refuses (failNext) each message.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, test } from "node:test";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { emailLog } from "../src/notifications/email-log.ts";
import { createMailer } from "../src/notifications/mailer.ts";
import { queueResend } from "../src/notifications/queue-resend.ts";
import {
  CONFIRMATION_EMAIL_MAX_ATTEMPTS,
  releaseConfirmationEmails,
  type SendConfirmationEmailsDeps,
} from "../src/notifications/send-confirmation-emails.ts";
import { claimDueEmailJobs, claimDueResentEmails } from "../src/notifications/send-resent-emails.ts";
import { ordersForEmail } from "../src/orders/order-for-email.ts";
import { createTestDatabase } from "./support/db.ts";
import { startSmtpServer } from "./support/smtp.ts";

const { pool } = await createTestDatabase({ catalog: true });
const db = createKysely<Database>(pool);
const smtp = await startSmtpServer();
after(() => smtp.close());
const partner_id = `ptr_${randomBytes(8).toString("hex")}`;
await pool.query("insert into partners (partner_id, name) values ($1, 'Acme Travel')", [partner_id]);
const { rows: packages } = await pool.query<{ package_id: string }>(
  "select package_id from packages limit 1",
);
const PACKAGE_ID = packages[0]!.package_id;

const deps: SendConfirmationEmailsDeps = {
  pool,
  mailer: createMailer({
    smtp_url: smtp.url,
    mail_from: "eSIM <esim@example.com>",
    data_dir: "/nonexistent",
  }),
  findOrders: (order_ids) => ordersForEmail(db, order_ids, "https://esim.example"),
  log: { info: () => undefined, warn: () => undefined },
};

let serial = 0;
/** A completed new-eSIM order with its eSIM and purchase, as the completing statement leaves it. */
async function completedOrder(): Promise<{ order_id: string; email: string }> {
  const suffix = randomBytes(8).toString("hex");
  const order_id = `ord_${suffix}`;
  const email = `ann.${suffix}@example.com`;
  serial += 1;
  const iccid = `8901000${String(serial).padStart(12, "0")}`;
  await pool.query(
    `insert into carts (cart_key, partner_id, package_id, external_package_id, validity_days, total_minor, currency,
                        expires_at)
     select $1, $2, package_id, external_package_id, validity_days, 450, 'USD', now() + interval '30 minutes'
     from packages where package_id = $3`,
    [`cart_${suffix}`, partner_id, PACKAGE_ID],
  );
  await pool.query(
    `insert into orders (order_id, partner_id, type, status, cart_key, package_id, external_package_id,
                         validity_days, total_minor, currency, email, phone, first_name, last_name, iccid, resolved_at)
     select $1, $2, 'esim', 'completed', $6, package_id, external_package_id, validity_days, 450, 'USD', $3,
            '+33612345678', 'Ann', 'Martin', $4, now() from packages where package_id = $5`,
    [order_id, partner_id, email, iccid, PACKAGE_ID, `cart_${suffix}`],
  );
  await pool.query(
    `insert into esims (iccid, partner_id, order_id, package_id, smdp_address, activation_code)
     values ($1, $2, $3, $4, 'smdp.example', $5)`,
    [iccid, partner_id, order_id, PACKAGE_ID, `MATCH-${suffix}`],
  );
  await pool.query(
    `insert into purchases (order_id, position, package_id, iccid, smdp_address, activation_code)
     values ($1, 0, $2, $3, 'smdp.example', $4)`,
    [order_id, PACKAGE_ID, iccid, `MATCH-${suffix}`],
  );
  return { order_id, email };
}

async function resend(order_id: string, recipient: string): Promise<string> {
  const queued = await db
    .transaction()
    .execute((trx) =>
      queueResend(
        trx,
        { order_id, partner_id, recipient, to_other_address: true, idempotency_key: null },
        { to_other_addresses_per_partner_per_day: 1_000 },
      ),
    );
  return queued.email_id;
}

/** One round of the sweep for resends: claim and run every due one. */
async function round(): Promise<number> {
  const jobs = await claimDueResentEmails(deps, 10);
  await Promise.all(jobs.map((job) => job.run()));
  return jobs.length;
}

/** A resend's due_at as text: 'infinity' once it is given up. */
async function dueAt(email_id: string): Promise<string> {
  const { rows } = await pool.query("select due_at::text as due_at from email_resends where email_id = $1", [
    email_id,
  ]);
  return rows[0].due_at;
}

async function entry(order: { order_id: string; email: string }, email_id: string) {
  return (await emailLog(db, order)).find((e) => e.email_id === email_id);
}

test("a resend is queued until the sweep sends it, then sent to its recipient with its own Message-ID", async () => {
  const order = await completedOrder();
  await pool.query("insert into email_outbox (order_id) values ($1)", [order.order_id]);
  const email_id = await resend(order.order_id, "desk@agency.example");
  assert.deepEqual(
    (await emailLog(db, order)).map((e) => [e.kind, e.status, e.to]),
    [
      ["confirmation", "queued", order.email],
      ["resend", "queued", "desk@agency.example"],
    ],
  );
  assert.equal(await round(), 1);
  assert.equal(await round(), 0, "sent once, not claimed again");
  const sent = await entry(order, email_id);
  assert.equal(sent?.status, "sent");
  assert.ok(sent?.sent_at);
  const received = smtp.messages.filter((m) => m.raw.includes(`<resend.${email_id}@`));
  assert.equal(received.length, 1);
  assert.deepEqual(received[0]!.envelope.rcpt_to, ["desk@agency.example"]);
});

test("a refused send is failed with the server's answer and due later; after the last attempt failed is final and due at infinity", async () => {
  const order = await completedOrder();
  const email_id = await resend(order.order_id, "desk@agency.example");
  smtp.failNext(1);
  assert.equal(await round(), 1);
  const failed = await entry(order, email_id);
  assert.equal(failed?.status, "failed");
  assert.match(failed?.last_error ?? "", /451/);
  assert.equal(await round(), 0, "not due before its backoff");
  // Its last attempt, refused too: it stays failed and is never claimed again.
  await pool.query("update email_resends set due_at = now(), attempts = $2 - 1 where email_id = $1", [
    email_id,
    CONFIRMATION_EMAIL_MAX_ATTEMPTS,
  ]);
  smtp.failNext(1);
  assert.equal(await round(), 1);
  assert.equal(await dueAt(email_id), "infinity", "out of the claim's way for good, the row kept");
  assert.equal(await round(), 0, "all attempts used");
  assert.equal((await entry(order, email_id))?.status, "failed");
  assert.equal(smtp.messages.filter((m) => m.raw.includes(`<resend.${email_id}@`)).length, 0);
});

test("a resend whose order was refunded before it went out is failed for good (due at infinity), nothing sent", async () => {
  const order = await completedOrder();
  const email_id = await resend(order.order_id, "desk@agency.example");
  await pool.query("update orders set status = 'refunded', refunded_at = now() where order_id = $1", [
    order.order_id,
  ]);
  assert.equal(await round(), 1);
  const given_up = await entry(order, email_id);
  assert.equal(given_up?.status, "failed");
  assert.match(given_up?.last_error ?? "", /refunded/);
  assert.equal(await dueAt(email_id), "infinity", "out of the claim's way for good, the row kept");
  assert.equal(await round(), 0);
  assert.equal(smtp.messages.filter((m) => m.raw.includes(`<resend.${email_id}@`)).length, 0);
});

test("claims a closing sweep never started are given back: due at once, the attempt not counted", async () => {
  const order = await completedOrder();
  const email_id = await resend(order.order_id, "desk@agency.example");
  const jobs = await claimDueResentEmails(deps, 10);
  assert.equal(jobs.length, 1);
  await releaseConfirmationEmails(pool, jobs);
  const row = await pool.query(
    "select attempts, due_at <= now() as due from email_resends where email_id = $1",
    [email_id],
  );
  assert.deepEqual(row.rows[0], { attempts: 0, due: true });
  assert.equal(await round(), 1);
  assert.equal((await entry(order, email_id))?.status, "sent");
});

test("the first confirmation is failed with its error (class and reply code) while in the outbox, and sent once delivered", async () => {
  const order = await completedOrder();
  await pool.query(
    "insert into email_outbox (order_id, last_error, attempts) values ($1, '451 4.3.0 try later', 1)",
    [order.order_id],
  );
  const [failed] = await emailLog(db, order);
  assert.deepEqual(
    { ...failed },
    {
      email_id: `confirmation.${order.order_id}`,
      to: order.email,
      kind: "confirmation",
      status: "failed",
      sent_at: null,
      last_error: "temporarily refused by the mail server (451 4.3.0)",
    },
  );
  const stored = await pool.query("select last_error from email_outbox where order_id = $1", [
    order.order_id,
  ]);
  assert.equal(stored.rows[0].last_error, "451 4.3.0 try later", "the raw answer stays for the operator");
  await pool.query(
    `with gone as (delete from email_outbox where order_id = $1)
     insert into email_deliveries (order_id, message_id, recipient) values ($1, '<m@x>', $2)`,
    [order.order_id, order.email],
  );
  const [sent] = await emailLog(db, order);
  assert.equal(sent?.status, "sent");
  assert.equal(sent?.last_error, null);
});

test("a resend is claimed ahead of a backlog of first confirmations larger than the claim", async () => {
  // As after a relay outage: more confirmations due, and due longer, than one claim takes.
  const backlog: string[] = [];
  for (let i = 0; i < 4; i++) {
    const order = await completedOrder();
    await pool.query("insert into email_outbox (order_id, due_at) values ($1, now() - interval '1 hour')", [
      order.order_id,
    ]);
    backlog.push(order.order_id);
  }
  const order = await completedOrder();
  const email_id = await resend(order.order_id, "desk@agency.example");
  const jobs = await claimDueEmailJobs(deps, 3);
  assert.equal(jobs.length, 3);
  assert.deepEqual(
    jobs.filter((job) => job.email_id !== undefined).map((job) => job.email_id),
    [email_id],
  );
  await Promise.all(jobs.map((job) => job.run()));
  assert.equal((await entry(order, email_id))?.status, "sent");
  // The rest of the backlog goes out in the next claims.
  const rest = await claimDueEmailJobs(deps, 10);
  await Promise.all(rest.map((job) => job.run()));
  const { rows } = await pool.query("select count(*)::int as n from email_outbox where order_id = any($1)", [
    backlog,
  ]);
  assert.equal(rows[0].n, 0);
});

test("a relay that cannot be reached: the partner reads 'mail server unreachable', the raw error with its address stays stored", async () => {
  const order = await completedOrder();
  const email_id = await resend(order.order_id, "desk@agency.example");
  // Port 1 on the loopback: nothing listens, the connection is refused (ECONNREFUSED 127.0.0.1:1).
  const unreachable: SendConfirmationEmailsDeps = {
    ...deps,
    mailer: createMailer({
      smtp_url: "smtp://127.0.0.1:1",
      mail_from: "eSIM <esim@example.com>",
      data_dir: "/nonexistent",
    }),
  };
  const jobs = await claimDueResentEmails(unreachable, 10);
  assert.equal(jobs.length, 1);
  await Promise.all(jobs.map((job) => job.run()));
  const { rows } = await pool.query("select last_error from email_resends where email_id = $1", [email_id]);
  assert.match(rows[0].last_error, /127\.0\.0\.1:1/, "the operator keeps the raw text");
  const told = await entry(order, email_id);
  assert.equal(told?.status, "failed");
  assert.equal(told?.last_error, "mail server unreachable");
});
