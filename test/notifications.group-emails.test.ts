// The confirmation emails of group orders (issue 34, contract "Group orders"), end to end: orders
// bought through a real API process (ROLE=api: it sends no email) from the carrier simulator
// process, then the email sweep's own code run here, round by round, against a real SMTP server and
// the one PostgreSQL. A named traveller gets their own email with only their eSIM, once; a group
// without travellers gives the order's address one email with every eSIM, numbered; a resend
// repeats what the completion sent; a notice about a traveller's eSIM goes to that traveller.
import assert from "node:assert/strict";
import { test } from "node:test";
import { markBundlesForNotice } from "../src/esims/mark-bundles-for-notice.ts";
import { createMailer, type Mailer } from "../src/notifications/mailer.ts";
import {
  groupQrCodeCid,
  QR_CODE_CID,
  renderGroupConfirmationEmail,
} from "../src/notifications/render-confirmation-email.ts";
import {
  claimDueConfirmationEmails,
  type SendConfirmationEmailsDeps,
} from "../src/notifications/send-confirmation-emails.ts";
import { claimDueEmailJobs } from "../src/notifications/send-resent-emails.ts";
import {
  queueTravellerNotices,
  sendDueTravellerNotices,
} from "../src/notifications/send-traveller-notices.ts";
import { ordersForEmail } from "../src/orders/order-for-email.ts";
import { loadSenders, partnersWithNotices } from "../src/partners/traveller-settings.ts";
import { DEFAULT_BRAND } from "../src/shared/brand.ts";
import {
  parseMessage,
  partText,
  type ReceivedMessage,
  startSmtpServer,
  type TestSmtpServer,
} from "./support/smtp.ts";
import { call, createWorld, END_USER, type Json, newPartner, workerContext } from "./support/world.ts";

const world = await createWorld({ services: 0 });
const service = await world.startService({ ROLE: "api" });
const api = service.url;
const pool = world.database.pool;
const worker = workerContext(world);
const PUBLIC_BASE_URL = "https://esim.example";
const log = { info: () => undefined, warn: () => undefined };

const mailers: Mailer[] = [];

/** The mailers' connections closed before the relay closes (it waits for open connections). */
async function closeSmtp(smtp: TestSmtpServer): Promise<void> {
  for (const mailer of mailers.splice(0)) await mailer.close();
  await smtp.close();
}

function depsFor(smtp: TestSmtpServer): SendConfirmationEmailsDeps {
  const mailer = createMailer({
    smtp_url: smtp.url,
    mail_from: "eSIM <esim@esim.example>",
    data_dir: "/nonexistent",
  });
  mailers.push(mailer);
  return {
    pool,
    mailer,
    findOrders: (ids) => ordersForEmail(worker.db, ids, PUBLIC_BASE_URL),
    findSenders: (ids) => loadSenders(worker.db, ids),
    log,
  };
}

/** Every due email of the outbox (and resends) claimed and run, until none is left due. */
async function sweep(deps: SendConfirmationEmailsDeps): Promise<void> {
  for (let round = 0; round < 20; round++) {
    const jobs = await claimDueEmailJobs(deps, 8);
    if (jobs.length === 0) return;
    await Promise.all(jobs.map((job) => job.run()));
  }
  throw new Error("the outbox did not drain in 20 rounds");
}

function traveller(n: number, email: string) {
  return { first_name: `Traveller${n}`, last_name: "Lima", email };
}

/** A group of `quantity` eSIMs of fr-1gb-7d bought by a new partner, with `travellers` if given. */
async function buyGroup(quantity: number, travellers?: Json[]) {
  const partner = await newPartner(api, 1_000_00);
  const cart = await call(api, "POST", "/v1/orders/cart", {
    key: partner.api_key,
    body: { package_id: "fr-1gb-7d", quantity },
  });
  assert.equal(cart.status, 201, JSON.stringify(cart.body));
  const body: Json = { cart_key: cart.body.cart_key, ...END_USER };
  if (travellers) body.travellers = travellers;
  const answer = await call(api, "POST", "/v1/orders/submit", { key: partner.api_key, body });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const purchases = answer.body.purchases as { status: string; iccid?: string }[];
  return { partner, order_id: answer.body.orderID as string, iccids: purchases.map((p) => p.iccid ?? null) };
}

