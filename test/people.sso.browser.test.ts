// Single sign-on (issue 31) end to end: the service on a real port (SSO_ALLOW_PRIVATE_NETWORKS on,
// as tests need), a real OpenID provider (oidc-provider) on another loopback port, and headless
// Chromium going /console/sign-in -> Sign in with SSO -> the provider's login and consent pages ->
// back in the console. The owner sets the provider up through the console's own form.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { csrfToken } from "../src/people/sessions.ts";
import { addUser, findUserByEmail } from "../src/people/users.ts";
import { createTestApp } from "./support/app.ts";
import { browserForFile, DESKTOP, PHONE, seriousViolations } from "./support/browser.ts";
import { startOidcProvider } from "./support/oidc-provider.ts";
import { addPerson, signInCookie, signInPage } from "./support/people.ts";

const app = await createTestApp({ sso_allow_private_networks: true });
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });
const provider = await startOidcProvider(`${base}/console/sso/callback`);
const browser = await browserForFile();

const partner = await app.createPartner("SSO Travel", 0);
const DOMAIN = "sso-travel.test";
// The owner's own address is at the domain the team vouches for (a team vouches only for those).
const owner = await addPerson(app.database.pool, {
  realm: "partner",
  role: "owner",
  partner_id: partner.partner_id,
  email: `owner@${DOMAIN}`,
});

/** A console form POSTed as the signed-in person's browser would: same origin, the session's CSRF token. */
async function postForm(session_id: string, path: string, fields: Record<string, string>): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: base,
      cookie: `console_partner=${session_id}`,
    },
    body: new URLSearchParams({ ...fields, _csrf: csrfToken(session_id) }).toString(),
  });
}

async function auditActions(
  partner_id: string,
): Promise<Array<{ action: string; target_id: string | null; details: Record<string, unknown> }>> {
  const result = await app.database.pool.query(
    "select action, target_id, details from audit_log where partner_id = $1 order by audit_seq",
    [partner_id],
  );
  return result.rows;
}

const ownerSession = await signInCookie(base, owner);
const saved = await postForm(ownerSession, "/console/team/sso", {
  issuer: provider.issuer,
  client_id: provider.client_id,
  client_secret: provider.client_secret,
  domains: `${DOMAIN.toUpperCase()}\n`,
});
assert.equal(saved.status, 303, await saved.text());

/**
 * Chromium through the whole flow: the email typed at the console, `login` at the provider. With
 * `tamper`, the provider's redirect back is rewritten first (the consent form's answer is taken
 * over: Playwright routes only the first request of a redirect chain).
 */
async function signInWithSso(
  page: Page,
  email: string,
  login = email,
  tamper?: (callback: URL) => void,
): Promise<void> {
  if (tamper) {
    await page.route(`${provider.issuer}/interaction/**`, async (route) => {
      if (route.request().method() !== "POST" || !route.request().postData()?.includes("prompt=consent"))
        return route.continue();
      const consented = await route.fetch({ maxRedirects: 0 });
      const resume = new URL(consented.headers().location!, provider.issuer);
      const answered = await page.context().request.get(resume.href, { maxRedirects: 0 });
      const callback = new URL(answered.headers().location!);
      tamper(callback);
      await route.fulfill({ status: 303, headers: { location: callback.href } });
    });
  }
  await page.goto(`${base}/console/sign-in`);
  await page.getByRole("link", { name: "Sign in with SSO" }).click();
  await page.getByLabel("Work email").fill(email);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL(`${provider.issuer}/**`);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("anything");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL((url) => url.origin === base);
  if (tamper) await page.unrouteAll();
}

test("the owner's settings are kept with the secret sealed, shown without it, and audited", async () => {
  const page = await fetch(`${base}/console/team/sso`, {
    headers: { cookie: `console_partner=${ownerSession}` },
  });
  assert.equal(page.status, 200);
  const body = await page.text();
  assert.match(body, new RegExp(DOMAIN.replaceAll(".", "\\.")));
  assert.ok(body.includes(provider.issuer));
  assert.ok(!body.includes(provider.client_secret), "the secret is never shown");
  assert.ok(body.includes(`${base}/console/sso/callback`), "the redirect URI to register");
  const row = await app.database.pool.query(
    "select client_secret_sealed from sso_connections where partner_id = $1",
    [partner.partner_id],
  );
  assert.ok(!row.rows[0].client_secret_sealed.toString("latin1").includes(provider.client_secret));
  const audited = (await auditActions(partner.partner_id)).filter((a) => a.action === "team.sso_updated");
  assert.equal(audited.length, 1);
  assert.deepEqual(audited[0]!.details.domains, [DOMAIN]);
  assert.ok(!JSON.stringify(audited[0]!.details).includes(provider.client_secret));
});

