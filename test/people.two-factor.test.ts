// The second factor over real HTTP against the in-process service and a real PostgreSQL (the
// browser flows are in people.two-factor.browser.test.ts): TOTP enrolment confirmed by a first code,
// the sign-in's second step refusing a wrong code and the same code twice (even when two requests
// race with it), recovery codes working once, the throttle shared with passwords, a team's
// requirement keeping a session on the Two-factor page, the pages' CSP, and an operator person.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret, TOTP } from "otpauth";
import { setRequiresTwoFactor } from "../src/partners/two-factor-policy.ts";
import { csrfToken } from "../src/people/sessions.ts";
import { createTestApp } from "./support/app.ts";
import { addPerson, type Person, signInCookie } from "./support/people.ts";

const app = await createTestApp();
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });
const partner = await app.createPartner("Two-Factor Travel");

const COOKIE = { partner: "console_partner", operator: "console_operator" } as const;
const HOME = { partner: "/console", operator: "/console/admin" } as const;

type Session = { person: Person; cookie: string };

async function call(
  session: Session,
  method: "GET" | "POST",
  path: string,
  form: Record<string, string> = {},
): Promise<{ status: number; body: string; location: string | null; csp: string | null }> {
  const answer = await fetch(`${base}${path}`, {
    method,
    redirect: "manual",
    headers: {
      cookie: `${COOKIE[session.person.realm]}=${session.cookie}`,
      origin: base,
      ...(method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {}),
    },
    ...(method === "POST"
      ? { body: new URLSearchParams({ _csrf: csrfToken(session.cookie), ...form }).toString() }
      : {}),
  });
  // As a browser would: a new session cookie (the second factor given replaces the session) is kept.
  const renewed = new RegExp(`^${COOKIE[session.person.realm]}=([A-Za-z0-9_-]{43});`).exec(
    answer.headers.get("set-cookie") ?? "",
  )?.[1];
  if (renewed) session.cookie = renewed;
  return {
    status: answer.status,
    body: await answer.text(),
    location: answer.headers.get("location"),
    csp: answer.headers.get("content-security-policy"),
  };
}

async function signIn(person: Person): Promise<Session> {
  return { person, cookie: await signInCookie(base, person) };
}

function totpOf(seed: string): TOTP {
  return new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(seed) });
}

/** The code of the step `steps_ahead` after now (the window takes the next step's code too). */
function codeAt(seed: string, steps_ahead = 0): string {
  return totpOf(seed).generate({ timestamp: Date.now() + steps_ahead * 30_000 });
}

/** The code of one time step (tests name steps, not instants: a step may end between two requests). */
function codeOfStep(seed: string, step: number): string {
  return totpOf(seed).generate({ timestamp: step * 30_000 });
}

/** Sets up TOTP through the Two-factor page: the seed as shown on it, and the recovery codes shown once. */
async function enrolTotp(
  session: Session,
): Promise<{ seed: string; codes: string[]; page: string; step: number }> {
  const home = HOME[session.person.realm];
  const started = await call(session, "POST", `${home}/account/two-factor/totp`);
  assert.equal(started.status, 303, started.body);
  const shown = await call(session, "GET", `${home}/account/two-factor`);
  assert.equal(shown.status, 200, shown.body);
  const seed = /id="totp-secret">([A-Z2-7 ]+)</.exec(shown.body)?.[1]?.replaceAll(" ", "");
  assert.ok(seed, "the seed is on the page for typing by hand");
  const qr = await fetch(`${base}${home}/account/two-factor/totp.png`, {
    headers: { cookie: `${COOKIE[session.person.realm]}=${session.cookie}` },
  });
  assert.equal(qr.status, 200);
  assert.equal(qr.headers.get("content-type"), "image/png");
  const step = Math.floor(Date.now() / 30_000);
  const confirmed = await call(session, "POST", `${home}/account/two-factor/totp/confirm`, {
    code: codeOfStep(seed, step),
  });
  assert.equal(confirmed.status, 200, confirmed.body);
  const codes = [...confirmed.body.matchAll(/<li>([A-Z2-7]{5}-[A-Z2-7]{5})<\/li>/g)].map((m) => m[1]!);
  return { seed, codes, page: confirmed.body, step };
}

