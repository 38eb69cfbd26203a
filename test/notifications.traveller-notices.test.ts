// Traveller emails with the partner's brand and settings (issue 35 items 4 and 5), end to end:
// two service processes (two notice sweeps racing), the carrier simulator making usage happen
// (POST /v1/sandbox/esims/{iccid}/simulate), a real SMTP server and one PostgreSQL. Asserts on
// what the SMTP server received and on the rows.
import assert from "node:assert/strict";
import { test } from "node:test";
import { markBundlesForNotice } from "../src/esims/mark-bundles-for-notice.ts";
import { queueTravellerNotices } from "../src/notifications/send-traveller-notices.ts";
import { ordersForEmail } from "../src/orders/order-for-email.ts";
import { loadSenders, partnersWithNotices } from "../src/partners/traveller-settings.ts";
import { BRAND_LOGO_CID } from "../src/shared/brand.ts";
import { makePng } from "./support/png.ts";
import { type ParsedMessage, parseMessage, partText, type ReceivedMessage } from "./support/smtp.ts";
import { call, createWorld, newCart, newPartner, submit, waitFor, workerContext } from "./support/world.ts";

const world = await createWorld({ services: 2 });
const api = world.services[0]!.url;
const pool = world.database.pool;
const worker = workerContext(world);

const LOGO = makePng(48, 24);
const BRANDING = {
  display_name: "Wanderlust Trips",
  accent_color: "#ffd700",
  support_email: "help@wanderlust.example",
  support_url: "https://wanderlust.example/help",
  logo_png_base64: LOGO.toString("base64"),
  email_from_name: "Wanderlust eSIM",
  reply_to: "care@wanderlust.example",
};
const TOP_UP = "https://wanderlust.example/top-up?iccid={iccid}";

async function put(key: string, path: string, body: Record<string, unknown>) {
  const answer = await call(api, "PUT", path, { key, body });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
}

async function brandedPartner(notifications: Record<string, unknown>) {
  const partner = await newPartner(api, 500_00, "Wanderlust");
  await put(partner.api_key, "/v1/profile/branding", BRANDING);
  await put(partner.api_key, "/v1/profile/notifications", notifications);
  return partner;
}

async function buy(
  key: string,
  traveller: Record<string, unknown> = {},
): Promise<{ order_id: string; iccid: string }> {
  const bought = await submit(api, key, (await newCart(api, key, "fr-1gb-7d")).cart_key, traveller);
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  return { order_id: bought.body.orderID, iccid: bought.body.purchases[0].iccid };
}

