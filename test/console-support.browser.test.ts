// Support work in the partner console (issue 32) in headless Chromium against the real service
// process, the carrier simulator, a real SMTP server and PostgreSQL, as one flow: a person with the
// `support` role finds the order by typing the traveller's email in capitals into the Orders
// search, opens it, reads its email log, resends the confirmation to the order's own address and
// to another one (the SMTP server receives both, and the log says sent), reads the refund rules and
// refunds the order (the order becomes refunded, the wallet is credited once, the books balance); a
// `viewer` sees the log and the timeline but no form; the page passes axe-core at desktop and phone
// width.
import assert from "node:assert/strict";
import { test } from "node:test";
import { auditSystem, formatAudit } from "./support/audit.ts";
import { browserForFile, DESKTOP, PHONE, seriousViolations } from "./support/browser.ts";
import { addPerson, signInPage } from "./support/people.ts";
import { balance, buyEsim, call, createWorld, END_USER, waitFor } from "./support/world.ts";

const world = await createWorld();
const base = world.services[0]!.url;
const pool = world.database.pool;
const browser = await browserForFile();

const { partner, order_id, bought } = await buyEsim(base, 100_00);
const paid: number = bought.body.total.amount_minor;
const support = await addPerson(pool, { realm: "partner", role: "support", partner_id: partner.partner_id });
const viewer = await addPerson(pool, { realm: "partner", role: "viewer", partner_id: partner.partner_id });

test("a support person finds the order by the traveller's email in capitals, resends the confirmation and refunds it, in one flow", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInPage(page, base, support);
  // The traveller calls: the support person types their email as they spell it, in capitals, into
  // the Orders search, and opens the one order found.
  await page.getByRole("navigation").getByRole("link", { name: "Orders", exact: true }).click();
  await page.getByLabel("Search", { exact: true }).fill(END_USER.email.toUpperCase());
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForURL(/\/console\/orders\?q=/);
  assert.deepEqual(await page.locator("main table tbody tr td:first-child").allInnerTexts(), [order_id]);
  await page.getByRole("link", { name: order_id }).click();
  await page.waitForURL(new RegExp(`/console/orders/${order_id}$`));
  // The first confirmation is in the log once the sweep sent it.
  await waitFor("the first confirmation sent", async () => {
    await page.reload();
    const row = page.locator("#email-log tbody tr").first();
    return (await row.count()) > 0 && /sent/.test(await row.innerText());
  });
  assert.match(await page.locator("#email-log").innerText(), new RegExp(END_USER.email.replace(".", "\\.")));

  // Left empty, the form sends to the order's own address (its field arrives absent, not empty).
  await page.getByRole("button", { name: "Resend confirmation email" }).click();
  await page.waitForURL(/done=resend/);
  await waitFor("the resend to the order's address at the SMTP server", async () =>
    world.smtp.messages.find(
      (m) => m.envelope.rcpt_to.includes(END_USER.email) && /Message-ID: <resend\.eml_/.test(m.raw),
    ),
  );

  await page.getByLabel(/Send to/).fill("frontdesk@hotel.example");
  await page.getByRole("button", { name: "Resend confirmation email" }).click();
  await page.waitForURL(/done=resend/);
  assert.match(await page.locator(".notice").first().innerText(), /queued/);
  const received = await waitFor("the resend at the SMTP server", async () =>
    world.smtp.messages.find((m) => m.envelope.rcpt_to.includes("frontdesk@hotel.example")),
  );
  assert.match(received.raw, /Message-ID: <resend\.eml_/);
  await waitFor("the log says the resend was sent", async () => {
    await page.reload();
    const rows = await page.locator("#email-log tbody tr").allInnerTexts();
    return rows.some((row) => row.includes("frontdesk@hotel.example") && /sent/.test(row));
  });

  // The rules come before the button, with the verdict for this order.
  const refund = page.locator("#refund");
  assert.match(await refund.innerText(), /never installed[\s\S]*within 30 days/);
  assert.match(await page.locator("#refund-verdict").innerText(), /can be refunded now/);
  const timeline_before = await page.locator("#timeline tbody tr").allInnerTexts();
  assert.ok(timeline_before.some((row) => row.includes("order.completed")));
  const before = await balance(base, partner.api_key);
  await page.getByRole("button", { name: "Refund this order" }).click();
  await page.waitForURL(/done=refund/);
  assert.match(await page.locator(".notice").first().innerText(), /refunded/);
  assert.match(await refund.innerText(), /This order is refunded/);
  assert.equal(await page.getByRole("button", { name: "Refund this order" }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Resend confirmation email" }).count(), 0);

  const order = await call(base, "GET", `/v1/orders/${order_id}`, { key: partner.api_key });
  assert.equal(order.body.status, "refunded");
  assert.equal(await balance(base, partner.api_key), before + paid, "credited exactly what it cost, once");
  await waitFor("the refund on the timeline", async () => {
    await page.reload();
    return (await page.locator("#timeline tbody tr").allInnerTexts()).some((row) =>
      row.includes("order.refunded"),
    );
  });
  const audit = await pool.query(
    "select action, actor_type from audit_log where target_id = $1 order by audit_seq",
    [order_id],
  );
  assert.deepEqual(
    audit.rows.map((row) => row.action),
    ["order.email_resent", "order.email_resent", "order.refunded"],
  );
  const books = await auditSystem({ pool, simulator: world.simulator, smtp: world.smtp });
  assert.deepEqual(books.breaches, [], formatAudit(books));
  await context.close();
});

test("a viewer reads the email log and the timeline but gets no form; the page passes axe-core", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInPage(page, base, viewer);
  await page.goto(`${base}/console/orders/${order_id}`);
  assert.ok((await page.locator("#email-log tbody tr").count()) >= 2);
  assert.ok((await page.locator("#timeline tbody tr").count()) >= 1);
  assert.equal(await page.locator("form[action$='/resend-email']").count(), 0);
  assert.equal(await page.locator("form[action$='/refund']").count(), 0);
  const found: string[] = [];
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    for (const v of await seriousViolations(page)) found.push(`${viewport.width}px: ${v.id} ${v.help}`);
  }
  assert.deepEqual(found, []);
  await context.close();
});
