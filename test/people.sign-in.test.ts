// The password step of console sign-in (issue 31, people/sign-in.ts) over real HTTP and PostgreSQL:
// one answer for every refusal, and the throttle counted in the database per account from one
// address (5), per account (20) and per address (30, an IPv6 /64 being one), safe against parallel
// attempts (each reserves its failure before the password is hashed). Addresses come from
// X-Forwarded-For behind a trusted proxy (127.0.0.1), as behind a load balancer.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestApp } from "./support/app.ts";
import { inParallel } from "./support/fixtures.ts";
import { addPerson, TEST_PASSWORD } from "./support/people.ts";

const app = await createTestApp({ trusted_proxies: ["127.0.0.1/32"], auth_failures_per_minute: 100_000 });
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });
const partner = await app.createPartner("Throttle Travel");

type Attempt = { status: number; retry_after: string | null; text: string; cookie: string | null };

async function attempt(email: string, password: string, from: string): Promise<Attempt> {
  const answer = await fetch(`${base}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base, "x-forwarded-for": from },
    body: new URLSearchParams({ email, password }).toString(),
  });
  return {
    status: answer.status,
    retry_after: answer.headers.get("retry-after"),
    text: await answer.text(),
    cookie: answer.headers.get("set-cookie"),
  };
}

const refusal = (a: Attempt) => /The email or password is not right\./.exec(a.text)?.[0] ?? null;

test("every refusal is the same 401 page: unknown email, wrong password, disabled, invited without a password", async () => {
  const active = await addPerson(app.database.pool, {
    realm: "partner",
    role: "viewer",
    partner_id: partner.partner_id,
  });
  const disabled = await addPerson(app.database.pool, {
    realm: "partner",
    role: "viewer",
    partner_id: partner.partner_id,
  });
  await app.database.pool.query("update users set status = 'disabled' where user_id = $1", [
    disabled.user_id,
  ]);
  const answers = [
    await attempt("nobody@team.test", TEST_PASSWORD, "198.51.100.1"),
    await attempt(active.email, "Wrong-Password-0000", "198.51.100.2"),
    await attempt(disabled.email, TEST_PASSWORD, "198.51.100.3"),
  ];
  for (const a of answers) {
    assert.equal(a.status, 401);
    assert.equal(refusal(a), "The email or password is not right.");
    assert.equal(a.cookie, null, "no session");
  }
  const right = await attempt(active.email.toUpperCase(), TEST_PASSWORD, "198.51.100.4");
  assert.equal(right.status, 303, "the email is matched whatever its case");
  const audited = await app.database.pool.query(
    "select actor_id, actor_email from audit_log where action = 'user.sign_in_failed' order by audit_seq",
  );
  assert.deepEqual(
    audited.rows.map((r) => r.actor_id),
    [null, active.user_id, disabled.user_id],
    "each failure audited with the person it named (none for an unknown email)",
  );
});

test("25 parallel wrong passwords for one account from 25 addresses: exactly 20 are checked, the rest 429", async () => {
  const victim = await addPerson(app.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const answers = await inParallel(25, 25, (i) =>
    attempt(victim.email, `Wrong-Password-${i}-xyz`, `203.0.113.${i + 1}`),
  );
  const statuses = answers.map((a) => a.status).sort();
  assert.equal(statuses.filter((s) => s === 401).length, 20, statuses.join(","));
  assert.equal(statuses.filter((s) => s === 429).length, 5, statuses.join(","));
  for (const a of answers.filter((x) => x.status === 429)) assert.ok(Number(a.retry_after) >= 1);
});

test("5 failures from one address hold that address back for the account, not the person at another", async () => {
  const person = await addPerson(app.database.pool, {
    realm: "partner",
    role: "support",
    partner_id: partner.partner_id,
  });
  for (let i = 0; i < 5; i++)
    assert.equal((await attempt(person.email, "Guess-Password-0000", "192.0.2.10")).status, 401);
  const held = await attempt(person.email, TEST_PASSWORD, "192.0.2.10");
  assert.equal(held.status, 429, "the right password from that address waits too: guessing learns nothing");
  const retry_after = Number(held.retry_after);
  assert.ok(
    retry_after > 800 && retry_after <= 900,
    `until the oldest failure leaves the 15 minutes: ${retry_after}`,
  );
  assert.equal(
    (await attempt(person.email, TEST_PASSWORD, "192.0.2.20")).status,
    303,
    "the person elsewhere signs in",
  );
});

test("an IPv6 /64 is one address: 30 failures from rotating addresses in it, then 429", async () => {
  const answers: number[] = [];
  for (let i = 1; i <= 31; i++)
    answers.push(
      (await attempt(`spray-${i}@team.test`, "Spray-Password-1", `2001:db8:0:1::${i.toString(16)}`)).status,
    );
  assert.deepEqual(answers.slice(0, 30), Array(30).fill(401));
  assert.equal(answers[30], 429);
  assert.equal(
    (await attempt("spray-x@team.test", "Spray-Password-1", "2001:db8:0:2::1")).status,
    401,
    "the next /64 is another address",
  );
});

test("a right password gives its reserved failure back: five sign-ins in a row never throttle", async () => {
  const person = await addPerson(app.database.pool, {
    realm: "partner",
    role: "finance",
    partner_id: partner.partner_id,
  });
  for (let i = 0; i < 7; i++)
    assert.equal((await attempt(person.email, TEST_PASSWORD, "192.0.2.30")).status, 303);
  const { rows } = await app.database.pool.query(
    "select count(*)::int as n from sign_in_failures where subject like $1",
    [`%${person.email.toLowerCase()}%`],
  );
  assert.equal(rows[0].n, 0);
});