test("a new person of a vouched-for domain signs in with SSO in Chromium and joins as a viewer", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const email = `new.person@${DOMAIN}`;
  await signInWithSso(page, email);
  assert.equal(page.url(), `${base}/console`);
  assert.match(
    await page.locator("header").innerText(),
    new RegExp(`${email.replaceAll(".", "\\.")} \\(viewer\\)`),
  );
  const user = await findUserByEmail(app.db, "partner", email);
  assert.ok(user);
  assert.equal(user.partner_id, partner.partner_id);
  assert.equal(user.role, "viewer");
  assert.equal(user.status, "active");
  assert.equal(user.password_hash, null, "no password: SSO vouched for them");
  const actions = (await auditActions(partner.partner_id)).filter((a) => a.target_id === user.user_id);
  assert.deepEqual(
    actions.map((a) => a.action),
    ["user.joined_via_sso", "user.signed_in"],
  );
  assert.equal(actions[1]!.details.method, "sso");
  const cookies = await context.cookies(base);
  assert.ok(
    !cookies.some((c) => c.name === "console_sso" && c.value !== ""),
    "the attempt cookie is cleared",
  );
  await context.close();
});

test("an invited person keeps the role the owner gave (support) and becomes active without a password", async () => {
  const email = `invited.agent@${DOMAIN}`;
  const invited = await addUser(app.db, {
    realm: "partner",
    partner_id: partner.partner_id,
    email,
    role: "support",
  });
  assert.ok(invited);
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInWithSso(page, email.toUpperCase(), email);
  assert.equal(page.url(), `${base}/console`);
  const user = await findUserByEmail(app.db, "partner", email);
  assert.equal(user?.user_id, invited.user_id);
  assert.equal(user?.role, "support");
  assert.equal(user?.status, "active");
  const actions = (await auditActions(partner.partner_id)).filter((a) => a.target_id === invited.user_id);
  assert.deepEqual(
    actions.map((a) => [a.action, a.details.via ?? a.details.method]),
    [
      ["user.invitation_accepted", "sso"],
      ["user.signed_in", "sso"],
    ],
  );
  await context.close();
});

test("an active person with a password signs in with SSO as themselves: same role, password kept, no second account", async () => {
  const email = `active.dev@${DOMAIN}`;
  const person = await addPerson(app.database.pool, {
    realm: "partner",
    role: "developer",
    partner_id: partner.partner_id,
    email,
  });
  const before = await findUserByEmail(app.db, "partner", email);
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInWithSso(page, email);
  assert.equal(page.url(), `${base}/console`);
  assert.match(await page.locator("header").innerText(), /\(developer\)/);
  const after_sign_in = await findUserByEmail(app.db, "partner", email);
  assert.equal(after_sign_in?.user_id, person.user_id);
  assert.equal(after_sign_in?.password_hash, before?.password_hash);
  assert.ok(after_sign_in?.last_sign_in_at, "the sign-in is recorded");
  const count = await app.database.pool.query(
    "select count(*)::int as n from users where lower(email) = $1",
    [email],
  );
  assert.equal(count.rows[0].n, 1);
  await context.close();
});

test("an email of a domain the partner does not vouch for is refused, and nobody is created", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  // The console is asked for a vouched-for address; the provider answers with another domain's.
  await signInWithSso(page, `someone@${DOMAIN}`, "someone@elsewhere.test");
  assert.match(page.url(), /\/console\/sso\/callback\?/);
  assert.match(await page.locator("h1").innerText(), /domain is not vouched for/);
  assert.match(await page.locator("main").innerText(), /elsewhere\.test/);
  assert.equal(await findUserByEmail(app.db, "partner", "someone@elsewhere.test"), null);
  const failed = (await auditActions(partner.partner_id)).filter((a) => a.action === "user.sign_in_failed");
  assert.deepEqual(failed.at(-1)?.details, {
    realm: "partner",
    method: "sso",
    reason: "domain_not_vouched_for",
  });
  // And the console's own form refuses a domain without SSO before any provider is asked.
  await page.goto(`${base}/console/sso`);
  await page.getByLabel("Work email").fill("someone@elsewhere.test");
  await page.getByRole("button", { name: "Continue" }).click();
  assert.match(await page.locator(".notice.error").innerText(), /not set up for elsewhere\.test/);
  await context.close();
});

