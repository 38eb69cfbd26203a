// Invitations (issue 31) over real HTTP, real SMTP and PostgreSQL: the operator API invites
// (201/404/400/409), the email carries a one-time link, the link asks for a name and a password,
// signs the person in, and works once; an expired link is refused; the CLI prints a working link.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { sql } from "kysely";
import { createTestApp } from "./support/app.ts";
import { runCli } from "./support/cli.ts";
import { addPerson, signInCookie, TEST_PASSWORD } from "./support/people.ts";
import { parseMessage, partText, startSmtpServer } from "./support/smtp.ts";

const smtp = await startSmtpServer();
after(() => smtp.close());
const t = await createTestApp({ smtp_url: smtp.url });
const base = await t.app.listen({ port: 0, host: "127.0.0.1" });
t.ctx.config.public_base_url = base;
const admin = { authorization: `Bearer ${t.ctx.config.admin_token}`, "content-type": "application/json" };

async function invite(partner_id: string, body: unknown) {
  const answer = await fetch(`${base}/admin/partners/${partner_id}/users`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify(body),
  });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

/** The link in the newest email to `to` (text part), waiting for it over SMTP. */
async function linkMailedTo(to: string, count_before: number): Promise<string> {
  const messages = await smtp.waitFor(count_before + 1);
  const message = messages.slice(count_before).find((m) => m.envelope.rcpt_to.includes(to));
  assert.ok(message, `an email to ${to}`);
  const text = partText(parseMessage(message.raw), "text/plain");
  const link = /https?:\/\/\S+/.exec(text)?.[0];
  assert.ok(link, `a link in: ${text}`);
  return link;
}

function form(fields: Record<string, string>, cookie?: string) {
  return {
    method: "POST",
    redirect: "manual" as const,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: base,
      ...(cookie ? { cookie } : {}),
    },
    body: new URLSearchParams(fields).toString(),
  };
}

