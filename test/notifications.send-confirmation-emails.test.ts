import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { createMailer, type Mailer } from "../src/notifications/mailer.ts";
import { DeliveryRecorder } from "../src/notifications/record-deliveries.ts";
import {
  emailQrCodePng,
  escapeHtml,
  QR_CODE_CID,
  renderConfirmationEmail,
} from "../src/notifications/render-confirmation-email.ts";
import {
  CONFIRMATION_EMAIL_MAX_ATTEMPTS,
  claimDueConfirmationEmails,
  REREAD_ORDER_AFTER_MS,
  releaseConfirmationEmails,
  type SendConfirmationEmailsDeps,
  sendDueConfirmationEmails,
} from "../src/notifications/send-confirmation-emails.ts";
import { ordersForEmail } from "../src/orders/order-for-email.ts";
import { startEmailSweep } from "../src/server/worker.ts";
import type { AppContext } from "../src/shared/context.ts";
import { lpaString } from "../src/shared/install-kit.ts";
import { createTestDatabase } from "./support/db.ts";
import { parseMessage, partText, startSmtpServer, type TestSmtpServer } from "./support/smtp.ts";

const PACKAGE_ID = "pkg-fr-5gb-30d";
const PACKAGE_NAME = "France 5 GB / 30 days";
const SMDP_ADDRESS = "smdp.sandbox.esim.example";

type TestOrder = { order_id: string; email: string; iccid: string; activation_code: string; lpa: string };

const { pool } = await createTestDatabase();
const db = createKysely<Database>(pool);
/** How the server gives the email sweep its orders (src/server/worker.ts). */
const findOrders = (order_ids: string[]) => ordersForEmail(db, order_ids);
let partner_id: string;

before(async () => {
  partner_id = `ptr_${randomBytes(8).toString("hex")}`;
  await pool.query(`insert into partners (partner_id, name) values ($1, 'Acme Travel')`, [partner_id]);
  await pool.query(`insert into destinations (destination_code, name) values ('FR', 'France')`);
  await pool.query(
    `insert into packages (package_id, external_package_id, name, data_mb, validity_days,
                           wholesale_minor, retail_minor, currency, coverage)
     values ($1, 'ext-fr-5gb', $2, 5120, 30, 450, 900, 'USD', 'country')`,
    [PACKAGE_ID, PACKAGE_NAME],
  );
  await pool.query(`insert into package_destinations (package_id, destination_code) values ($1, 'FR')`, [
    PACKAGE_ID,
  ]);
});

let iccid_serial = 0;

/** The rows a completed new-eSIM order leaves behind: cart, order, eSIM and its purchase. */
async function insertOrder(
  options: { first_name?: string; status?: "completed" | "pending"; type?: "esim" | "topup" } = {},
): Promise<TestOrder> {
  const { first_name = "Ann", status = "completed", type = "esim" } = options;
  const suffix = randomBytes(8).toString("hex");
  const order_id = `ord_${suffix}`;
  const cart_key = type === "esim" ? `cart_${suffix}` : null;
  const email = `ann.${suffix}@example.com`;
  iccid_serial += 1;
  const iccid = `8901000${String(iccid_serial).padStart(12, "0")}`;
  const activation_code = `MATCH-${suffix.toUpperCase()}`;
  const provisioned = status === "completed" || type === "topup";
  if (cart_key) {
    await pool.query(
      `insert into carts (cart_key, partner_id, package_id, external_package_id, validity_days, total_minor, currency,
                          expires_at)
       values ($1, $2, $3, 'ext-fr-5gb', 30, 450, 'USD', now() + interval '30 minutes')`,
      [cart_key, partner_id, PACKAGE_ID],
    );
  }
  await pool.query(
    `insert into orders (order_id, partner_id, type, status, cart_key, package_id, external_package_id, validity_days,
                         total_minor, currency, email, phone, first_name, last_name, iccid, resolved_at)
     values ($1, $2, $3, $4::text, $5, $6, 'ext-fr-5gb', 30, 450, 'USD', $7, '+33612345678', $8, 'Martin', $9,
             case when $4::text = 'pending' then null else now() end)`,
    [order_id, partner_id, type, status, cart_key, PACKAGE_ID, email, first_name, provisioned ? iccid : null],
  );
  if (status === "pending") {
    // Listed as the service's insert lists it (migration 0046).
    await pool.query("insert into pending_orders (order_id, created_at) values ($1, now())", [order_id]);
  }
  if (status === "completed" && type === "esim") {
    await pool.query(
      `insert into esims (iccid, partner_id, order_id, package_id, smdp_address, activation_code)
       values ($1, $2, $3, $4, $5, $6)`,
      [iccid, partner_id, order_id, PACKAGE_ID, SMDP_ADDRESS, activation_code],
    );
    await pool.query(
      `insert into purchases (order_id, position, package_id, iccid, smdp_address, activation_code)
       values ($1, 0, $2, $3, $4, $5)`,
      [order_id, PACKAGE_ID, iccid, SMDP_ADDRESS, activation_code],
    );
  }
  return { order_id, email, iccid, activation_code, lpa: lpaString(SMDP_ADDRESS, activation_code) };
}