async function useData(key: string, iccid: string, data_mb: number) {
  const answer = await call(api, "POST", `/v1/sandbox/esims/${iccid}/simulate`, {
    key,
    body: { event: "use_data", data_mb },
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
}

/** The carrier's clock a little under a day before the end: both records say so (ours keeps the earliest). */
async function expireWithin23Hours(iccid: string) {
  await pool.query(
    "update carrier_sim.bundles set expires_at = now() + interval '23 hours' where iccid = $1",
    [iccid],
  );
  await pool.query("update esim_bundles set expires_at = now() + interval '23 hours' where iccid = $1", [
    iccid,
  ]);
}

function notices(iccid: string, kind?: "usage_80" | "expires_24h"): ReceivedMessage[] {
  return world.smtp.messages.filter(
    (message) =>
      message.raw.includes("Message-ID: <notice.") &&
      // The localized notice's line (src/travellers/messages/en.json, notice.iccid).
      partText(parseMessage(message.raw), "text/plain").includes(`eSIM (ICCID): ${iccid}`) &&
      (kind === undefined || noticeKind(message) === kind),
  );
}

function noticeKind(message: ReceivedMessage): string {
  // en.json: "Your eSIM plan ends within ... hours" (expires_24h), "You have used ...%" (usage_80).
  return parseMessage(message.raw).headers.get("subject")!.includes("ends within")
    ? "expires_24h"
    : "usage_80";
}

function noticeOf(iccid: string, kind: "usage_80" | "expires_24h"): Promise<ReceivedMessage> {
  return waitFor(`${kind} notice of ${iccid}`, async () => notices(iccid, kind)[0]);
}

async function noticeRows(iccid: string) {
  const { rows } = await pool.query(
    "select kind, status from traveller_notices where iccid = $1 order by kind",
    [iccid],
  );
  return rows as { kind: string; status: string }[];
}

/**
 * The eSIM's notice rows once none is queued: the sweep marks a notice sent after the relay took
 * it, so the SMTP server may hold the message a moment before its row says so (a loaded machine).
 */
function settledNoticeRows(iccid: string) {
  return waitFor(`the notices of ${iccid} settled`, async () => {
    const rows = await noticeRows(iccid);
    return rows.every((row) => row.status !== "queued") ? rows : null;
  });
}

function assertBranded(message: ParsedMessage) {
  assert.match(message.headers.get("from")!, /^Wanderlust eSIM <[^>]+>$/);
  assert.equal(message.headers.get("reply-to"), "care@wanderlust.example");
  const logo = message.parts.find((part) => part.content_type === "image/png" && part.body.equals(LOGO));
  assert.ok(logo, "the logo travels as an inline part");
  assert.equal(logo.headers.get("content-id"), `<${BRAND_LOGO_CID}>`);
  assert.match(logo.headers.get("content-disposition")!, /^inline/);
  const html = partText(message, "text/html");
  assert.ok(html.includes(`src="cid:${BRAND_LOGO_CID}"`));
  assert.ok(!/src="https?:/.test(html), "no remote image");
}

test("the 80% notice goes once, branded, multipart, with the top-up link and one-click unsubscribe", async () => {
  const partner = await brandedPartner({ traveller_usage_emails: true, top_up_url: TOP_UP });
  const { iccid } = await buy(partner.api_key);
  await useData(partner.api_key, iccid, 700); // 68%: nothing yet
  await useData(partner.api_key, iccid, 150); // 850 of 1024 MB: 83%
  // Eight more sweeps at once from this process, racing the two services' own.
  const deps = {
    db: worker.db,
    pool,
    mailer: { send: () => Promise.reject(new Error("unused")), close: async () => undefined },
    partnersWithNotices: (after: string | null, limit: number) =>
      partnersWithNotices(worker.db, after, limit),
    rotation: { after: null },
    markDueBundles: markBundlesForNotice,
    findOrders: (ids: string[]) => ordersForEmail(worker.db, ids, "http://unused.example"),
    findSenders: (ids: string[]) => loadSenders(worker.db, ids),
    public_base_url: "http://unused.example",
    log: { info: () => undefined, warn: () => undefined },
  };
  await Promise.all(Array.from({ length: 8 }, () => queueTravellerNotices(deps, 50)));

  const received = await noticeOf(iccid, "usage_80");
  const message = parseMessage(received.raw);
  assert.equal(message.headers.get("subject"), "You have used 83% of your data: France 1 GB 7 days");
  assertBranded(message);
  assert.match(
    message.headers.get("list-unsubscribe")!,
    /^<http:\/\/[^>]+\/unsubscribe\/[A-Za-z0-9_-]{32}>$/,
  );
  assert.equal(message.headers.get("list-unsubscribe-post"), "List-Unsubscribe=One-Click");
  assert.equal(message.headers.get("content-language"), "en");
  const text = partText(message, "text/plain");
  assert.ok(text.includes(`https://wanderlust.example/top-up?iccid=${iccid}`), text);
  assert.ok(text.includes("You have used 850 MB of the 1 GB in your France 1 GB 7 days plan."), text);
  assert.ok(text.includes("help@wanderlust.example") && text.includes("/unsubscribe/"), text);
  assert.ok(partText(message, "text/html").includes(`iccid=${iccid}`));

  // More usage, and every sweep since: still one row and one email. The barrier: a second eSIM's
  // notice, queued and sent by the same sweeps after this one's bundle was past 80% for rounds.
  await useData(partner.api_key, iccid, 50);
  const second = await buy(partner.api_key);
  await useData(partner.api_key, second.iccid, 900);
  await noticeOf(second.iccid, "usage_80");
  assert.equal(notices(iccid, "usage_80").length, 1);
  assert.deepEqual(await settledNoticeRows(iccid), [{ kind: "usage_80", status: "sent" }]);
});

test("the 24-hour notice goes once the bundle ends within a day; unsubscribed, no more notices", async () => {
  const partner = await brandedPartner({ traveller_usage_emails: true, top_up_url: TOP_UP });
  const { iccid } = await buy(partner.api_key);
  await useData(partner.api_key, iccid, 900);
  const usage = parseMessage((await noticeOf(iccid, "usage_80")).raw);
  const link = /<([^>]+)>/.exec(usage.headers.get("list-unsubscribe")!)![1]!;
  const path = new URL(link).pathname;

  // Opened in a browser, the link shows a button and changes nothing (RFC 8058: never on GET).
  const page = await fetch(`${api}${path}`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<form method="post"/);
  const before = await pool.query(
    "select unsubscribed_at from traveller_notice_subscriptions where iccid = $1",
    [iccid],
  );
  assert.equal(before.rows[0].unsubscribed_at, null);

  // A second eSIM of the same traveller and partner stays subscribed: its 24-hour notice arrives.
  const other = await buy(partner.api_key);
  await useData(partner.api_key, other.iccid, 10);
  await expireWithin23Hours(other.iccid);
  const expiry = parseMessage((await noticeOf(other.iccid, "expires_24h")).raw);
  assert.equal(expiry.headers.get("subject"), "Your eSIM plan ends within 24 hours: France 1 GB 7 days");
  assertBranded(expiry);
  assert.match(partText(expiry, "text/plain"), /ends on [A-Z][a-z]+ \d{1,2}, \d{4} at \d{2}:\d{2} [AP]M UTC/);

  // The one-click POST a mail client sends, no sign-in: then the first eSIM's expiry notice is skipped.
  const posted = await fetch(`${api}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "List-Unsubscribe=One-Click",
  });
  assert.equal(posted.status, 200);
  await expireWithin23Hours(iccid);
  await waitFor("the expiry notice skipped", async () =>
    (await noticeRows(iccid)).some((row) => row.kind === "expires_24h" && row.status === "skipped"),
  );
  assert.equal(notices(iccid, "expires_24h").length, 0);
  assert.deepEqual(await noticeRows(iccid), [
    { kind: "expires_24h", status: "skipped" },
    { kind: "usage_80", status: "sent" },
  ]);
  const unknown = await fetch(`${api}/unsubscribe/${"x".repeat(32)}`, { method: "POST" });
  assert.equal(unknown.status, 404);
});

test("confirmation email off: none is sent, a resend still is, branded; notices off: none queued", async () => {
  const partner = await brandedPartner({ confirmation_email: false });
  const { order_id, iccid } = await buy(partner.api_key);
  // The outbox row is dropped by the sweep, not delivered.
  await waitFor("the confirmation dropped", async () => {
    const { rows } = await pool.query(
      `select (select count(*) from email_outbox where order_id = $1)::int as queued,
              (select count(*) from email_deliveries where order_id = $1)::int as delivered`,
      [order_id],
    );
    return rows[0].queued === 0 ? rows[0] : null;
  });
  assert.equal(world.smtp.messages.filter((m) => m.raw.includes(`<confirmation.${order_id}@`)).length, 0);
  const log = await call(api, "GET", `/v1/orders/${order_id}/emails`, { key: partner.api_key });
  assert.deepEqual(log.body.data, []);

  const resent = await call(api, "POST", `/v1/orders/${order_id}/resend-email`, {
    key: partner.api_key,
    body: {},
  });
  assert.equal(resent.status, 202, JSON.stringify(resent.body));
  const message = await waitFor("the resend", async () =>
    world.smtp.messages.find((m) => m.raw.includes(`<resend.${resent.body.email_id}@`)),
  );
  const parsed = parseMessage(message.raw);
  assert.match(parsed.headers.get("from")!, /^Wanderlust eSIM </);
  assert.equal(parsed.headers.get("reply-to"), "care@wanderlust.example");
  assert.equal(parsed.headers.get("list-unsubscribe"), undefined, "no List-Unsubscribe on a confirmation");

  // traveller_usage_emails stayed false: past 80%, nothing is queued for this partner's eSIM.
  await useData(partner.api_key, iccid, 1000);
  const opted_in = await brandedPartner({ traveller_usage_emails: true });
  const barrier = await buy(opted_in.api_key);
  await useData(opted_in.api_key, barrier.iccid, 1000);
  await noticeOf(barrier.iccid, "usage_80");
  assert.deepEqual(await noticeRows(iccid), []);
  assert.equal(notices(iccid).length, 0);
});

test("confirmation email on: the first confirmation carries the brand's From name and Reply-To", async () => {
  const partner = await brandedPartner({});
  const { order_id } = await buy(partner.api_key);
  const message = await waitFor("the confirmation", async () =>
    world.smtp.messages.find((m) => m.raw.includes(`<confirmation.${order_id}@`)),
  );
  const parsed = parseMessage(message.raw);
  assert.match(parsed.headers.get("from")!, /^Wanderlust eSIM </);
  assert.equal(parsed.headers.get("reply-to"), "care@wanderlust.example");
});

test("a traveller whose address has an internationalised domain gets the 80% notice, sent to its ASCII form", async () => {
  const partner = await brandedPartner({ traveller_usage_emails: true });
  const { iccid } = await buy(partner.api_key, { email: "ana@bücher.example" });
  await useData(partner.api_key, iccid, 850);
  const received = await noticeOf(iccid, "usage_80");
  assert.match(received.raw, /^To: ana@xn--bcher-kva\.example\r$/m);
  assert.deepEqual(await settledNoticeRows(iccid), [{ kind: "usage_80", status: "sent" }]);
});

test("usage jumping from under 80% to the whole allowance between sweeps still sends the 80% notice, once", async () => {
  const partner = await brandedPartner({ traveller_usage_emails: true });
  const { iccid } = await buy(partner.api_key);
  await useData(partner.api_key, iccid, 700); // 68%: nothing yet
  await useData(partner.api_key, iccid, 324); // all 1024 MB at once: the bundle is depleted
  const { rows } = await pool.query("select status from esim_bundles where iccid = $1", [iccid]);
  assert.deepEqual(rows, [{ status: "depleted" }]);
  const message = parseMessage((await noticeOf(iccid, "usage_80")).raw);
  assert.equal(message.headers.get("subject"), "You have used 100% of your data: France 1 GB 7 days");
  assert.ok(partText(message, "text/plain").includes("You have used 1 GB of the 1 GB"));
  assert.deepEqual(await settledNoticeRows(iccid), [{ kind: "usage_80", status: "sent" }]);
});
