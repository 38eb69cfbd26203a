import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type JobHelpers, Logger, run, runMigrations } from "graphile-worker";
import { createKysely, inTransaction } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { createMailer, MailDeliveryError, type Mailer } from "../src/notifications/mailer.ts";
import {
  emailQrCodePng,
  escapeHtml,
  QR_CODE_CID,
  renderConfirmationEmail,
} from "../src/notifications/render-confirmation-email.ts";
import {
  addConfirmationEmailJobSql,
  sendConfirmationEmail,
  sendConfirmationEmailTask,
} from "../src/notifications/send-confirmation-email.ts";
import { orderForEmail } from "../src/orders/order-for-email.ts";
import { lpaString } from "../src/shared/install-kit.ts";
import { createTestDatabase } from "./support/db.ts";
import { parseMessage, partText, startSmtpServer, type TestSmtpServer } from "./support/smtp.ts";

const PACKAGE_ID = "pkg-fr-5gb-30d";
const PACKAGE_NAME = "France 5 GB / 30 days";
const SMDP_ADDRESS = "smdp.sandbox.esim.example";

type TestOrder = { order_id: string; email: string; iccid: string; activation_code: string; lpa: string };

const { pool } = await createTestDatabase();
const db = createKysely<Database>(pool);
/** How the server gives the email job its orders (src/server/worker.ts). */
const findOrder = (order_id: string) => orderForEmail(db, order_id);
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
     values ($1, $2, $3, $4, $5, $6, 'ext-fr-5gb', 30, 450, 'USD', $7, '+33612345678', $8, 'Martin', $9,
             case when $4 = 'pending' then null else now() end)`,
    [order_id, partner_id, type, status, cart_key, PACKAGE_ID, email, first_name, provisioned ? iccid : null],
  );
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
const logger = new Logger(() => (level, message, meta) => {
  log_lines.push(`${level} ${message} ${JSON.stringify(meta ?? {})}`);
});
const helpers = { logger } as unknown as JobHelpers;

async function deliveries(order_id: string) {
  const { rows } = await pool.query<{ message_id: string; recipient: string }>(
    `select message_id, recipient from email_deliveries where order_id = $1`,
    [order_id],
  );
  return rows;
}

function messagesTo(smtp: TestSmtpServer, email: string) {
  return smtp.messages.filter((message) => message.envelope.rcpt_to.includes(email));
}

describe("over SMTP", () => {
  let smtp: TestSmtpServer;
  let mailer: Mailer;
  before(async () => {
    smtp = await startSmtpServer();
    mailer = createMailer({
      smtp_url: smtp.url,
      mail_from: "eSIM Orders <orders@esim.example>",
      data_dir: ".",
    });
  });
  after(async () => {
    await mailer.close();
    await smtp.close();
  });

  test("sends one email to the end user with the LPA string, ICCID, install steps and an inline QR code", async () => {
    const order = await insertOrder();
    await sendConfirmationEmailTask({ pool, mailer, findOrder })({ order_id: order.order_id }, helpers);

    const [received, ...others] = messagesTo(smtp, order.email);
    assert.ok(received);
    assert.equal(others.length, 0);
    assert.deepEqual(received.envelope, { mail_from: "orders@esim.example", rcpt_to: [order.email] });
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
  });

  test("running the task again for a delivered order sends nothing more", async () => {
    const order = await insertOrder();
    const task = sendConfirmationEmailTask({ pool, mailer, findOrder });
    await task({ order_id: order.order_id }, helpers);
    await task({ order_id: order.order_id }, helpers);
    assert.equal(
      await sendConfirmationEmail({ pool, mailer, findOrder }, order.order_id, logger),
      "already_delivered",
    );
    await sleep(200);
    assert.equal(messagesTo(smtp, order.email).length, 1);
    assert.equal((await deliveries(order.order_id)).length, 1);
  });

  test("a temporary SMTP failure throws, records nothing, and the retry delivers exactly once", async () => {
    const order = await insertOrder();
    const task = sendConfirmationEmailTask({ pool, mailer, findOrder });
    smtp.failNext(1);
    await assert.rejects(task({ order_id: order.order_id }, helpers), (error: unknown) => {
      assert.ok(error instanceof MailDeliveryError);
      assert.equal(error.response_code, 451);
      assert.ok(!error.message.includes(order.email), "the error never carries the address");
      return true;
    });
    assert.equal(messagesTo(smtp, order.email).length, 0);
    assert.deepEqual(await deliveries(order.order_id), []);

    await task({ order_id: order.order_id }, helpers);
    await task({ order_id: order.order_id }, helpers);
    assert.equal(messagesTo(smtp, order.email).length, 1);
    assert.equal((await deliveries(order.order_id)).length, 1);
  });

  test("two jobs for the same order at once send one email", async () => {
    const order = await insertOrder();
    const deps = { pool, mailer, findOrder };
    const results = await Promise.allSettled([
      sendConfirmationEmail(deps, order.order_id, logger),
      sendConfirmationEmail(deps, order.order_id, logger),
    ]);
    // One sends; the other finds it delivered, or finds the lock taken and throws to be retried.
    assert.equal(
      results.filter((result) => result.status === "fulfilled" && result.value === "sent").length,
      1,
    );
    assert.equal(await sendConfirmationEmail(deps, order.order_id, logger), "already_delivered");
    assert.equal(messagesTo(smtp, order.email).length, 1);
  });

  test("a hostile first name is HTML-escaped in the HTML body", async () => {
    const order = await insertOrder({ first_name: `<script>alert("x")</script>` });
    await sendConfirmationEmailTask({ pool, mailer, findOrder })({ order_id: order.order_id }, helpers);
    const [received] = messagesTo(smtp, order.email);
    assert.ok(received);
    const html = partText(parseMessage(received.raw), "text/html");
    assert.ok(!html.includes("<script"), "no script element");
    assert.ok(html.includes("Hello &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;,"));
  });

  test("orders that are not completed new eSIMs are refused and get no email", async () => {
    const task = sendConfirmationEmailTask({ pool, mailer, findOrder });
    const pending = await insertOrder({ status: "pending" });
    await assert.rejects(task({ order_id: pending.order_id }, helpers), /is pending, not completed/);
    const topup = await insertOrder({ type: "topup" });
    await assert.rejects(task({ order_id: topup.order_id }, helpers), /is a topup order, not esim/);
    await assert.rejects(task({ order_id: "ord_unknown" }, helpers), /not found/);
    assert.equal(messagesTo(smtp, pending.email).length + messagesTo(smtp, topup.email).length, 0);
  });

  test("a malformed payload is refused", async () => {
    const task = sendConfirmationEmailTask({ pool, mailer, findOrder });
    await assert.rejects(task({}, helpers), /payload must be/);
    await assert.rejects(task(null, helpers), /payload must be/);
    await assert.rejects(task({ order_id: "../../etc/passwd" }, helpers), /order_id must be/);
  });

  test("the job added with addConfirmationEmailJobSql is run by graphile-worker, retried, and delivered once", async () => {
    const order = await insertOrder();
    const task = sendConfirmationEmailTask({ pool, mailer, findOrder });
    const runner = await run({
      pgPool: pool,
      taskList: { send_confirmation_email: task },
      concurrency: 1,
      pollInterval: 100,
      noHandleSignals: true,
      logger,
    });
    try {
      smtp.failNext(1);
      // Added twice, as a retried completion might: the job_key keeps it to one job.
      await inTransaction(pool, (client) => addConfirmationEmailJobSql(client, order.order_id));
      await inTransaction(pool, (client) => addConfirmationEmailJobSql(client, order.order_id));
      // The first attempt meets the 451; graphile-worker retries after exp(1) s.
      await waitUntil(async () => (await deliveries(order.order_id)).length === 1, 15_000);
      await waitUntil(async () => (await jobsFor(order.order_id)) === 0, 5_000);
    } finally {
      await runner.stop();
    }
    assert.equal(messagesTo(smtp, order.email).length, 1);
    assert.ok(
      log_lines.some((line) => line.includes("Failed task")),
      "the failed first attempt is logged",
    );
    assert.ok(!log_lines.some((line) => line.includes(order.email) || line.includes("+336")));
  });

  test("a job added in a transaction that rolls back does not exist", async () => {
    await runMigrations({ pgPool: pool, logger });
    const order = await insertOrder();
    await assert.rejects(
      inTransaction(pool, async (client) => {
        await addConfirmationEmailJobSql(client, order.order_id);
        throw new Error("order completion failed");
      }),
      /order completion failed/,
    );
    assert.equal(await jobsFor(order.order_id), 0);
  });
});

async function jobsFor(order_id: string): Promise<number> {
  const { rows } = await pool.query<{ count: number }>(
    `select count(*)::int as count from graphile_worker.jobs where key = $1`,
    [`confirmation-email:${order_id}`],
  );
  return rows[0]?.count ?? 0;
}

async function waitUntil(condition: () => Promise<boolean>, timeout_ms: number): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeout_ms} ms`);
    await sleep(50);
  }
}