/** Log lines, kept to check that no end-user address ever reaches them. */
const log_lines: string[] = [];
const log = {
  info: (fields: object, message: string) => log_lines.push(`info ${message} ${JSON.stringify(fields)}`),
  warn: (fields: object, message: string) => log_lines.push(`warn ${message} ${JSON.stringify(fields)}`),
};

/** The row the statement completing an order inserts (orders.sql.ts completeOrder). */
async function queue(order_id: string): Promise<void> {
  await pool.query("insert into email_outbox (order_id) values ($1)", [order_id]);
}

/** Sweep rounds until no due row is left (each round sends at most `limit`). */
async function sweep(deps: SendConfirmationEmailsDeps, limit = 8): Promise<number> {
  let claimed = 0;
  for (let round = 0; round < 100; round++) {
    const n = await sendDueConfirmationEmails(deps, limit);
    claimed += n;
    if (n < limit) return claimed;
  }
  throw new Error("the outbox did not drain in 100 rounds");
}

async function outboxRow(order_id: string) {
  const { rows } = await pool.query<{ attempts: number; due_in_s: number; last_error: string | null }>(
    `select attempts, extract(epoch from due_at - now())::float8 as due_in_s, last_error
     from email_outbox where order_id = $1`,
    [order_id],
  );
  return rows[0] ?? null;
}

/** Makes a row due now, as the time of its retry would. */
async function makeDue(order_id: string): Promise<void> {
  await pool.query("update email_outbox set due_at = now() where order_id = $1", [order_id]);
}

async function deliveries(order_id: string) {
  const { rows } = await pool.query<{ message_id: string; recipient: string }>(
    `select message_id, recipient from email_deliveries where order_id = $1`,
    [order_id],
  );
  return rows;
}

/** What startEmailSweep reads of the server's context: a pool, this database, EMAIL_CONCURRENCY, a 120 s lease. */
function sweepContext(email_concurrency: number, through: typeof pool = pool): AppContext {
  return {
    pool: through,
    db,
    config: { email_concurrency, stale_job_after_ms: 120_000 },
  } as unknown as AppContext;
}

