// Sign-in, the password step (issue 31). Every refusal reads the same ("the email or password is
// not right") and costs the same (an unknown email is checked against a decoy hash), so the page
// tells nobody which emails have accounts. Failures are counted in PostgreSQL, shared by every
// process, per account from one address (5 in 15 minutes), per account from anywhere (20: someone
// spraying one person's account from many addresses), and per address (30; an IPv6 /64 is one
// address). Past a limit the next attempt is 429 `rate_limited` with Retry-After, before any
// password is hashed. A victim is locked out of their own account only by 20 failures from 4 or
// more addresses in 15 minutes, not by 5 from anyone. Each attempt reserves its failure before the
// password is checked, under a lock per account, so parallel attempts cannot all pass one count;
// a right password deletes its reservation.
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import { addressKey } from "../shared/address-key.ts";
import { ApiError } from "../shared/errors.ts";
import { decoyHash, MAX_PASSWORD_LENGTH, verifyPassword } from "./passwords.ts";
import type { Realm } from "./roles.ts";
import {
  countFailures,
  deleteFailures,
  deleteOldFailures,
  insertFailures,
  lockSubject,
  markSignedIn,
  selectUserByEmail,
  type UserRow,
} from "./users.sql.ts";

export const FAILURE_WINDOW_MINUTES = 15;
export const ACCOUNT_ADDRESS_FAILURES = 5;
export const ACCOUNT_FAILURES = 20;
export const ADDRESS_FAILURES = 30;
const PURGE_PER_ATTEMPT = 100;
const MAX_EMAIL_LENGTH = 254;

export type SignInAttempt = { realm: Realm; email: string; password: string; ip: string };

/** The throttle's subjects of an attempt, each with its limit; the account's first (it is locked). */
function subjects(input: Pick<SignInAttempt, "realm" | "email" | "ip">) {
  const account = `account:${input.realm}:${input.email.trim().toLowerCase().slice(0, MAX_EMAIL_LENGTH)}`;
  const address = addressKey(input.ip);
  return [
    { subject: account, limit: ACCOUNT_FAILURES, what: "for this account" },
    { subject: `${account}:${address}`, limit: ACCOUNT_ADDRESS_FAILURES, what: "for this account" },
    { subject: `address:${input.realm}:${address}`, limit: ADDRESS_FAILURES, what: "from this address" },
  ];
}

/**
 * Refuses the attempt when a subject is past its limit (429 with Retry-After), else reserves one
 * failure per subject: the reservation's ids, deleted if the attempt turns out right. Exported for
 * the second factor's codes, which are counted the same way.
 */
export async function reserveAttempt(
  db: Kysely<Database>,
  input: Pick<SignInAttempt, "realm" | "email" | "ip">,
): Promise<string[]> {
  const all = subjects(input);
  await deleteOldFailures(db, FAILURE_WINDOW_MINUTES, PURGE_PER_ATTEMPT);
  return db.transaction().execute(async (tx) => {
    await lockSubject(tx, all[0]!.subject);
    const counts = await countFailures(tx, all, FAILURE_WINDOW_MINUTES);
    for (const [i, { failures, frees_at }] of counts.entries()) {
      if (failures < all[i]!.limit || frees_at === null) continue;
      const retry_after = Math.max(1, Math.ceil((frees_at.getTime() - Date.now()) / 1000));
      throw new ApiError(
        "rate_limited",
        `Too many failed sign-ins ${all[i]!.what}; try again in ${Math.ceil(retry_after / 60)} minutes.`,
        { headers: { "retry-after": String(retry_after) } },
      );
    }
    return insertFailures(
      tx,
      all.map((s) => s.subject),
    );
  });
}

/** The attempt was right: its reserved failures are given back. */
export function releaseAttempt(db: Kysely<Database>, reservation: string[]): Promise<void> {
  return deleteFailures(db, reservation);
}

/** Audits a failed attempt: the actor is the person the email named (id null when none). */
export async function auditFailure(
  db: Kysely<Database>,
  input: Pick<SignInAttempt, "realm" | "email" | "ip">,
  user: Pick<UserRow, "user_id" | "partner_id" | "email"> | null,
  details: Record<string, unknown> = {},
): Promise<void> {
  // The email as typed, when it looks like one: a password typed into the email field is not kept
  // for a year in the operator's audit log.
  const typed = input.email.trim().slice(0, MAX_EMAIL_LENGTH);
  await recordAudit(db, {
    actor: {
      type: "user",
      id: user?.user_id ?? null,
      email: user?.email ?? (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(typed) ? typed : null),
      ip: input.ip,
    },
    action: "user.sign_in_failed",
    partner_id: user?.partner_id ?? null,
    target: { type: "user", id: user?.user_id ?? null },
    details: { realm: input.realm, ...details },
  });
}

/**
 * The person whose email and password these are, active: the caller then asks for a second factor
 * or starts the session. Refused: 401 `unauthorized`, one message for every cause.
 */
export async function checkPassword(db: Kysely<Database>, input: SignInAttempt): Promise<UserRow> {
  const reservation = await reserveAttempt(db, input);
  const email = input.email.trim();
  const user =
    email.length > 0 && email.length <= MAX_EMAIL_LENGTH
      ? await selectUserByEmail(db, input.realm, email)
      : null;
  const hash = user?.password_hash ?? (await decoyHash());
  const matches =
    input.password.length <= MAX_PASSWORD_LENGTH && (await verifyPassword(input.password, hash));
  if (!matches || user === null || user.password_hash === null || user.status !== "active") {
    await auditFailure(db, input, user);
    throw new ApiError("unauthorized", "The email or password is not right.");
  }
  await releaseAttempt(db, reservation);
  return user;
}

/** The person is signed in (password, and second factor when owed, or SSO): recorded and audited. */
export async function recordSignIn(
  db: Kysely<Database>,
  user: Pick<UserRow, "user_id" | "email" | "partner_id" | "realm">,
  how: { ip: string; method: "password" | "totp" | "recovery_code" | "passkey" | "sso" },
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await markSignedIn(tx, user.user_id);
    await recordAudit(tx, {
      actor: { type: "user", id: user.user_id, email: user.email, ip: how.ip },
      action: "user.signed_in",
      partner_id: user.partner_id,
      target: { type: "user", id: user.user_id },
      details: { realm: user.realm, method: how.method },
    });
  });
}