/** The messages of this order's first confirmations (Message-ID `confirmation.{order_id}[.n]`). */
function confirmationsOf(smtp: TestSmtpServer, order_id: string): ReceivedMessage[] {
  const pattern = new RegExp(`^Message-ID: <confirmation\\.${order_id}(\\.\\d+)?@`, "im");
  return smtp.messages.filter((message) => pattern.test(message.raw));
}

function textOf(message: ReceivedMessage): string {
  return partText(parseMessage(message.raw), "text/plain");
}

async function installTokenOf(iccid: string): Promise<string> {
  const { rows } = await pool.query<{ install_token: string }>(
    "select install_token from esims where iccid = $1",
    [iccid],
  );
  return rows[0]!.install_token;
}

async function outboxCount(order_id: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    "select count(*)::int as n from email_outbox where order_id = $1",
    [order_id],
  );
  return rows[0]!.n;
}

test("a group of 3 with travellers, one declined: 2 emails, each to its traveller with only its own eSIM", async () => {
  const smtp = await startSmtpServer();
  try {
    const addresses = ["ana@travel.example", "decline@carrier.test", "ben@travel.example"];
    const order = await buyGroup(
      3,
      addresses.map((email, n) => traveller(n, email)),
    );
    const [ana, declined, ben] = order.iccids;
    assert.ok(ana && ben && declined === null, "line 1 declined, lines 0 and 2 made");
    const queued = await call(api, "GET", `/v1/orders/${order.order_id}/emails`, {
      key: order.partner.api_key,
    });
    assert.deepEqual(
      (queued.body.data as Json[]).map((e) => [e.email_id, e.to, e.status]),
      [
        [`confirmation.${order.order_id}`, "ana@travel.example", "queued"],
        [`confirmation.${order.order_id}.2`, "ben@travel.example", "queued"],
      ],
      "queued, each to its traveller",
    );
    await sweep(depsFor(smtp));

    const received = confirmationsOf(smtp, order.order_id);
    assert.equal(received.length, 2, "exactly two emails");
    const to = received.map((message) => message.envelope.rcpt_to).sort();
    assert.deepEqual(
      to,
      [["ana@travel.example"], ["ben@travel.example"]],
      "none to the declined or the order",
    );
    assert.equal(
      smtp.messages.filter((m) =>
        m.envelope.rcpt_to.some((r) => r === END_USER.email || r.includes("decline")),
      ).length,
      0,
    );
    for (const [n, iccid, other, address] of [
      [0, ana, ben, "ana@travel.example"],
      [2, ben, ana, "ben@travel.example"],
    ] as const) {
      const message = received.find((m) => m.envelope.rcpt_to[0] === address)!;
      const parsed = parseMessage(message.raw);
      const text = textOf(message);
      assert.ok(text.startsWith(`Hello Traveller${n},`), text.slice(0, 40));
      assert.ok(text.includes(iccid), "its own eSIM");
      assert.ok(!text.includes(other) && !partText(parsed, "text/html").includes(other), "not the other's");
      assert.ok(text.includes(`${PUBLIC_BASE_URL}/install/${await installTokenOf(iccid)}`), "its own page");
      const expected_key =
        n === 0 ? `confirmation.${order.order_id}@` : `confirmation.${order.order_id}.${n}@`;
      assert.ok(message.raw.includes(`Message-ID: <${expected_key}`), "one Message-ID per email");
      const images = parsed.parts.filter((part) => part.content_type === "image/png");
      assert.deepEqual(
        images.map((part) => part.headers.get("content-id")),
        [`<${QR_CODE_CID}>`],
        "one QR code, the one-eSIM email's",
      );
    }
    const deliveries = await pool.query(
      "select position, recipient from email_deliveries where order_id = $1 order by position",
      [order.order_id],
    );
    assert.deepEqual(deliveries.rows, [
      { position: 0, recipient: "ana@travel.example" },
      { position: 2, recipient: "ben@travel.example" },
    ]);
    assert.equal(await outboxCount(order.order_id), 0);

    // The email log says who got what.
    const emails = await call(api, "GET", `/v1/orders/${order.order_id}/emails`, {
      key: order.partner.api_key,
    });
    assert.equal(emails.status, 200, JSON.stringify(emails.body));
    assert.deepEqual(
      (emails.body.data as Json[]).map((e) => [e.email_id, e.to, e.kind, e.status]),
      [
        [`confirmation.${order.order_id}`, "ana@travel.example", "confirmation", "sent"],
        [`confirmation.${order.order_id}.2`, "ben@travel.example", "confirmation", "sent"],
      ],
    );
  } finally {
    await closeSmtp(smtp);
  }
});