async function auditCount(user_id: string, action: string): Promise<number> {
  const { rows } = await app.database.pool.query<{ n: number }>(
    "select count(*)::int as n from audit_log where target_id = $1 and action = $2",
    [user_id, action],
  );
  return rows[0]!.n;
}

async function owner(): Promise<Person> {
  return addPerson(app.database.pool, { realm: "partner", role: "owner", partner_id: partner.partner_id });
}

test("TOTP enrolment: the seed is kept sealed only once a first code confirms it, with ten recovery codes shown once", async () => {
  const person = await owner();
  const session = await signIn(person);
  const wrong = await call(session, "POST", "/console/account/two-factor/totp/confirm", { code: "123456" });
  assert.equal(wrong.status, 400, "nothing to confirm yet");
  const { seed, codes, step } = await enrolTotp(session);
  assert.equal(codes.length, 10);
  assert.equal(new Set(codes).size, 10);
  const { rows } = await app.database.pool.query(
    "select totp_secret_sealed, totp_last_step from users where user_id = $1",
    [person.user_id],
  );
  assert.ok(rows[0].totp_secret_sealed, "sealed seed stored");
  assert.ok(!rows[0].totp_secret_sealed.toString("utf8").includes(seed), "never in clear");
  assert.equal(Number(rows[0].totp_last_step), step, "the confirming code's step is taken");
  const stored = await app.database.pool.query(
    "select count(*)::int as n from recovery_codes where user_id = $1 and used_at is null",
    [person.user_id],
  );
  assert.equal(stored.rows[0].n, 10);
  assert.equal(await auditCount(person.user_id, "user.two_factor_enabled"), 1);
  const again = await call(session, "GET", "/console/account/two-factor");
  assert.doesNotMatch(again.body, /[A-Z2-7]{5}-[A-Z2-7]{5}/, "recovery codes are never shown again");
  assert.match(again.body, /An authenticator app is set up/);
});

test("a TOTP sign-in: a wrong code is refused (401), the right one signs in once and not twice (replay)", async () => {
  const person = await owner();
  const { seed, step: enrolled } = await enrolTotp(await signIn(person));

  const session = await signIn(person);
  const home = await call(session, "GET", "/console/orders");
  assert.equal(home.status, 303);
  assert.equal(home.location, "/console/sign-in/second-factor", "nothing else before the second factor");
  const step = await call(session, "GET", "/console/sign-in/second-factor");
  assert.equal(step.status, 200);
  assert.match(step.body, /name="code"/);
  assert.doesNotMatch(step.body, /Use a passkey/, "no passkey, no passkey button");

  const wrong_code = codeAt(seed) === "000000" ? "111111" : "000000";
  const wrong = await call(session, "POST", "/console/sign-in/second-factor", { code: wrong_code });
  assert.equal(wrong.status, 401);
  assert.match(wrong.body, /That code is not right/);
  const enrolment_code = codeOfStep(seed, enrolled);
  const replayed_enrolment = await call(session, "POST", "/console/sign-in/second-factor", {
    code: enrolment_code,
  });
  assert.equal(replayed_enrolment.status, 401, "the code that confirmed the enrolment is taken already");

  const next = codeOfStep(seed, enrolled + 1);
  const accepted = await call(session, "POST", "/console/sign-in/second-factor", { code: next });
  assert.equal(accepted.status, 303, accepted.body);
  assert.equal(accepted.location, "/console");
  assert.equal((await call(session, "GET", "/console/orders")).status, 200, "signed in");

  const other = await signIn(person);
  const replay = await call(other, "POST", "/console/sign-in/second-factor", { code: next });
  assert.equal(replay.status, 401, "the same code a second time, in another session, is refused");
  assert.equal((await call(other, "GET", "/console/orders")).status, 303);

  const { rows } = await app.database.pool.query(
    "select details from audit_log where target_id = $1 and action = 'user.signed_in'",
    [person.user_id],
  );
  assert.deepEqual(
    rows.map((r) => r.details.method),
    ["password", "totp"],
    "the enrolling session (no factor yet), then the TOTP sign-in; the password alone never again",
  );
  assert.equal(await auditCount(person.user_id, "user.sign_in_failed"), 3);
});