async function auditCount(action: string, target_id: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from audit_log where action = ${action} and target_id = ${target_id}`.execute(
    t.db,
  );
  return rows[0]!.n;
}

test("the operator API invites a person: 201 invited, listed, emailed a link; unknown partner 404, bad input 400, a second time 409", async () => {
  const partner = await t.createPartner("Invite Travel");
  const before = smtp.messages.length;
  const created = await invite(partner.partner_id, { email: "dev@invite.test", role: "developer" });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.status, "invited");
  assert.equal(created.body.role, "developer");
  assert.equal(created.body.two_factor, "none");
  assert.match(String(created.body.user_id), /^usr_/);
  const link = await linkMailedTo("dev@invite.test", before);
  assert.ok(link.startsWith(`${base}/console/invitations/`), link);
  assert.equal(await auditCount("user.invited", String(created.body.user_id)), 1);

  assert.equal(
    (await invite("ptr_unknownunknown0000", { email: "x@invite.test", role: "viewer" })).status,
    404,
  );
  const unknown = await invite("ptr_unknownunknown0000", { email: "x@invite.test", role: "viewer" });
  assert.equal(unknown.body.code, "partner_not_found");
  for (const body of [
    { email: "dev2@invite.test", role: "emperor" },
    { email: "not an email", role: "viewer" },
    { email: "dev2@invite.test" },
  ]) {
    const refused = await invite(partner.partner_id, body);
    assert.equal(refused.status, 400, JSON.stringify(body));
    assert.equal(refused.body.code, "invalid_request");
  }
  const again = await invite(partner.partner_id, { email: "DEV@invite.test", role: "viewer" });
  assert.equal(again.status, 409);
  assert.equal(again.body.code, "user_exists");

  const list = await fetch(`${base}/admin/partners/${partner.partner_id}/users?limit=1`, { headers: admin });
  assert.equal(list.status, 200);
  const page = (await list.json()) as { data: Array<{ email: string }>; has_more: boolean };
  assert.deepEqual(
    page.data.map((u) => u.email),
    ["dev@invite.test"],
  );
  assert.equal(page.has_more, false);
  const missing = await fetch(`${base}/admin/partners/ptr_unknownunknown0000/users`, { headers: admin });
  assert.equal(missing.status, 404);
});

test("a list of people pages by cursor, oldest first, every person once", async () => {
  const partner = await t.createPartner("Paged Travel");
  const emails = ["a@paged.test", "b@paged.test", "c@paged.test"];
  for (const email of emails)
    assert.equal((await invite(partner.partner_id, { email, role: "viewer" })).status, 201);
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `limit=2&cursor=${cursor}` : "limit=2";
    const answer = await fetch(`${base}/admin/partners/${partner.partner_id}/users?${query}`, {
      headers: admin,
    });
    const page = (await answer.json()) as { data: Array<{ email: string }>; next_cursor: string | null };
    seen.push(...page.data.map((u) => u.email));
    cursor = page.next_cursor;
  } while (cursor);
  assert.deepEqual(seen, emails);
});

test("an invitation link asks for a name and password, refuses a weak one with the reason, signs the person in, and works once", async () => {
  const partner = await t.createPartner("Join Travel");
  const before = smtp.messages.length;
  const created = await invite(partner.partner_id, { email: "joiner@invite.test", role: "support" });
  const link = await linkMailedTo("joiner@invite.test", before);
  const path = new URL(link).pathname;

  const shown = await fetch(`${base}${path}`);
  assert.equal(shown.status, 200);
  assert.match(await shown.text(), /joiner@invite\.test/);

  const weak = await fetch(
    `${base}${path}`,
    form({ name: "Jo", password: "password1234", confirm: "password1234" }),
  );
  assert.equal(weak.status, 400);
  assert.match(await weak.text(), /commonly used|easy to guess/);
  const differ = await fetch(
    `${base}${path}`,
    form({ name: "Jo", password: TEST_PASSWORD, confirm: `${TEST_PASSWORD}x` }),
  );
  assert.equal(differ.status, 400);
  assert.match(await differ.text(), /differ/);

  const accepted = await fetch(
    `${base}${path}`,
    form({ name: "Jo Joiner", password: TEST_PASSWORD, confirm: TEST_PASSWORD }),
  );
  assert.equal(accepted.status, 303);
  assert.equal(accepted.headers.get("location"), "/console");
  const cookie = /console_partner=([A-Za-z0-9_-]{43})/.exec(accepted.headers.get("set-cookie") ?? "")?.[1];
  assert.ok(cookie, "signed in");
  const home = await fetch(`${base}/console/orders`, { headers: { cookie: `console_partner=${cookie}` } });
  assert.equal(home.status, 200);

  const user_id = String(created.body.user_id);
  const row = await sql<{
    status: string;
    name: string;
  }>`select status, name from users where user_id = ${user_id}`.execute(t.db);
  assert.deepEqual(row.rows[0], { status: "active", name: "Jo Joiner" });
  assert.equal(await auditCount("user.invitation_accepted", user_id), 1);

  const twice = await fetch(
    `${base}${path}`,
    form({ name: "Mallory", password: TEST_PASSWORD, confirm: TEST_PASSWORD }),
  );
  assert.equal(twice.status, 410);
  assert.match(await twice.text(), /already used/);
  assert.equal((await fetch(`${base}${path}`)).status, 410);
  const signed = await signInCookie(base, {
    email: "joiner@invite.test",
    password: TEST_PASSWORD,
    realm: "partner",
  });
  assert.ok(signed);
});

test("an expired invitation link is refused and activates nobody; an unknown one likewise", async () => {
  const partner = await t.createPartner("Late Travel");
  const before = smtp.messages.length;
  const created = await invite(partner.partner_id, { email: "late@invite.test", role: "viewer" });
  const path = new URL(await linkMailedTo("late@invite.test", before)).pathname;
  await sql`update user_tokens set expires_at = now() - interval '1 second' where user_id = ${String(created.body.user_id)}`.execute(
    t.db,
  );
  const page = await fetch(`${base}${path}`);
  assert.equal(page.status, 410);
  assert.match(await page.text(), /expired/);
  const post = await fetch(
    `${base}${path}`,
    form({ name: "Late", password: TEST_PASSWORD, confirm: TEST_PASSWORD }),
  );
  assert.equal(post.status, 410);
  const row = await sql<{
    status: string;
  }>`select status from users where user_id = ${String(created.body.user_id)}`.execute(t.db);
  assert.equal(row.rows[0]!.status, "invited");
  assert.equal((await fetch(`${base}/console/invitations/${"A".repeat(43)}`)).status, 410);
  assert.equal((await fetch(`${base}/console/invitations/short`)).status, 410);
});

test("an owner invites from the Team page (an admin may not invite an owner); the operator's People page invites operator users", async () => {
  const partner = await t.createPartner("Team Travel");
  const owner = await addPerson(t.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const adminUser = await addPerson(t.database.pool, {
    realm: "partner",
    role: "admin",
    partner_id: partner.partner_id,
  });
  const ownerCookie = `console_partner=${await signInCookie(base, owner)}`;
  const page = await (await fetch(`${base}/console/team`, { headers: { cookie: ownerCookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
  const before = smtp.messages.length;
  const sent = await fetch(
    `${base}/console/team/invitations`,
    form({ _csrf: csrf, email: "new@team.test", role: "finance" }, ownerCookie),
  );
  assert.equal(sent.status, 303);
  const link = await linkMailedTo("new@team.test", before);
  assert.ok(link.includes("/console/invitations/"));

  const adminCookie = `console_partner=${await signInCookie(base, adminUser)}`;
  const adminPage = await (await fetch(`${base}/console/team`, { headers: { cookie: adminCookie } })).text();
  assert.ok(!/<option value="owner"/.test(adminPage), "an admin is offered no owner role");
  const adminCsrf = /name="_csrf" value="([^"]+)"/.exec(adminPage)![1]!;
  const refused = await fetch(
    `${base}/console/team/invitations`,
    form({ _csrf: adminCsrf, email: "boss@team.test", role: "owner" }, adminCookie),
  );
  assert.equal(refused.status, 403);
  const none = await sql<{
    n: number;
  }>`select count(*)::int as n from users where email = 'boss@team.test'`.execute(t.db);
  assert.equal(none.rows[0]!.n, 0);

  const operator = await addPerson(t.database.pool, { realm: "operator", role: "admin" });
  const opCookie = `console_operator=${await signInCookie(base, operator)}`;
  const opPage = await (
    await fetch(`${base}/console/admin/people`, { headers: { cookie: opCookie } })
  ).text();
  const opCsrf = /name="_csrf" value="([^"]+)"/.exec(opPage)![1]!;
  const opBefore = smtp.messages.length;
  const opSent = await fetch(
    `${base}/console/admin/people/invitations`,
    form({ _csrf: opCsrf, email: "staff@operator.test", role: "support" }, opCookie),
  );
  assert.equal(opSent.status, 303);
  const opLink = await linkMailedTo("staff@operator.test", opBefore);
  assert.ok(opLink.startsWith(`${base}/console/admin/invitations/`), opLink);
  const joined = await fetch(
    `${base}${new URL(opLink).pathname}`,
    form({ name: "Sam Staff", password: TEST_PASSWORD, confirm: TEST_PASSWORD }),
  );
  assert.equal(joined.status, 303);
  assert.equal(joined.headers.get("location"), "/console/admin");

  // The operator invites a partner's person from the partner's page.
  const partnerPage = await (
    await fetch(`${base}/console/admin/partners/${partner.partner_id}`, { headers: { cookie: opCookie } })
  ).text();
  assert.match(partnerPage, /new@team\.test/);
  const ppBefore = smtp.messages.length;
  const ppSent = await fetch(
    `${base}/console/admin/partners/${partner.partner_id}/users`,
    form({ _csrf: opCsrf, email: "second-owner@team.test", role: "owner" }, opCookie),
  );
  assert.equal(ppSent.status, 303);
  assert.ok((await linkMailedTo("second-owner@team.test", ppBefore)).includes("/console/invitations/"));
});

test("the CLI invites the first operator user and prints a link that works", async () => {
  const run = await runCli(["operators", "invite", "first@operator.test", "--role", "admin"], {
    DATABASE_URL: t.database.url,
    APP_ENV: "sandbox",
    CURRENCY: "USD",
    PUBLIC_BASE_URL: base,
  });
  assert.equal(run.code, 0, run.stderr);
  const link = /https?:\/\/\S+\/console\/admin\/invitations\/[A-Za-z0-9_-]{43}/.exec(run.stdout)?.[0];
  assert.ok(link, run.stdout);
  const joined = await fetch(
    link,
    form({ name: "First Op", password: TEST_PASSWORD, confirm: TEST_PASSWORD }),
  );
  assert.equal(joined.status, 303);
  assert.equal(joined.headers.get("location"), "/console/admin");
  const bad = await runCli(["operators", "invite", "second@operator.test", "--role", "owner"], {
    DATABASE_URL: t.database.url,
    APP_ENV: "sandbox",
    CURRENCY: "USD",
  });
  assert.equal(bad.code, 1, bad.stdout);
  assert.match(bad.stderr, /--role must be one of admin, finance, support, viewer/);
});

test("when the relay refuses the invitation email, nobody is invited (503) and inviting again works", async () => {
  const partner = await t.createPartner("Relay Down Travel");
  smtp.failNext(1);
  const refused = await invite(partner.partner_id, { email: "retry@invite.test", role: "viewer" });
  assert.equal(refused.status, 503, JSON.stringify(refused.body));
  assert.equal(refused.body.code, "service_unavailable");
  const none = await sql<{
    n: number;
  }>`select count(*)::int as n from users where email = 'retry@invite.test'`.execute(t.db);
  assert.equal(none.rows[0]!.n, 0);
  const before = smtp.messages.length;
  assert.equal(
    (await invite(partner.partner_id, { email: "retry@invite.test", role: "viewer" })).status,
    201,
  );
  assert.ok(await linkMailedTo("retry@invite.test", before));
});

test("a partner's Team page learns nothing of another partner's people, and an invitation that lapsed unused frees its address", async () => {
  const a = await t.createPartner("Alpha Travel");
  const b = await t.createPartner("Beta Travel");
  const a_owner = await addPerson(t.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: a.partner_id,
  });
  const b_dev = await addPerson(t.database.pool, {
    realm: "partner",
    role: "developer",
    partner_id: b.partner_id,
  });
  const cookie = `console_partner=${await signInCookie(base, a_owner)}`;
  const page = await (await fetch(`${base}/console/team`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
  const teamInvite = async (email: string) => {
    const answer = await fetch(
      `${base}/console/team/invitations`,
      form({ _csrf: csrf, email, role: "viewer" }, cookie),
    );
    return { status: answer.status, location: answer.headers.get("location") };
  };
  const sent_before = smtp.messages.length;
  // B's developer and an address nobody has: the same answer.
  const taken = await teamInvite(b_dev.email);
  const fresh = await teamInvite(`fresh-${Date.now()}@alpha.test`);
  assert.deepEqual(taken, fresh, "the same answer whether the address has an account elsewhere or not");
  await smtp.waitFor(sent_before + 1);
  assert.equal(smtp.messages.length, sent_before + 1, "only the free address was mailed");
  const { rows } = await sql<{ partner_id: string }>`
    select partner_id from users where lower(email) = lower(${b_dev.email})`.execute(t.db);
  assert.deepEqual(rows, [{ partner_id: b.partner_id }], "B's person is untouched");
  // The operator, who sees every team, is told why.
  const operator = await invite(a.partner_id, { email: b_dev.email, role: "viewer" });
  assert.equal(operator.status, 409);
  assert.equal(operator.body.code, "user_exists");

  // B invites an address and the link lapses unused: A may then invite it, and B's lapsed row is gone.
  const lapsed = await invite(b.partner_id, { email: `lapsed-${Date.now()}@beta.test`, role: "viewer" });
  assert.equal(lapsed.status, 201);
  const lapsed_email = String(lapsed.body.email);
  await sql`update user_tokens set expires_at = now() - interval '1 minute' where user_id = ${String(lapsed.body.user_id)}`.execute(
    t.db,
  );
  const taken_over = await invite(a.partner_id, { email: lapsed_email, role: "viewer" });
  assert.equal(taken_over.status, 201, JSON.stringify(taken_over.body));
  const owners = await sql<{ partner_id: string }>`
    select partner_id from users where lower(email) = lower(${lapsed_email})`.execute(t.db);
  assert.deepEqual(owners.rows, [{ partner_id: a.partner_id }]);
  // A live invitation of B's is not taken over.
  const live = await invite(b.partner_id, { email: `live-${Date.now()}@beta.test`, role: "viewer" });
  assert.equal((await invite(a.partner_id, { email: String(live.body.email), role: "viewer" })).status, 409);
});

test("a team invites again someone whose invitation lapsed: a new link, the old person replaced", async () => {
  const partner = await t.createPartner("Resend Travel");
  const email = `again-${Date.now()}@resend.test`;
  const first = await invite(partner.partner_id, { email, role: "support" });
  assert.equal(first.status, 201);
  assert.equal(
    (await invite(partner.partner_id, { email, role: "support" })).status,
    409,
    "while the link works",
  );
  await sql`update user_tokens set expires_at = now() - interval '1 minute' where user_id = ${String(first.body.user_id)}`.execute(
    t.db,
  );
  const again = await invite(partner.partner_id, { email, role: "finance" });
  assert.equal(again.status, 201, JSON.stringify(again.body));
  assert.notEqual(again.body.user_id, first.body.user_id);
  assert.equal(again.body.role, "finance");
});

test("an invitation to a suspended partner's team is refused with a page saying why, and works again once it is reactivated", async () => {
  const partner = await t.createPartner("Suspended Invite Travel");
  const before = smtp.messages.length;
  const created = await invite(partner.partner_id, { email: "new@suspended-invite.test", role: "viewer" });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const link = await linkMailedTo("new@suspended-invite.test", before);
  const standing = async (status: string, reason?: string) => {
    const answer = await fetch(`${base}/admin/partners/${partner.partner_id}`, {
      method: "PATCH",
      headers: admin,
      body: JSON.stringify({ status, ...(reason ? { reason } : {}) }),
    });
    assert.equal(answer.status, 200);
  };
  await standing("suspended", "chargebacks under review");
  const fields = { name: "New Person", password: TEST_PASSWORD, confirm: TEST_PASSWORD };

  const opened = await fetch(link);
  assert.equal(opened.status, 403);
  assert.match(await opened.text(), /suspended this team&#39;s account|suspended this team's account/);
  const joined = await fetch(link, form(fields));
  assert.equal(joined.status, 403);
  assert.match(await joined.text(), /no one can join it until it is reactivated/);
  const user = async () =>
    (
      await sql<{
        status: string;
      }>`select status from users where user_id = ${String(created.body.user_id)}`.execute(t.db)
    ).rows[0]!.status;
  assert.equal(await user(), "invited", "nobody joined");
  assert.equal(await auditCount("user.invitation_accepted", String(created.body.user_id)), 0);

  await standing("active");
  const later = await fetch(link, form(fields));
  assert.equal(later.status, 303, "the invitation stayed valid");
  assert.equal(await user(), "active");
});