test("an email the provider does not say is verified is refused", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInWithSso(page, `unverified@${DOMAIN}`);
  assert.match(await page.locator("h1").innerText(), /Email not verified/);
  assert.equal(await findUserByEmail(app.db, "partner", `unverified@${DOMAIN}`), null);
  await context.close();
});

test("a tampered state is refused, and so is a callback replayed after a sign-in", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const email = `tamper@${DOMAIN}`;
  await signInWithSso(page, email, email, (callback) => {
    callback.searchParams.set("state", `${callback.searchParams.get("state")}x`);
  });
  assert.match(page.url(), /\/console\/sso\/callback\?/);
  assert.match(await page.locator("h1").innerText(), /answer was refused/);
  assert.equal(await findUserByEmail(app.db, "partner", email), null);
  assert.equal(
    (await context.cookies(base)).some((c) => c.name === "console_partner"),
    false,
    "no session",
  );

  await context.close();

  // The provider's answer as it was given, with the attempt's cookie, once more: the attempt is spent.
  const again = await browser.newContext({ viewport: DESKTOP });
  const second = await again.newPage();
  let replay: { url: string; cookie: string } | null = null;
  second.on("request", async (request) => {
    if (!request.url().startsWith(`${base}/console/sso/callback?`)) return;
    replay = { url: request.url(), cookie: (await request.allHeaders()).cookie ?? "" };
  });
  await signInWithSso(second, email);
  assert.equal(second.url(), `${base}/console`);
  const captured = replay as { url: string; cookie: string } | null;
  assert.ok(
    captured && /console_sso=[A-Za-z0-9_-]{43}/.test(captured.cookie),
    "the callback carried the attempt cookie",
  );
  const replayed = await fetch(captured.url, { redirect: "manual", headers: { cookie: captured.cookie } });
  assert.equal(replayed.status, 403);
  assert.match(await replayed.text(), /This sign-in has expired/, "an attempt completes once");
  await again.close();
});

test("the sign-in page keeps one Email field and one Sign in button; the SSO pages pass axe at desktop and phone width", async () => {
  for (const viewport of [DESKTOP, PHONE]) {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    await page.goto(`${base}/console/sign-in`);
    assert.equal(await page.getByLabel("Email").count(), 1, "the password form's helpers stay unambiguous");
    assert.equal(await page.getByRole("button", { name: "Sign in" }).count(), 1);
    await page.getByRole("link", { name: "Sign in with SSO" }).click();
    await page.waitForURL(`${base}/console/sso`);
    assert.deepEqual(await seriousViolations(page), [], "/console/sso");
    await signInPage(page, base, owner);
    await page.goto(`${base}/console/team/sso`);
    assert.match(await page.locator("main").innerText(), /Single sign-on is on for sso-travel\.test/);
    assert.deepEqual(await seriousViolations(page), [], "/console/team/sso");
    await context.close();
  }
});

test("a disabled person is refused", async () => {
  const email = `disabled.person@${DOMAIN}`;
  const person = await addPerson(app.database.pool, {
    realm: "partner",
    role: "developer",
    partner_id: partner.partner_id,
    email,
  });
  await app.database.pool.query("update users set status = 'disabled' where user_id = $1", [person.user_id]);
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInWithSso(page, email);
  assert.match(await page.locator("h1").innerText(), /disabled/);
  const failed = (await auditActions(partner.partner_id)).filter(
    (a) => a.action === "user.sign_in_failed" && a.target_id === person.user_id,
  );
  assert.equal(failed.length, 1);
  assert.equal(failed[0]!.details.reason, "user_disabled");
  assert.equal(
    (await context.cookies(base)).some((c) => c.name === "console_partner"),
    false,
  );
  await context.close();
});

test("a person of another partner with that email is refused", async () => {
  const other = await app.createPartner("Other Travel", 0);
  const email = `moonlighter@${DOMAIN}`;
  await addPerson(app.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: other.partner_id,
    email,
  });
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInWithSso(page, email);
  assert.match(await page.locator("h1").innerText(), /belongs to another team/);
  const user = await findUserByEmail(app.db, "partner", email);
  assert.equal(user?.partner_id, other.partner_id);
  const failed = (await auditActions(partner.partner_id)).filter((a) => a.action === "user.sign_in_failed");
  assert.equal(failed.at(-1)?.details.reason, "user_of_another_team");
  assert.equal(failed.at(-1)?.target_id, null, "another team's person is not named in this team's log");
  assert.equal(
    (await auditActions(other.partner_id)).filter((a) => a.action === "user.sign_in_failed").length,
    0,
  );
  await context.close();
});
