// The second factor in headless Chromium against the in-process service and a real PostgreSQL: a
// person sets up an authenticator app from the QR code's page (the code computed here from the key
// shown on it), then signs in with a code: a wrong one refused, the same one refused a second time,
// a recovery code taken once; a passkey registered and used to sign in through Chromium's virtual
// authenticator (DevTools protocol), with the pages' own script under their CSP; an operator person
// the same way. The console is opened at `localhost`: WebAuthn refuses an IP address as relying party.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret, TOTP } from "otpauth";
import type { BrowserContext, Page } from "playwright-core";
import { csrfToken } from "../src/people/sessions.ts";
import { createTestApp } from "./support/app.ts";
import { browserForFile, DESKTOP, PHONE, seriousViolations } from "./support/browser.ts";
import { addPerson, type Person } from "./support/people.ts";

const app = await createTestApp();
const listening = await app.app.listen({ port: 0, host: "127.0.0.1" });
const base = listening.replace("127.0.0.1", "localhost");
const partner = await app.createPartner("Passkey Travel");
const browser = await browserForFile({ localhost: true });

const HOME = { partner: "/console", operator: "/console/admin" } as const;

function codeAt(seed: string, steps_ahead = 0): string {
  const totp = new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(seed) });
  return totp.generate({ timestamp: Date.now() + steps_ahead * 30_000 });
}

/** A page that records what the browser says about CSP (a refused script would show up here). */
async function newPage(context: BrowserContext): Promise<{ page: Page; csp: string[] }> {
  const page = await context.newPage();
  const csp: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) csp.push(message.text());
  });
  return { page, csp };
}

/** The password step through the form; the page ends where the console sends the person next. */
async function passwordStep(page: Page, person: Person): Promise<void> {
  const home = `${base}${HOME[person.realm]}`;
  await page.goto(`${home}/sign-in`);
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForLoadState();
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/sign-in\?signed_out=1$/);
}

/** Gives a code on the second-factor page: the status the page came back with. */
async function giveCode(page: Page, code: string): Promise<number> {
  const [answer] = await Promise.all([
    page.waitForResponse(
      (r) => r.request().method() === "POST" && r.url().endsWith("/sign-in/second-factor"),
    ),
    (async () => {
      await page.getByLabel("Code", { exact: true }).fill(code);
      await page.getByRole("button", { name: "Verify" }).click();
    })(),
  ]);
  await page.waitForLoadState();
  return answer.status();
}

async function enrolTotpInBrowser(page: Page, person: Person): Promise<{ seed: string; codes: string[] }> {
  const home = `${base}${HOME[person.realm]}`;
  await page.getByRole("link", { name: "Two-factor" }).click();
  await page.waitForURL(`${home}/account/two-factor`);
  await page.getByRole("button", { name: "Set up an authenticator app" }).click();
  const qr = page.getByAltText("QR code for your authenticator app");
  await qr.waitFor();
  type Img = { complete: boolean; naturalWidth: number };
  // The image loads after the page: wait for it (a broken or refused one never gets a width).
  const loaded = await page
    .waitForFunction(
      (img) => (img as unknown as Img).complete && (img as unknown as Img).naturalWidth > 0,
      await qr.elementHandle(),
      { timeout: 10_000 },
    )
    .then(
      () => true,
      () => false,
    );
  assert.ok(loaded, "the QR code is an image served from this origin");
  const seed = (await page.locator("#totp-secret").innerText()).replaceAll(" ", "");
  assert.match(seed, /^[A-Z2-7]{32}$/);
  await page.getByLabel("Code from the app").fill(codeAt(seed));
  await page.getByRole("button", { name: "Turn on" }).click();
  await page.getByText("The authenticator app is on.").waitFor();
  const codes = await page.getByRole("list", { name: "Recovery codes" }).locator("li").allInnerTexts();
  assert.equal(codes.length, 10);
  assert.deepEqual(await seriousViolations(page), []);
  return { seed, codes };
}

