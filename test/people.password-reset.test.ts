// Password reset (issue 31) over real HTTP, real SMTP and PostgreSQL: the form answers the same for
// any email; a known one gets a one-use link (1 hour) that sets a new password and ends every
// session of the person; the form is throttled per account so an inbox cannot be flooded.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { sql } from "kysely";
import { createTestApp } from "./support/app.ts";
import { addPerson, signInCookie } from "./support/people.ts";
import { parseMessage, partText, startSmtpServer } from "./support/smtp.ts";

const smtp = await startSmtpServer();
after(() => smtp.close());
const t = await createTestApp({ smtp_url: smtp.url });
const base = await t.app.listen({ port: 0, host: "127.0.0.1" });
t.ctx.config.public_base_url = base;
const NEW_PASSWORD = "Harbour-Violin-92-Meadow";

function form(path: string, fields: Record<string, string>) {
  return fetch(`${base}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams(fields).toString(),
  });
}

/** The page's main content, without anything that differs per request. */
async function mainOf(answer: Response): Promise<string> {
  const text = await answer.text();
  return /<main[\s\S]*<\/main>/.exec(text)?.[0] ?? text;
}

test("the reset form answers the same for a known and an unknown email; only the known one gets a link", async () => {
  const partner = await t.createPartner("Reset Travel");
  const person = await addPerson(t.database.pool, {
    realm: "partner",
    role: "finance",
    partner_id: partner.partner_id,
  });
  const before = smtp.messages.length;
  const known = await form("/console/password-reset", { email: person.email });
  const unknown = await form("/console/password-reset", { email: "nobody@reset.test" });
  const odd = await form("/console/password-reset", { email: "nobody\u0000@reset.test" });
  assert.equal(odd.status, 200, "a NUL in the email is an unknown email, not an error");
  assert.equal(known.status, 200);
  assert.equal(unknown.status, 200);
  const unknownPage = await mainOf(unknown);
  assert.equal(await mainOf(known), unknownPage);
  assert.equal(await mainOf(odd), unknownPage);
  const messages = await smtp.waitFor(before + 1);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(smtp.messages.length, before + 1, "one email, to the known address");
  assert.deepEqual(messages[before]!.envelope.rcpt_to, [person.email]);
});

test("a reset link sets a new password once and ends every session of the person", async () => {
  const partner = await t.createPartner("Reset Sessions Travel");
  const person = await addPerson(t.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const laptop = await signInCookie(base, person);
  const phone = await signInCookie(base, person);
  const before = smtp.messages.length;
  assert.equal((await form("/console/password-reset", { email: person.email.toUpperCase() })).status, 200);
  const [message] = (await smtp.waitFor(before + 1)).slice(before);
  const text = partText(parseMessage(message!.raw), "text/plain");
  const link = /https?:\/\/\S+\/console\/password-reset\/[A-Za-z0-9_-]{43}/.exec(text)?.[0];
  assert.ok(link, text);
  const path = new URL(link).pathname;
  assert.equal((await fetch(`${base}${path}`)).status, 200);

  const weak = await form(path, { password: "short", confirm: "short" });
  assert.equal(weak.status, 400);
  const done = await form(path, { password: NEW_PASSWORD, confirm: NEW_PASSWORD });
  assert.equal(done.status, 303);
  assert.equal(done.headers.get("location"), "/console/sign-in?password_set=1");
  for (const cookie of [laptop, phone]) {
    const page = await fetch(`${base}/console/team`, {
      redirect: "manual",
      headers: { cookie: `console_partner=${cookie}` },
    });
    assert.equal(page.status, 303, "every earlier session ended");
  }
  const twice = await form(path, { password: NEW_PASSWORD, confirm: NEW_PASSWORD });
  assert.equal(twice.status, 410);
  assert.ok(await signInCookie(base, { ...person, password: NEW_PASSWORD }));
  const old = await fetch(`${base}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams({ email: person.email, password: person.password }).toString(),
  });
  assert.equal(old.status, 401, "the old password no longer works");
  const { rows } = await sql<{ action: string; actor_id: string }>`
    select action, actor_id from audit_log where target_id = ${person.user_id}
      and action in ('user.password_reset_requested', 'user.password_changed') order by created_at`.execute(
    t.db,
  );
  assert.deepEqual(
    rows.map((r) => r.action),
    ["user.password_reset_requested", "user.password_changed"],
  );
  assert.ok(rows.every((r) => r.actor_id === person.user_id));
});

test("an expired reset link is refused; the operator's reset works the same at /console/admin", async () => {
  const operator = await addPerson(t.database.pool, { realm: "operator", role: "finance" });
  const before = smtp.messages.length;
  await form("/console/admin/password-reset", { email: operator.email });
  const [message] = (await smtp.waitFor(before + 1)).slice(before);
  const text = partText(parseMessage(message!.raw), "text/plain");
  const path = new URL(/https?:\/\/\S+/.exec(text)![0]).pathname;
  assert.match(path, /^\/console\/admin\/password-reset\//);
  await sql`update user_tokens set expires_at = now() - interval '1 second' where user_id = ${operator.user_id}`.execute(
    t.db,
  );
  const late = await form(path, { password: NEW_PASSWORD, confirm: NEW_PASSWORD });
  assert.equal(late.status, 410);
  assert.match(await late.text(), /expired/);
});

test("asking again and again sends at most 3 links an hour to one account, and answers the same", async () => {
  const partner = await t.createPartner("Flood Travel");
  const person = await addPerson(t.database.pool, {
    realm: "partner",
    role: "viewer",
    partner_id: partner.partner_id,
  });
  const before = smtp.messages.length;
  for (let i = 0; i < 6; i++)
    assert.equal((await form("/console/password-reset", { email: person.email })).status, 200);
  await smtp.waitFor(before + 3);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const to = smtp.messages.slice(before).filter((m) => m.envelope.rcpt_to.includes(person.email));
  assert.equal(to.length, 3);
});