test("two sign-ins racing with one TOTP code: exactly one passes", async () => {
  const person = await owner();
  const { seed } = await enrolTotp(await signIn(person));
  // Signed in one after another: passwords in flight at once count as failures until checked (the
  // throttle's reservation), and six at once from one address would meet its limit of five.
  const sessions: Session[] = [];
  for (let i = 0; i < 6; i++) sessions.push(await signIn(person));
  const code = codeAt(seed, 1);
  const answers = await Promise.all(
    sessions.map((s) => call(s, "POST", "/console/sign-in/second-factor", { code })),
  );
  assert.deepEqual(
    answers.map((a) => a.status).sort(),
    [303, 401, 401, 401, 401, 401],
    "one session signed in, five refused",
  );
});

test("a recovery code signs in once, instead of a TOTP code, and not a second time; new codes replace the old", async () => {
  const person = await owner();
  const { codes } = await enrolTotp(await signIn(person));
  const first = await signIn(person);
  const used = await call(first, "POST", "/console/sign-in/second-factor", {
    code: codes[3]!.toLowerCase().replace("-", " "),
  });
  assert.equal(used.status, 303, used.body);
  assert.equal(used.location, "/console");
  assert.equal(await auditCount(person.user_id, "user.recovery_code_used"), 1);

  const second = await signIn(person);
  const again = await call(second, "POST", "/console/sign-in/second-factor", { code: codes[3]! });
  assert.equal(again.status, 401, "a recovery code works once");

  const page = await call(first, "GET", "/console/account/two-factor");
  assert.match(page.body, /9 of 10 recovery codes unused/);
  const regenerated = await call(first, "POST", "/console/account/two-factor/recovery-codes");
  assert.equal(regenerated.status, 200);
  const fresh = [...regenerated.body.matchAll(/<li>([A-Z2-7]{5}-[A-Z2-7]{5})<\/li>/g)].map((m) => m[1]!);
  assert.equal(fresh.length, 10);
  const old = await call(second, "POST", "/console/sign-in/second-factor", { code: codes[4]! });
  assert.equal(old.status, 401, "the old codes no longer work");
  const renewed = await call(second, "POST", "/console/sign-in/second-factor", { code: fresh[0]! });
  assert.equal(renewed.status, 303);
});