test("TOTP in the browser: enrolled from the QR code's page, then a wrong code refused, a code taken once, a recovery code once", async () => {
  const person = await addPerson(app.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const context = await browser.newContext({ viewport: DESKTOP });
  const { page, csp } = await newPage(context);
  await passwordStep(page, person);
  assert.equal(page.url(), `${base}/console`, "no factor yet: signed in");
  const { seed, codes } = await enrolTotpInBrowser(page, person);
  await page.getByRole("link", { name: "Back to Two-factor sign-in" }).click();
  await signOut(page);

  await passwordStep(page, person);
  assert.equal(page.url(), `${base}/console/sign-in/second-factor`);
  assert.deepEqual(await seriousViolations(page), []);
  assert.equal(await page.getByRole("button", { name: "Use a passkey" }).count(), 0);
  const wrong = codeAt(seed, 1) === "000000" ? "111111" : "000000";
  assert.equal(await giveCode(page, wrong), 401);
  assert.match(await page.getByRole("alert").innerText(), /That code is not right/);
  const code = codeAt(seed, 1);
  assert.equal(await giveCode(page, code), 303);
  assert.equal(page.url(), `${base}/console`);
  await signOut(page);

  await passwordStep(page, person);
  assert.equal(await giveCode(page, code), 401, "the same code a second time");
  assert.equal(await giveCode(page, codes[0]!), 303, "a recovery code instead");
  assert.equal(page.url(), `${base}/console`);
  await signOut(page);
  await passwordStep(page, person);
  assert.equal(await giveCode(page, codes[0]!), 401, "that recovery code is spent");
  assert.deepEqual(csp, [], "nothing was refused by the CSP");
  await context.close();
});

test("a passkey registered and used to sign in through Chromium's virtual authenticator", async () => {
  const person = await addPerson(app.database.pool, {
    realm: "partner",
    role: "support",
    partner_id: partner.partner_id,
  });
  const context = await browser.newContext({ viewport: DESKTOP });
  const { page, csp } = await newPage(context);
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  await passwordStep(page, person);
  await page.getByRole("link", { name: "Two-factor" }).click();
  await page.getByLabel("Name of the new passkey").fill("Test laptop");
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await page.getByText("The passkey is added.").waitFor();
  const codes = await page.getByRole("list", { name: "Recovery codes" }).locator("li").allInnerTexts();
  assert.equal(codes.length, 10, "the first second factor comes with recovery codes");
  const { rows: keys } = await app.database.pool.query(
    "select name, counter, last_used_at from passkeys where user_id = $1",
    [person.user_id],
  );
  assert.equal(keys.length, 1);
  assert.equal(keys[0].name, "Test laptop");
  assert.equal(keys[0].last_used_at, null);
  await page.getByRole("link", { name: "Back to Two-factor sign-in" }).click();
  assert.match(await page.locator("main").innerText(), /Test laptop/);
  await signOut(page);

  await passwordStep(page, person);
  assert.equal(page.url(), `${base}/console/sign-in/second-factor`);
  await page.getByRole("button", { name: "Use a passkey" }).click();
  await page.waitForURL(`${base}/console`);
  const { rows: used } = await app.database.pool.query(
    "select counter, last_used_at from passkeys where user_id = $1",
    [person.user_id],
  );
  assert.ok(used[0].last_used_at, "last use recorded");
  assert.ok(Number(used[0].counter) > Number(keys[0].counter), "the authenticator's counter kept");
  const { rows: audit } = await app.database.pool.query(
    "select action, details from audit_log where target_id = $1 order by audit_seq",
    [person.user_id],
  );
  assert.deepEqual(
    audit.map((r) => `${r.action}${r.details.method ? `:${r.details.method}` : ""}`),
    [
      "user.signed_in:password",
      "user.passkey_added",
      "user.two_factor_enabled:passkey",
      "user.signed_in:passkey",
    ],
  );

  // Removing it: back to no second factor, and the recovery codes go with it.
  await page.goto(`${base}/console/account/two-factor`);
  await page.getByRole("button", { name: "Remove passkey Test laptop" }).click();
  await page.getByText("The passkey is removed.").waitFor();
  const { rows: left } = await app.database.pool.query(
    "select (select count(*)::int from passkeys where user_id = $1) as keys, (select count(*)::int from recovery_codes where user_id = $1) as codes",
    [person.user_id],
  );
  assert.deepEqual(left[0], { keys: 0, codes: 0 });
  assert.deepEqual(csp, [], "nothing was refused by the CSP");
  await context.close();
});

test("an operator person sets up TOTP and signs in with it in the browser", async () => {
  const person = await addPerson(app.database.pool, { realm: "operator", role: "support" });
  const context = await browser.newContext({ viewport: DESKTOP });
  const { page } = await newPage(context);
  await passwordStep(page, person);
  assert.equal(page.url(), `${base}/console/admin`);
  const { seed } = await enrolTotpInBrowser(page, person);
  await signOut(page);
  await passwordStep(page, person);
  assert.equal(page.url(), `${base}/console/admin/sign-in/second-factor`);
  assert.equal(await giveCode(page, codeAt(seed, 1)), 303);
  assert.equal(page.url(), `${base}/console/admin`);
  await context.close();
});

test("a team that requires a second factor: the person adds a passkey on the only page open to them, is signed in, and a captured passkey answer does not sign in again", async () => {
  const strict = await app.createPartner("Strict Passkeys");
  await app.database.pool.query("update partners set require_two_factor = true where partner_id = $1", [
    strict.partner_id,
  ]);
  const person = await addPerson(app.database.pool, {
    realm: "partner",
    role: "finance",
    partner_id: strict.partner_id,
  });
  const context = await browser.newContext({ viewport: PHONE });
  const { page, csp } = await newPage(context);
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  await passwordStep(page, person);
  assert.equal(page.url(), `${base}/console/account/two-factor`);
  assert.match(await page.getByRole("alert").first().innerText(), /Your team requires a second factor/);
  await page.goto(`${base}/console/wallet`);
  assert.equal(page.url(), `${base}/console/account/two-factor`, "every other page sends them back");
  assert.deepEqual(await seriousViolations(page), [], "phone width");
  await page.getByLabel("Name of the new passkey").fill("Phone");
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await page.getByText("The passkey is added.").waitFor();
  await page.getByRole("link", { name: "Continue to the console" }).click();
  await page.waitForURL(`${base}/console`);
  await signOut(page);

  // Signing in with it; the browser's answer is kept to be sent again from a new session.
  await passwordStep(page, person);
  let captured = "";
  page.on("request", (request) => {
    if (request.url().endsWith("/sign-in/second-factor/passkey")) captured = request.postData() ?? "";
  });
  assert.deepEqual(await seriousViolations(page), [], "the second-factor page at phone width");
  await page.getByRole("button", { name: "Use a passkey" }).click();
  await page.waitForURL(`${base}/console`);
  const response = new URLSearchParams(captured).get("response");
  assert.ok(response, "the passkey's answer travelled in the form");
  await signOut(page);

  await passwordStep(page, person);
  const cookie = (await context.cookies(`${base}/console`)).find((c) => c.name === "console_partner")!.value;
  const replayed = await fetch(`${base}/console/sign-in/second-factor/passkey`, {
    method: "POST",
    redirect: "manual",
    headers: {
      cookie: `console_partner=${cookie}`,
      origin: base,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ _csrf: csrfToken(cookie), response }).toString(),
  });
  assert.equal(replayed.status, 401, "an answer to another session's challenge signs nobody in");
  assert.deepEqual(csp, [], "nothing was refused by the CSP");
  await context.close();
});