test("a group of 3 without travellers: one email to the order's address with all 3 eSIMs, numbered", async () => {
  const smtp = await startSmtpServer();
  try {
    const order = await buyGroup(3);
    assert.equal(await outboxCount(order.order_id), 1);
    await sweep(depsFor(smtp));
    const received = confirmationsOf(smtp, order.order_id);
    assert.equal(received.length, 1);
    assert.deepEqual(received[0]!.envelope.rcpt_to, [END_USER.email]);
    const parsed = parseMessage(received[0]!.raw);
    const text = textOf(received[0]!);
    for (const [i, iccid] of order.iccids.entries()) {
      assert.ok(iccid && text.includes(iccid), `eSIM ${i + 1}'s ICCID`);
      assert.ok(text.includes(`eSIM ${i + 1} of 3`));
      assert.ok(text.includes(`/install/${await installTokenOf(iccid)}`), "each eSIM's own page");
    }
    const cids = parsed.parts
      .filter((part) => part.content_type === "image/png")
      .map((part) => part.headers.get("content-id"));
    assert.deepEqual(
      cids,
      [1, 2, 3].map((n) => `<${groupQrCodeCid(n)}>`),
      "three QR codes, three Content-IDs",
    );
    const html = partText(parsed, "text/html");
    for (const n of [1, 2, 3]) assert.ok(html.includes(`src="cid:${groupQrCodeCid(n)}"`));
  } finally {
    await closeSmtp(smtp);
  }
});

test("claimed twice at once, and a relay refusal retried: each traveller's email sent and recorded once", async () => {
  const smtp = await startSmtpServer();
  try {
    const addresses = ["cara@travel.example", "dan@travel.example", "eve@travel.example"];
    const order = await buyGroup(
      3,
      addresses.map((email, n) => traveller(n, email)),
    );
    const deps = depsFor(smtp);
    // The relay refuses the first message it reads; two sweeps claim at once (SKIP LOCKED).
    smtp.failNext(1);
    const [a, b] = await Promise.all([
      claimDueConfirmationEmails(deps, 2),
      claimDueConfirmationEmails(deps, 2),
    ]);
    const claimed = [...a, ...b].filter((job) => job.order_id === order.order_id);
    assert.deepEqual(claimed.map((job) => job.position).sort(), [0, 1, 2], "each row claimed by one sweep");
    await Promise.all([...a, ...b].map((job) => job.run()));
    assert.equal(confirmationsOf(smtp, order.order_id).length, 2, "two accepted, one refused");
    const failed = await pool.query<{ position: number; last_error: string }>(
      "select position, last_error from email_outbox where order_id = $1",
      [order.order_id],
    );
    assert.equal(failed.rows.length, 1, "only the refused email stays in the outbox");
    assert.match(failed.rows[0]!.last_error, /451/);
    // Nothing is due before its retry: a sweep now sends nothing.
    await sweep(deps);
    assert.equal(confirmationsOf(smtp, order.order_id).length, 2);
    // Its retry comes due; a delivered row left behind (an older release) is dropped unsent.
    await pool.query("update email_outbox set due_at = now() where order_id = $1", [order.order_id]);
    const delivered = [0, 1, 2].find((p) => p !== failed.rows[0]!.position)!;
    await pool.query("insert into email_outbox (order_id, position) values ($1, $2)", [
      order.order_id,
      delivered,
    ]);
    await sweep(deps);

    const received = confirmationsOf(smtp, order.order_id);
    assert.deepEqual(received.map((m) => m.envelope.rcpt_to[0]).sort(), addresses, "each traveller once");
    for (const [n, address] of addresses.entries()) {
      const text = textOf(received.find((m) => m.envelope.rcpt_to[0] === address)!);
      assert.ok(text.includes(order.iccids[n]!));
      for (const other of order.iccids.filter((_, i) => i !== n)) assert.ok(!text.includes(other!));
    }
    const recorded = await pool.query(
      "select position from email_deliveries where order_id = $1 order by 1",
      [order.order_id],
    );
    assert.deepEqual(
      recorded.rows.map((row) => row.position),
      [0, 1, 2],
    );
    assert.equal(await outboxCount(order.order_id), 0);
  } finally {
    await closeSmtp(smtp);
  }
});

