// People in headless Chromium (issue 31) against a real app, SMTP server and PostgreSQL: an owner
// invites a developer from the Team page, the developer follows the emailed link, chooses a name
// and a password and is signed in; the link then refuses a second use; the owner disables the
// developer and the developer's next page is the sign-in page; each role's nav shows only what it
// opens; the Team and People pages pass axe-core at desktop and phone width.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { createTestApp } from "./support/app.ts";
import { browserForFile, DESKTOP, PHONE, seriousViolations } from "./support/browser.ts";
import { addPerson, signInPage, TEST_PASSWORD } from "./support/people.ts";
import { parseMessage, partText, startSmtpServer } from "./support/smtp.ts";

const smtp = await startSmtpServer();
after(() => smtp.close());
const t = await createTestApp({ smtp_url: smtp.url });
const base = await t.app.listen({ port: 0, host: "127.0.0.1" });
t.ctx.config.public_base_url = base;
const browser = await browserForFile();
const partner = await t.createPartner("Browser Team Travel");
const owner = await addPerson(t.database.pool, {
  realm: "partner",
  role: "owner",
  partner_id: partner.partner_id,
});

async function navOf(page: import("playwright-core").Page): Promise<string[]> {
  return page.getByRole("navigation", { name: "Console" }).getByRole("link").allTextContents();
}

test("invited from the Team page, a developer follows the emailed link, chooses a password and is signed in; the link works once; disabled, their next page is sign-in", async () => {
  const ownerContext = await browser.newContext({ viewport: DESKTOP });
  const ownerPage = await ownerContext.newPage();
  await signInPage(ownerPage, base, owner);
  await ownerPage.getByRole("link", { name: "Team" }).click();
  await ownerPage.getByLabel("Email").fill("dev@browser.test");
  await ownerPage.getByLabel("Role", { exact: true }).selectOption("developer");
  const before = smtp.messages.length;
  await ownerPage.getByRole("button", { name: "Send invitation" }).click();
  await ownerPage.getByText("The invitation is sent").waitFor();

  const [message] = (await smtp.waitFor(before + 1)).slice(before);
  assert.deepEqual(message!.envelope.rcpt_to, ["dev@browser.test"]);
  const link = /https?:\/\/\S+\/console\/invitations\/[A-Za-z0-9_-]{43}/.exec(
    partText(parseMessage(message!.raw), "text/plain"),
  )?.[0];
  assert.ok(link);

  const devContext = await browser.newContext({ viewport: PHONE });
  const devPage = await devContext.newPage();
  await devPage.goto(link);
  await devPage.getByLabel("Your name").fill("Dana Developer");
  await devPage.getByLabel("New password").fill("password1234");
  await devPage.getByLabel("The same password again").fill("password1234");
  await devPage.getByRole("button", { name: "Join" }).click();
  await devPage
    .getByRole("alert")
    .getByText(/easy to guess/)
    .waitFor();
  await devPage.getByLabel("New password").fill(TEST_PASSWORD);
  await devPage.getByLabel("The same password again").fill(TEST_PASSWORD);
  await devPage.getByRole("button", { name: "Join" }).click();
  await devPage.waitForURL(`${base}/console`);
  assert.deepEqual(await navOf(devPage), [
    "Overview",
    "Orders",
    "eSIMs",
    "Wallet",
    "API keys",
    "Webhooks",
    "Team",
    "Audit log",
    "Two-factor",
  ]);

  const again = await (await browser.newContext()).newPage();
  const answer = await again.goto(link);
  assert.equal(answer?.status(), 410);
  await again.getByText("already used").waitFor();

  await ownerPage.reload();
  await ownerPage.getByRole("button", { name: "Disable dev@browser.test" }).click();
  await ownerPage.getByText("The person is disabled").waitFor();
  await devPage.getByRole("link", { name: "API keys" }).click();
  await devPage.waitForURL(/\/console\/sign-in\?ended=1$/);
  await ownerContext.close();
  await devContext.close();
});