test("wrong second-factor codes are sign-in failures of the account: past 5 in 15 minutes, 429 with Retry-After", async () => {
  const person = await owner();
  const { seed } = await enrolTotp(await signIn(person));
  const session = await signIn(person);
  for (let i = 0; i < 5; i++) {
    const wrong = await call(session, "POST", "/console/sign-in/second-factor", { code: "ZZZZZ-ZZZZZ" });
    assert.equal(wrong.status, 401);
  }
  const throttled = await call(session, "POST", "/console/sign-in/second-factor", { code: codeAt(seed, 1) });
  assert.equal(throttled.status, 429, "even the right code waits");
  const password = await fetch(`${base}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams({ email: person.email, password: person.password }).toString(),
  });
  assert.equal(password.status, 429, "the password step shares the account's budget");
  assert.ok(Number(password.headers.get("retry-after")) > 0);
});

test("a team that requires a second factor: a person without one is kept on the Two-factor page until they set one up", async () => {
  const strict = await app.createPartner("Strict Travel");
  await setRequiresTwoFactor(app.db, strict.partner_id, true, { type: "system", id: null, ip: null });
  const person = await addPerson(app.database.pool, {
    realm: "partner",
    role: "developer",
    partner_id: strict.partner_id,
  });
  const session = await signIn(person);
  for (const path of ["/console", "/console/orders", "/console/keys", "/console/sign-in/second-factor"]) {
    const answer = await call(session, "GET", path);
    assert.equal(answer.status, 303, path);
    assert.equal(answer.location, "/console/account/two-factor", path);
  }
  const change = await call(session, "POST", "/console/keys");
  assert.equal(change.status, 303, "no change either");
  assert.equal(change.location, "/console/account/two-factor");
  const page = await call(session, "GET", "/console/account/two-factor");
  assert.equal(page.status, 200);
  assert.match(page.body, /Your team requires a second factor/);
  assert.doesNotMatch(page.body, /aria-label="Console"/, "no nav while signing in is unfinished");

  const { page: done } = await enrolTotp(session);
  assert.match(done, /Continue to the console/);
  assert.equal((await call(session, "GET", "/console/orders")).status, 200, "signed in once enrolled");
  const { rows } = await app.database.pool.query(
    "select details from audit_log where target_id = $1 and action = 'user.signed_in'",
    [person.user_id],
  );
  assert.deepEqual(
    rows.map((r) => r.details.method),
    ["totp"],
  );
  const remove = await call(session, "POST", "/console/account/two-factor/totp/remove");
  assert.equal(remove.status, 400, "the team's only factor of this person stays");
  assert.match(remove.body, /Your team requires a second factor/);
});

test("a person who owes a second factor cannot reach the Two-factor page (a password alone changes no factor)", async () => {
  const person = await owner();
  await enrolTotp(await signIn(person));
  const session = await signIn(person);
  for (const [method, path] of [
    ["GET", "/console/account/two-factor"],
    ["POST", "/console/account/two-factor/totp/remove"],
    ["POST", "/console/account/two-factor/recovery-codes"],
  ] as const) {
    const answer = await call(session, method, path);
    assert.equal(answer.status, 303, path);
    assert.equal(answer.location, "/console/sign-in/second-factor", path);
  }
  const { rows } = await app.database.pool.query("select totp_secret_sealed from users where user_id = $1", [
    person.user_id,
  ]);
  assert.ok(rows[0].totp_secret_sealed, "still set up");
});

test("CSP: the passkey pages allow this origin's scripts and carry no inline script; other pages keep no script", async () => {
  const session = await signIn(await owner());
  const account = await call(session, "GET", "/console/account/two-factor");
  assert.match(account.csp ?? "", /script-src 'self'/);
  assert.doesNotMatch(account.csp ?? "", /unsafe-inline|unsafe-eval/);
  const scripts = [...account.body.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.deepEqual(
    scripts.map((m) => /src="([^"]+)"/.exec(m[1]!)?.[1]),
    ["/console/assets/webauthn.js", "/console/assets/passkeys.js"],
  );
  assert.ok(
    scripts.every((m) => m[2]!.trim() === ""),
    "no inline script",
  );
  assert.doesNotMatch(account.body, /\son[a-z]+="/, "no inline event handler");
  for (const path of ["/console", "/console/orders", "/console/keys"]) {
    const other = await call(session, "GET", path);
    assert.equal(other.status, 200, path);
    assert.doesNotMatch(other.csp ?? "", /script-src/, path);
    assert.match(other.csp ?? "", /default-src 'none'/, path);
    assert.doesNotMatch(other.body, /<script/, path);
  }
  for (const asset of ["webauthn.js", "passkeys.js"]) {
    const answer = await fetch(`${base}/console/assets/${asset}`);
    assert.equal(answer.status, 200, asset);
    assert.match(answer.headers.get("content-type") ?? "", /^text\/javascript/);
  }
});

test("an operator person signs in with TOTP at /console/admin", async () => {
  const person = await addPerson(app.database.pool, { realm: "operator", role: "admin" });
  const { seed } = await enrolTotp(await signIn(person));
  const session = await signIn(person);
  const before = await call(session, "GET", "/console/admin/orders");
  assert.equal(before.location, "/console/admin/sign-in/second-factor");
  const wrong = await call(session, "POST", "/console/admin/sign-in/second-factor", { code: "99999" });
  assert.equal(wrong.status, 401);
  const accepted = await call(session, "POST", "/console/admin/sign-in/second-factor", {
    code: codeAt(seed, 1),
  });
  assert.equal(accepted.status, 303, accepted.body);
  assert.equal(accepted.location, "/console/admin");
  assert.equal((await call(session, "GET", "/console/admin/orders")).status, 200);
});

test("removing the authenticator app takes a current code: a wrong one changes nothing; then no factor, no recovery codes", async () => {
  const person = await owner();
  const session = await signIn(person);
  const { seed } = await enrolTotp(session);
  const wrong = await call(session, "POST", "/console/account/two-factor/totp/remove", {
    code: "ABCDE-ABCDE",
  });
  assert.equal(wrong.status, 401);
  const still = await app.database.pool.query("select totp_secret_sealed from users where user_id = $1", [
    person.user_id,
  ]);
  assert.ok(still.rows[0].totp_secret_sealed, "still set up");
  const removed = await call(session, "POST", "/console/account/two-factor/totp/remove", {
    code: codeAt(seed, 1),
  });
  assert.equal(removed.status, 303, removed.body);
  assert.equal(removed.location, "/console/account/two-factor?totp_removed=1");
  const { rows } = await app.database.pool.query(
    `select u.totp_secret_sealed, u.totp_last_step,
            (select count(*)::int from recovery_codes r where r.user_id = u.user_id) as codes
     from users u where u.user_id = $1`,
    [person.user_id],
  );
  assert.deepEqual(rows[0], { totp_secret_sealed: null, totp_last_step: null, codes: 0 });
  assert.equal(await auditCount(person.user_id, "user.two_factor_disabled"), 1);
  const next = await signIn(person);
  assert.equal((await call(next, "GET", "/console/orders")).status, 200, "the password alone signs in again");
});

test("a session signed in more than 10 minutes ago cannot change the second factor: new recovery codes, removal and passkeys need a fresh sign-in", async () => {
  const person = await owner();
  const session = await signIn(person);
  const { codes } = await enrolTotp(session);
  // The session left open: its sign-in eleven minutes ago.
  await app.database.pool.query(
    "update console_sessions set created_at = now() - interval '11 minutes' where user_id = $1",
    [person.user_id],
  );
  const regenerate = await call(session, "POST", "/console/account/two-factor/recovery-codes");
  assert.equal(regenerate.status, 403, regenerate.body);
  assert.match(regenerate.body, /sign in again/);
  const remove = await call(session, "POST", "/console/account/two-factor/totp/remove", { code: codes[0]! });
  assert.equal(remove.status, 403);
  const passkey = await call(session, "POST", "/console/account/two-factor/passkeys", {
    response: "{}",
    name: "x",
  });
  assert.equal(passkey.status, 403);
  const { rows } = await app.database.pool.query(
    "select totp_secret_sealed is not null as totp, (select count(*)::int from recovery_codes r where r.user_id = u.user_id and used_at is null) as codes from users u where user_id = $1",
    [person.user_id],
  );
  assert.deepEqual(rows[0], { totp: true, codes: 10 }, "nothing changed");
  assert.equal(
    (await call(session, "GET", "/console/account/two-factor")).status,
    200,
    "the page still reads",
  );
});