test("a resend of a group: each traveller's own again, counted once; to another address, every eSIM", async () => {
  const smtp = await startSmtpServer();
  try {
    const addresses = ["fay@travel.example", "gus@travel.example"];
    const order = await buyGroup(
      2,
      addresses.map((email, n) => traveller(n, email)),
    );
    const deps = depsFor(smtp);
    await sweep(deps);
    const key = order.partner.api_key;
    const path = `/v1/orders/${order.order_id}/resend-email`;
    const headers = { "Idempotency-Key": `resend-${order.order_id}` };
    const first = await call(api, "POST", path, { key, body: {}, headers });
    assert.equal(first.status, 202, JSON.stringify(first.body));
    const email_ids = first.body.email_ids as string[];
    assert.equal(email_ids.length, 2);
    assert.equal(first.body.email_id, email_ids[0]);
    const replay = await call(api, "POST", path, { key, body: {}, headers });
    assert.equal(replay.status, 202);
    assert.deepEqual(replay.body, first.body, "the replay answers the same resends and queues nothing");
    await sweep(deps);
    const resent = smtp.messages.filter((m) => /^Message-ID: <resend\./im.test(m.raw));
    assert.equal(resent.length, 2);
    for (const [n, address] of addresses.entries()) {
      const message = resent.find((m) => m.envelope.rcpt_to[0] === address)!;
      const text = textOf(message);
      assert.ok(text.startsWith(`Hello Traveller${n},`));
      assert.ok(text.includes(order.iccids[n]!) && !text.includes(order.iccids[1 - n]!));
    }

    // To an address of neither: one email with both eSIMs. The requests so far count 2 of 5.
    const desk = await call(api, "POST", path, { key, body: { email: "desk@agency.example" } });
    assert.equal(desk.status, 202, JSON.stringify(desk.body));
    assert.equal((desk.body.email_ids as string[]).length, 1);
    await sweep(deps);
    const to_desk = smtp.messages.filter((m) => m.envelope.rcpt_to[0] === "desk@agency.example");
    assert.equal(to_desk.length, 1);
    const text = textOf(to_desk[0]!);
    assert.ok(
      text.includes("eSIM 1 of 2") && text.includes(order.iccids[0]!) && text.includes(order.iccids[1]!),
    );
    for (let i = 0; i < 3; i++) assert.equal((await call(api, "POST", path, { key, body: {} })).status, 202);
    const over = await call(api, "POST", path, { key, body: {} });
    assert.equal(over.status, 429, "five requests a day, whatever the number of emails");
    assert.equal(over.body.code, "resend_limit_reached");

    const log = await call(api, "GET", `/v1/orders/${order.order_id}/emails`, { key });
    const kinds = (log.body.data as Json[]).map((e) => [e.kind, e.to]);
    assert.deepEqual(kinds.slice(0, 4), [
      ["confirmation", "fay@travel.example"],
      ["confirmation", "gus@travel.example"],
      ["resend", kinds[2]![1]],
      ["resend", kinds[3]![1]],
    ]);
    assert.deepEqual([kinds[2]![1], kinds[3]![1]].sort(), addresses);
  } finally {
    await closeSmtp(smtp);
  }
});

