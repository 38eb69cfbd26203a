// People for tests (issue 31): a person of a partner or of the operator, active with a password,
// written through the people domain's own functions into a test's database; and signing them in to
// the console through its real sign-in form (HTTP or a browser page).
import assert from "node:assert/strict";
import { Kysely, PostgresDialect } from "kysely";
import type pg from "pg";
import type { Page } from "playwright-core";
import type { Database } from "../../src/db/schema.ts";
import { hashPassword } from "../../src/people/passwords.ts";
import type { Realm } from "../../src/people/roles.ts";
import { activateWithPassword, addUser } from "../../src/people/users.ts";

/** Every test person's password: passes the console's rules (12+ characters, not a common one). */
export const TEST_PASSWORD = "Kettle-Lantern-47-Orbit";

/** scrypt costs a quarter second: one hash for every test person of a process. */
let testHash: Promise<string> | null = null;

export type Person = { user_id: string; email: string; password: string; realm: Realm; role: string };

let counter = 0;

/** One Kysely per pool, never destroyed: the pool belongs to the test's database and ends with it. */
const kyselies = new WeakMap<pg.Pool, Kysely<Database>>();
function kyselyOf(pool: pg.Pool): Kysely<Database> {
  let db = kyselies.get(pool);
  if (!db) {
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    kyselies.set(pool, db);
  }
  return db;
}

/** An active person with TEST_PASSWORD, in the database behind `pool`. */
export async function addPerson(
  pool: pg.Pool,
  input: { realm: Realm; role: string; partner_id?: string | null; email?: string; name?: string },
): Promise<Person> {
  const db = kyselyOf(pool);
  testHash ??= hashPassword(TEST_PASSWORD);
  const email = input.email ?? `person-${process.pid}-${++counter}-${Date.now()}@team.test`;
  const user = await addUser(db, {
    realm: input.realm,
    partner_id: input.realm === "partner" ? (input.partner_id ?? null) : null,
    email,
    name: input.name ?? `Test ${input.role}`,
    role: input.role,
  });
  assert.ok(user, `no person with ${email} yet`);
  assert.ok(await activateWithPassword(db, user.user_id, { hash: await testHash }));
  return { user_id: user.user_id, email, password: TEST_PASSWORD, realm: input.realm, role: input.role };
}

const COOKIE = { partner: "console_partner", operator: "console_operator" } as const;

/** Signs a person in through the console's form (plain HTTP, no second factor): the session cookie's value. */
export async function signInCookie(
  base: string,
  person: Pick<Person, "email" | "password" | "realm">,
): Promise<string> {
  const path = person.realm === "operator" ? "/console/admin/sign-in" : "/console/sign-in";
  const answer = await fetch(`${base}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams({ email: person.email, password: person.password }).toString(),
  });
  assert.equal(answer.status, 303, `sign-in of ${person.email}: ${answer.status}`);
  const pattern = new RegExp(`^${COOKIE[person.realm]}=([A-Za-z0-9_-]{43});`);
  const value = pattern.exec(answer.headers.get("set-cookie") ?? "")?.[1];
  assert.ok(value, "a session cookie");
  return value;
}

/** Signs a person in on a browser page through the sign-in form; the page ends on the area's home. */
export async function signInPage(
  page: Page,
  base: string,
  person: Pick<Person, "email" | "password" | "realm">,
): Promise<void> {
  const home = person.realm === "operator" ? `${base}/console/admin` : `${base}/console`;
  await page.goto(`${home}/sign-in`);
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(home);
}

/** A new owner of the partner, signed in through the console's form: the Cookie header to send. */
export async function ownerCookie(pool: pg.Pool, base: string, partner_id: string): Promise<string> {
  const owner = await addPerson(pool, { realm: "partner", role: "owner", partner_id });
  return `${COOKIE.partner}=${await signInCookie(base, owner)}`;
}