test("the job SQL adds one job per order with 25 attempts, however often it is added", async () => {
  await runMigrations({ pgPool: pool, logger });
  const order = await insertOrder();
  for (let attempt = 0; attempt < 3; attempt += 1) {
    await inTransaction(pool, (client) => addConfirmationEmailJobSql(client, order.order_id));
  }
  // The payload is only in the private table; the public jobs view leaves it out.
  const { rows } = await pool.query(
    `select t.identifier as task_identifier, j.payload, j.max_attempts, j.revision
     from graphile_worker._private_jobs j
     join graphile_worker._private_tasks t on t.id = j.task_id
     where j.key = $1`,
    [`confirmation-email:${order.order_id}`],
  );
  assert.deepEqual(rows, [
    {
      task_identifier: "send_confirmation_email",
      payload: { order_id: order.order_id },
      max_attempts: 25,
      revision: 2,
    },
  ]);
});

test("without SMTP_URL the email is written as one .eml file per order under data_dir/mail", async () => {
  const data_dir = await mkdtemp(path.join(tmpdir(), "esim-mail-"));
  const mailer = createMailer({ smtp_url: null, mail_from: "eSIM Orders <orders@esim.example>", data_dir });
  try {
    const order = await insertOrder();
    await sendConfirmationEmail({ pool, mailer, findOrder }, order.order_id, logger);
    // A re-send (the delivery record lost) overwrites the file instead of adding one.
    await pool.query(`delete from email_deliveries where order_id = $1`, [order.order_id]);
    await sendConfirmationEmail({ pool, mailer, findOrder }, order.order_id, logger);

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