test("the 24-hour notice of a traveller's eSIM goes to that traveller, with their own install page", async () => {
  const order = await buyGroup(2, [traveller(0, "hal@travel.example"), traveller(1, "ivy@travel.example")]);
  const answer = await call(api, "PUT", "/v1/profile/notifications", {
    key: order.partner.api_key,
    body: { traveller_usage_emails: true },
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const iccid = order.iccids[1]!;
  await pool.query(
    "update esim_bundles set expires_at = now() + interval '23 hours', status = 'active' where iccid = $1",
    [iccid],
  );
  const smtp = await startSmtpServer();
  try {
    const deps = {
      ...depsFor(smtp),
      db: worker.db,
      partnersWithNotices: (after: string | null, limit: number) =>
        partnersWithNotices(worker.db, after, limit),
      rotation: { after: null },
      markDueBundles: markBundlesForNotice,
      findSenders: (ids: string[]) => loadSenders(worker.db, ids),
      public_base_url: PUBLIC_BASE_URL,
    };
    assert.equal(await queueTravellerNotices(deps, 50), 1);
    assert.equal(await sendDueTravellerNotices(deps, 10), 1);
    const notices = smtp.messages.filter((m) => /^Message-ID: <notice\./im.test(m.raw));
    assert.equal(notices.length, 1);
    assert.deepEqual(
      notices[0]!.envelope.rcpt_to,
      ["ivy@travel.example"],
      "the traveller, not the order's address",
    );
    const text = textOf(notices[0]!);
    assert.ok(text.includes("Traveller1"), text.slice(0, 80));
    assert.ok(text.includes(iccid));
    assert.ok(text.includes(`/install/${await installTokenOf(iccid)}`), "the eSIM's own page");
  } finally {
    await closeSmtp(smtp);
  }
});

test("the email of several eSIMs in Arabic: right to left, each numbered in the language, values escaped", async () => {
  const esim = (n: number) => ({
    iccid: `890100000000000000${n}`,
    smdp_address: "smdp.example",
    activation_code: `MATCH-${n}`,
    start_date: null,
    install_page_url: `https://esim.example/install/token-${n}`,
  });
  const email = await renderGroupConfirmationEmail(
    {
      order_id: "ord_rtl",
      first_name: "<b>Ana</b>",
      package_name: "France & co",
      language: "ar",
      esims: [esim(1), esim(2)],
    },
    DEFAULT_BRAND,
  );
  assert.equal(email.language, "ar");
  assert.ok(email.html.includes('<html lang="ar" dir="rtl">'));
  assert.ok(email.html.includes("شريحة eSIM رقم 2 من 2") && email.text.includes("شريحة eSIM رقم 1 من 2"));
  assert.ok(!email.html.includes("<b>Ana</b>") && email.html.includes("&lt;b&gt;Ana&lt;/b&gt;"));
  assert.ok(email.text.includes("<b>Ana</b>"), "the plain text as written");
  for (const n of [1, 2]) {
    assert.ok(email.text.includes(esim(n).iccid) && email.text.includes(`token-${n}`));
  }
  assert.deepEqual(
    email.attachments.map((part) => part.cid),
    [groupQrCodeCid(1), groupQrCodeCid(2)],
  );
  assert.notDeepEqual(
    email.attachments[0]!.content,
    email.attachments[1]!.content,
    "each eSIM its own QR code",
  );
});