test("each role's nav lists only the pages it opens", async () => {
  const expected: Array<[realm: "partner" | "operator", role: string, nav: string[]]> = [
    ["partner", "support", ["Overview", "Orders", "eSIMs", "Wallet", "Team", "Two-factor"]],
    ["partner", "finance", ["Overview", "Orders", "eSIMs", "Wallet", "Team", "Two-factor"]],
    [
      "partner",
      "viewer",
      ["Overview", "Orders", "eSIMs", "Wallet", "API keys", "Webhooks", "Team", "Audit log", "Two-factor"],
    ],
    [
      "operator",
      "admin",
      ["Partners", "Pending orders", "Catalog", "Ledger audit", "People", "Audit log", "Two-factor"],
    ],
    ["operator", "support", ["Partners", "Pending orders", "People", "Audit log", "Two-factor"]],
  ];
  for (const [realm, role, nav] of expected) {
    const person = await addPerson(t.database.pool, {
      realm,
      role,
      partner_id: realm === "partner" ? partner.partner_id : null,
    });
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await signInPage(page, base, person);
    assert.deepEqual(await navOf(page), nav, `${realm} ${role}`);
    await context.close();
  }
});

test("the Team and People pages pass axe-core with no serious violation at desktop and phone width", async () => {
  const operator = await addPerson(t.database.pool, { realm: "operator", role: "admin" });
  for (const viewport of [DESKTOP, PHONE]) {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    await signInPage(page, base, owner);
    await page.goto(`${base}/console/team`);
    assert.deepEqual(await seriousViolations(page), [], "Team page");
    await page.goto(`${base}/console/password-reset`);
    assert.deepEqual(await seriousViolations(page), [], "password reset page");
    const opPage = await context.newPage();
    await signInPage(opPage, base, operator);
    await opPage.goto(`${base}/console/admin/people`);
    assert.deepEqual(await seriousViolations(opPage), [], "People page");
    await context.close();
  }
});

test("a forgotten password in the browser: the reset form, the emailed link, a new password, and the old session ended", async () => {
  const person = await addPerson(t.database.pool, {
    realm: "partner",
    role: "support",
    partner_id: partner.partner_id,
    email: "forgetful@browser.test",
  });
  const oldContext = await browser.newContext({ viewport: DESKTOP });
  const oldPage = await oldContext.newPage();
  await signInPage(oldPage, base, person);

  const context = await browser.newContext({ viewport: PHONE });
  const page = await context.newPage();
  await page.goto(`${base}/console/sign-in`);
  await page.getByRole("link", { name: "Forgot your password?" }).click();
  await page.getByLabel("Email").fill(person.email);
  const before = smtp.messages.length;
  await page.getByRole("button", { name: /send/i }).click();
  await page.getByText(/if an account exists/i).waitFor();
  const [message] = (await smtp.waitFor(before + 1)).slice(before);
  assert.deepEqual(message!.envelope.rcpt_to, [person.email]);
  const link = /https?:\/\/\S+\/console\/password-reset\/[A-Za-z0-9_-]{43}/.exec(
    partText(parseMessage(message!.raw), "text/plain"),
  )?.[0];
  assert.ok(link, "a one-use link in the email");
  await page.goto(link);
  const fresh = "Harbour-Compass-91-Meadow";
  await page.getByLabel("New password").fill(fresh);
  await page.getByLabel("The same password again").fill(fresh);
  await page.getByRole("button", { name: /password/i }).click();
  await page.waitForURL(/\/console(\/sign-in\?password_set=1)?$/);
  // The session the person left open elsewhere ended with the reset.
  await oldPage.goto(`${base}/console/orders`);
  assert.match(oldPage.url(), /\/console\/sign-in\?ended=1$/);
  // The new password signs in; the link does not work twice.
  const again = await context.newPage();
  await signInPage(again, base, { ...person, password: fresh });
  assert.equal((await (await context.newPage()).goto(link))?.status(), 410);
  await oldContext.close();
  await context.close();
});