/** The test database's pool, counting the statements sent through it whose text matches `pattern`. */
function countingPool(pattern: RegExp): { pool: typeof pool; count: () => number } {
  let count = 0;
  const counting = new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== "query") return Reflect.get(target, property, receiver);
      return (...args: unknown[]) => {
        if (typeof args[0] === "string" && pattern.test(args[0])) count += 1;
        return (target.query as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { pool: counting, count: () => count };
}

/** The test database's pool, whose first `times` statements matching `pattern` fail as a dropped connection would. */
function failingPool(pattern: RegExp, times: number): typeof pool {
  let left = times;
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== "query") return Reflect.get(target, property, receiver);
      return (...args: unknown[]) => {
        if (typeof args[0] === "string" && pattern.test(args[0]) && left > 0) {
          left -= 1;
          return Promise.reject(new Error("Connection terminated unexpectedly"));
        }
        return (target.query as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** The test database's pool, each statement matching `pattern` answered `delay_ms` late. */
function slowPool(pattern: RegExp, delay_ms: number): typeof pool {
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== "query") return Reflect.get(target, property, receiver);
      return async (...args: unknown[]) => {
        if (typeof args[0] === "string" && pattern.test(args[0])) await sleep(delay_ms);
        return (target.query as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

async function waitForDelivery(order_id: string): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    if ((await deliveries(order_id)).length > 0) return;
    await sleep(50);
  }
  throw new Error(`no delivery recorded for ${order_id}`);
}

function messagesTo(smtp: TestSmtpServer, email: string) {
  return smtp.messages.filter((message) => message.envelope.rcpt_to.includes(email));
}

/** Each order's email reached the relay exactly once, and its outbox row is gone. */
async function assertSentOnceAndDone(
  smtp: TestSmtpServer,
  orders: Array<{ order_id: string; email: string }>,
): Promise<void> {
  for (const order of orders) {
    assert.equal(messagesTo(smtp, order.email).length, 1, order.order_id);
    assert.equal(await outboxRow(order.order_id), null);
  }
}

describe("over SMTP", () => {
  let smtp: TestSmtpServer;
  let mailer: Mailer;
  let deps: SendConfirmationEmailsDeps;
  before(async () => {
    smtp = await startSmtpServer();
    mailer = createMailer({
      smtp_url: smtp.url,
      mail_from: "eSIM Orders <orders@esim.example>",
      data_dir: ".",
      max_connections: 4,
    });
    deps = { pool, mailer, findOrders, log };
  });
  after(async () => {
    await mailer.close();
    await smtp.close();
  });

  test("sends one email to the end user with the LPA string, ICCID, install steps and an inline QR code", async () => {
    const order = await insertOrder();
    await queue(order.order_id);
    assert.equal(await sweep(deps), 1);

    const [received, ...others] = messagesTo(smtp, order.email);
    assert.ok(received);
    assert.equal(others.length, 0);
    assert.deepEqual(received.envelope, { mail_from: "orders@esim.example", rcpt_to: [order.email] });
    // On the wire: CRLF line ends only, and no line longer than RFC 5322's 78 characters.
    assert.doesNotMatch(received.raw, /[^\r]\n|\r(?!\n)/, "CRLF line ends only");
    const longest = Math.max(...received.raw.split("\r\n").map((line) => line.length));
    assert.ok(longest <= 78, `the longest line has ${longest} characters`);
    const message = parseMessage(received.raw);
    assert.equal(message.headers.get("message-id"), `<confirmation.${order.order_id}@esim.example>`);
    assert.equal(message.headers.get("to"), order.email);

    const text = partText(message, "text/plain");
    const html = partText(message, "text/html");
    for (const body of [text, html]) {
      assert.match(body, /Hello Ann,/);
      assert.ok(body.includes(order.lpa), "LPA string");
      assert.ok(body.includes(order.iccid), "ICCID");
      assert.ok(body.includes(SMDP_ADDRESS), "SM-DP+ address");
      assert.ok(body.includes(order.activation_code), "activation code");
      assert.ok(body.includes(escapeHtml(PACKAGE_NAME)), "package name");
      assert.match(body, /iPhone/);
      assert.match(body, /Settings &gt; Cellular|Settings > Cellular/);
      assert.match(body, /Android/);
      assert.match(
        body,
        /Settings &gt; Network &amp; internet &gt; SIMs|Settings > Network & internet > SIMs/,
      );
    }

    const png = message.parts.find((part) => part.content_type === "image/png");
    assert.ok(png, "an image/png part");
    assert.equal(png.headers.get("content-id"), `<${QR_CODE_CID}>`);
    assert.match(png.headers.get("content-disposition") ?? "", /^inline/);
    assert.ok(html.includes(`src="cid:${QR_CODE_CID}"`), "the HTML shows the inline image");
    // The QR code is deterministic, so equal bytes prove it encodes this order's LPA string.
    assert.deepEqual(png.body, await emailQrCodePng(order.lpa));

    assert.deepEqual(await deliveries(order.order_id), [
      { message_id: `<confirmation.${order.order_id}@esim.example>`, recipient: order.email },
    ]);
    assert.equal(await outboxRow(order.order_id), null, "the row left the outbox with its delivery");
  });

  test("a delivered order is not sent again, even if a row for it reappears", async () => {
    const order = await insertOrder();
    await queue(order.order_id);
    await sweep(deps);
    assert.equal(await sweep(deps), 0, "nothing left to claim");
    // A row from an older release's job, for an order already delivered: dropped, not sent.
    await queue(order.order_id);
    assert.equal(await sweep(deps), 1);
    assert.equal(await outboxRow(order.order_id), null);
    await sleep(200);
    assert.equal(messagesTo(smtp, order.email).length, 1);
    assert.equal((await deliveries(order.order_id)).length, 1);
  });

  test("a temporary SMTP failure keeps the row with its error, due later, and the retry delivers exactly once", async () => {
    const order = await insertOrder();
    await queue(order.order_id);
    smtp.failNext(1);
    assert.equal(await sweep(deps), 1);
    assert.equal(messagesTo(smtp, order.email).length, 0);
    assert.deepEqual(await deliveries(order.order_id), []);
    const failed = await outboxRow(order.order_id);
    assert.ok(failed);
    assert.equal(failed.attempts, 1);
    assert.ok(failed.due_in_s > 1, `due again after a backoff (${failed.due_in_s} s)`);
    assert.match(failed.last_error ?? "", /451/);
    assert.ok(!failed.last_error?.includes(order.email), "the error never carries the address");
    assert.equal(await sweep(deps), 0, "not due yet");

    await makeDue(order.order_id);
    assert.equal(await sweep(deps), 1);
    assert.equal(await sweep(deps), 0);
    assert.equal(messagesTo(smtp, order.email).length, 1);
    assert.equal((await deliveries(order.order_id)).length, 1);
    assert.ok(!log_lines.some((line) => line.includes(order.email) || line.includes("+336")));
  });

  test("two sweeps at once (two processes) send each of 30 emails once, a few at a time", async () => {
    const orders = await Promise.all(Array.from({ length: 30 }, () => insertOrder()));
    for (const order of orders) await queue(order.order_id);
    const claimed = await Promise.all([sweep(deps, 5), sweep(deps, 5)]);
    assert.equal(claimed[0] + claimed[1], 30, `claimed ${claimed.join(" + ")}`);
    for (const order of orders) {
      assert.equal(messagesTo(smtp, order.email).length, 1, order.order_id);
      assert.equal((await deliveries(order.order_id)).length, 1);
    }
  });

  test("deliveries that finish while one is being recorded are recorded together, in one statement", async () => {
    const orders = await Promise.all(Array.from({ length: 40 }, () => insertOrder()));
    for (const order of orders) await queue(order.order_id);
    const counted = countingPool(/insert into email_deliveries/);
    const recorder = new DeliveryRecorder(counted.pool);
    await Promise.all(
      orders.map((order) =>
        recorder.record({
          order_id: order.order_id,
          message_id: `<m.${order.order_id}>`,
          recipient: order.email,
        }),
      ),
    );
    assert.equal(counted.count(), 2, "the first alone, the 39 that came meanwhile together");
    for (const order of orders) {
      assert.deepEqual(await deliveries(order.order_id), [
        { message_id: `<m.${order.order_id}>`, recipient: order.email },
      ]);
      assert.equal(await outboxRow(order.order_id), null, "each row left the outbox with its delivery");
    }
  });

  test("the server's sweep sends a backlog of 120 emails each once, claiming them in batches", async () => {
    const orders = await Promise.all(Array.from({ length: 120 }, () => insertOrder()));
    for (const order of orders) await queue(order.order_id);
    const counted = countingPool(/attempts = e\.attempts \+ 1/);
    const running = startEmailSweep(sweepContext(8, counted.pool), mailer, pino({ level: "silent" }));
    try {
      await smtp.waitFor(smtp.messages.length + 120, 60_000);
      for (const order of orders) await waitForDelivery(order.order_id);
    } finally {
      await running.close();
    }
    await assertSentOnceAndDone(smtp, orders);
    // Up to 8 sends x 4 rounds in flight and queued (a 120 s lease holds four 25 s sends with margin),
    // claimed when fewer than 8 are queued: a few claims, not one per email as the sends free their slots.
    assert.ok(counted.count() <= 120 / 8, `${counted.count()} claims for 120 emails, not one per email`);
  });

  test("an email the relay accepted is not sent again when recording its delivery fails once (a database blip)", async () => {
    // Review (review4): a failed group write rejects every delivery of the batch, and each job's
    // catch then records a *send* failure: the row is due again in e^attempts seconds (2.7 s) and
    // the email, which the relay accepted, goes out a second time (up to a whole batch of them).
    const orders = await Promise.all(Array.from({ length: 3 }, () => insertOrder()));
    for (const order of orders) await queue(order.order_id);
    const blip = failingPool(/insert into email_deliveries/, 1);
    assert.equal(await sweep({ ...deps, pool: blip }), 3);
    for (const order of orders) assert.equal(messagesTo(smtp, order.email).length, 1, "sent once");
    // Time passes (the backoff, or the lease): whatever is due is swept again.
    for (const order of orders) await makeDue(order.order_id);
    await sweep(deps);
    for (const order of orders) {
      assert.equal(messagesTo(smtp, order.email).length, 1, `${order.order_id}: sent again`);
      assert.equal((await deliveries(order.order_id)).length, 1, "its delivery recorded");
      assert.equal(await outboxRow(order.order_id), null, "the row left the outbox");
    }
  });

  test("an order refunded while its claimed email waits in the sweep's queue gets no email", async () => {
    // Review (review4): the server's sweep reads a batch's orders when it claims them and may send
    // the last of them several rounds of sends later (up to 3 x SEND_TIMEOUT_MS); a refund meanwhile
    // cancels the eSIM, yet the email with its QR code goes out from the claim-time copy.
    const order = await insertOrder();
    await queue(order.order_id);
    const jobs = await claimDueConfirmationEmails(deps, 50);
    const job = jobs.find((claimed) => claimed.order_id === order.order_id);
    assert.ok(job, "claimed");
    await releaseConfirmationEmails(
      pool,
      jobs.filter((claimed) => claimed !== job),
    );
    // The refund commits while the job is queued behind sends in flight (a slow relay); the job
    // starts past REREAD_ORDER_AFTER_MS after its claim. (A job started within it sends from the
    // claim's read: a refund in that sub-second window is not seen, as before batching.)
    await pool.query("update orders set status = 'refunded', refunded_at = now() where order_id = $1", [
      order.order_id,
    ]);
    await sleep(REREAD_ORDER_AFTER_MS + 100);
    await job.run();
    await sleep(200);
    assert.equal(messagesTo(smtp, order.email).length, 0, "an email for a refunded order's cancelled eSIM");
    assert.equal(await outboxRow(order.order_id), null, "the row is dropped");
  });

  test("a claim given back unstarted costs no attempt: an email on its last attempt is still sent", async () => {
    // Review (review4): a closing sweep gives back its queued claims, but the claim had counted an
    // attempt; on a row's last attempt the row is then never claimed again, and never sent.
    const order = await insertOrder();
    await queue(order.order_id);
    await pool.query("update email_outbox set attempts = $2 where order_id = $1", [
      order.order_id,
      CONFIRMATION_EMAIL_MAX_ATTEMPTS - 1,
    ]);
    const jobs = await claimDueConfirmationEmails(deps, 50);
    assert.ok(
      jobs.some((job) => job.order_id === order.order_id),
      "claimed",
    );
    // What a closing sweep does with the claims it had not started.
    await releaseConfirmationEmails(pool, jobs);
    assert.equal((await outboxRow(order.order_id))?.attempts, CONFIRMATION_EMAIL_MAX_ATTEMPTS - 1);
    await sweep(deps);
    assert.equal(messagesTo(smtp, order.email).length, 1, "sent on its last attempt");
    assert.equal((await deliveries(order.order_id)).length, 1);
  });

  test("a sweep asked to close starts no new send: what it claimed meanwhile is given back, not sent", async () => {
    // Review (review4): close() waited for the round in progress, which then started sends (as did
    // every send finishing meanwhile): each new send after SIGTERM can outlast the shutdown's grace,
    // and a process killed mid-send is the one window where an email goes out twice.
    const orders = await Promise.all(Array.from({ length: 6 }, () => insertOrder()));
    for (const order of orders) await queue(order.order_id);
    const before = smtp.messages.length;
    // Its first round is claiming when close() is called.
    const running = startEmailSweep(sweepContext(2), mailer, pino({ level: "silent" }));
    await running.close();
    await sleep(200);
    assert.equal(smtp.messages.length - before, 0, "sends started after close() was called");
    const { rows } = await pool.query<{ claimed: number }>(
      `select count(*) filter (where due_at > now() + interval '5 seconds')::int as claimed
       from email_outbox where order_id = any($1::text[])`,
      [orders.map((order) => order.order_id)],
    );
    assert.equal(rows[0]!.claimed, 0, "every claim given back");
    await sweep(deps);
    for (const order of orders) assert.equal(messagesTo(smtp, order.email).length, 1, order.order_id);
  });

  test("a send's slot frees once the relay took the email, not once its delivery is recorded", async () => {
    const orders = await Promise.all(Array.from({ length: 5 }, () => insertOrder()));
    for (const order of orders) await queue(order.order_id);
    // One slot, and every recording 1.5 s late (a pool busy with purchases): the five sends go out
    // one after the other while the first recording still waits.
    const slow = slowPool(/insert into email_deliveries/, 1_500);
    const running = startEmailSweep(sweepContext(1, slow), mailer, pino({ level: "silent" }));
    try {
      await smtp.waitFor(smtp.messages.length + 5, 10_000);
      const { rows } = await pool.query<{ n: number }>(
        "select count(*)::int as n from email_deliveries where order_id = any($1::text[])",
        [orders.map((order) => order.order_id)],
      );
      assert.ok(rows[0]!.n < 4, `${rows[0]!.n} recorded when the fifth was sent: the sends waited for them`);
      for (const order of orders) await waitForDelivery(order.order_id);
    } finally {
      await running.close();
    }
    await assertSentOnceAndDone(smtp, orders);
  });

  test("a sweep that closes gives back the claims it had not started: due at once, not after the lease", async () => {
    const orders = await Promise.all(Array.from({ length: 12 }, () => insertOrder()));
    for (const order of orders) await queue(order.order_id);
    // One send at a time and four claimed: closing right away leaves claimed, unstarted rows.
    const running = startEmailSweep(sweepContext(1), mailer, pino({ level: "silent" }));
    await running.close();
    const { rows } = await pool.query<{ claimed: number; sent: number }>(
      `select count(*) filter (where o.due_at > now() + interval '5 seconds')::int as claimed,
              (select count(*) from email_deliveries d where d.order_id = any($1::text[]))::int as sent
       from email_outbox o where o.order_id = any($1::text[])`,
      [orders.map((order) => order.order_id)],
    );
    assert.equal(rows[0]!.claimed, 0, "no row of ours is left claimed for the lease");
    assert.ok(rows[0]!.sent <= 4, `sent ${rows[0]!.sent}: at most the one batch claimed`);
    // Due now, so the next sweep sends them (and leaves nothing for the next test).
    await sweep(deps);
    for (const order of orders) assert.equal((await deliveries(order.order_id)).length, 1, order.order_id);
  });

  test("a claimed row is not claimed again until its lease runs out", async () => {
    const order = await insertOrder();
    await queue(order.order_id);
    // A sender that claimed the row and died: the claim pushed due_at past the lease.
    await pool.query(
      "update email_outbox set due_at = now() + interval '1 minute', attempts = 1 where order_id = $1",
      [order.order_id],
    );
    assert.equal(await sweep(deps), 0);
    await makeDue(order.order_id);
    assert.equal(await sweep(deps), 1);
    assert.equal(messagesTo(smtp, order.email).length, 1);
  });

  test("a hostile first name is HTML-escaped in the HTML body", async () => {
    const order = await insertOrder({ first_name: `<script>alert("x")</script>` });
    await queue(order.order_id);
    await sweep(deps);
    const [received] = messagesTo(smtp, order.email);
    assert.ok(received);
    const html = partText(parseMessage(received.raw), "text/html");
    assert.ok(!html.includes("<script"), "no script element");
    assert.ok(html.includes("Hello &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;,"));
  });

  test("rows for orders that are not completed new eSIMs fail with their reason and send nothing", async () => {
    const pending = await insertOrder({ status: "pending" });
    const topup = await insertOrder({ type: "topup" });
    await queue(pending.order_id);
    await queue(topup.order_id);
    await sweep(deps);
    assert.match((await outboxRow(pending.order_id))?.last_error ?? "", /is pending, not completed/);
    assert.match((await outboxRow(topup.order_id))?.last_error ?? "", /is a topup order, not esim/);
    assert.equal(messagesTo(smtp, pending.email).length + messagesTo(smtp, topup.email).length, 0);
  });

  test("a row that used all its attempts stays for the operator and is claimed no more", async () => {
    const order = await insertOrder();
    await queue(order.order_id);
    await pool.query("update email_outbox set attempts = $2 where order_id = $1", [
      order.order_id,
      CONFIRMATION_EMAIL_MAX_ATTEMPTS,
    ]);
    assert.equal(await sweep(deps), 0);
    assert.ok(await outboxRow(order.order_id));
    assert.equal(messagesTo(smtp, order.email).length, 0);
  });
});

test("without SMTP_URL the email is written as one .eml file per order under data_dir/mail", async () => {
  const data_dir = await mkdtemp(path.join(tmpdir(), "esim-mail-"));
  const mailer = createMailer({ smtp_url: null, mail_from: "eSIM Orders <orders@esim.example>", data_dir });
  const deps = { pool, mailer, findOrders, log };
  try {
    const order = await insertOrder();
    await queue(order.order_id);
    await sweep(deps);
    // A re-send (the delivery record lost) overwrites the file instead of adding one.
    await pool.query(`delete from email_deliveries where order_id = $1`, [order.order_id]);
    await queue(order.order_id);
    await sweep(deps);

    const mail_dir = path.join(data_dir, "mail");
    assert.deepEqual(await readdir(mail_dir), [`confirmation.${order.order_id}.eml`]);
    const raw = await readFile(path.join(mail_dir, `confirmation.${order.order_id}.eml`), "utf8");
    const message = parseMessage(raw);
    assert.equal(message.headers.get("message-id"), `<confirmation.${order.order_id}@esim.example>`);
    assert.equal(message.headers.get("to"), order.email);
    assert.ok(partText(message, "text/plain").includes(order.lpa));
    assert.ok(message.parts.some((part) => part.content_type === "image/png"));
    assert.equal((await deliveries(order.order_id)).length, 1);
  } finally {
    await mailer.close();
    await rm(data_dir, { recursive: true, force: true });
  }
});

test("the renderer escapes every value in the HTML and keeps the plain text as written", async () => {
  const hostile = `<img src=x onerror="alert('x')">&`;
  const email = await renderConfirmationEmail({
    order_id: "ord_x",
    first_name: hostile,
    package_name: hostile,
    iccid: "8901000000000000001",
    smdp_address: "smdp.esim.example",
    activation_code: hostile,
    start_date: "2026-12-01",
  });
  assert.ok(!email.html.includes("<img src=x"));
  assert.ok(email.html.includes("&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;"));
  assert.ok(email.text.includes(`Hello ${hostile},`));
  assert.ok(email.text.includes("Plan starts: on 2026-12-01"));
});

test("both bodies carry the iOS and Android install links of the eSIM's LPA string, URL-encoded", async () => {
  const email = await renderConfirmationEmail({
    order_id: "ord_links",
    first_name: "Ann",
    package_name: "France 1 GB",
    iccid: "8901000000000000001",
    smdp_address: "smdp.esim.example",
    activation_code: "K2-AB$12",
    start_date: null,
  });
  const card = "LPA%3A1%24smdp.esim.example%24K2-AB%2412";
  for (const url of [
    `https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=${card}`,
    `https://esimsetup.android.com/esim_qrcode_provisioning?carddata=${card}`,
  ]) {
    assert.ok(email.text.includes(url), `text has ${url}`);
    assert.ok(email.html.includes(`<a href="${url}">`), `html links ${url}`);
  }
});

test("without SMTP_URL, twenty emails written side by side are twenty complete .eml files", async () => {
  const data_dir = await mkdtemp(path.join(tmpdir(), "esim-mail-"));
  const mailer = createMailer({ smtp_url: null, mail_from: "eSIM Orders <orders@esim.example>", data_dir });
  try {
    const orders = await Promise.all(Array.from({ length: 20 }, () => insertOrder()));
    for (const order of orders) await queue(order.order_id);
    assert.equal(await sweep({ pool, mailer, findOrders, log }, 20), 20);
    const files = (await readdir(path.join(data_dir, "mail"))).sort();
    assert.deepEqual(files, orders.map((order) => `confirmation.${order.order_id}.eml`).sort());
    for (const order of orders) {
      const raw = await readFile(path.join(data_dir, "mail", `confirmation.${order.order_id}.eml`), "utf8");
      assert.ok(partText(parseMessage(raw), "text/plain").includes(order.lpa));
      assert.equal((await deliveries(order.order_id)).length, 1);
    }
  } finally {
    await mailer.close();
    await rm(data_dir, { recursive: true, force: true });
  }
});
