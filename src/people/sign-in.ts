// Sign-in, the password step (issue 31). Every refusal reads the same ("the email or password is
// not right") and costs the same (an unknown email is checked against a decoy hash), so the page
// tells nobody which emails have accounts. Failures are counted per account and per address in
// PostgreSQL, shared by every process: past 5 failures of an account, or 30 of an address, in 15
// minutes, the next attempt is 429 `rate_limited` with Retry-After, before any password is hashed.
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import { ApiError } from "../shared/errors.ts";
import { decoyHash, MAX_PASSWORD_LENGTH, verifyPassword } from "./passwords.ts";
import type { Realm } from "./roles.ts";
import {
  countFailures,
  deleteOldFailures,
  insertFailures,
  markSignedIn,
  selectUserByEmail,
  type UserRow,
} from "./users.sql.ts";

export const FAILURE_WINDOW_MINUTES = 15;
export const ACCOUNT_FAILURES = 5;
export const ADDRESS_FAILURES = 30;
const PURGE_PER_ATTEMPT = 100;
const MAX_EMAIL_LENGTH = 254;

export type SignInAttempt = { realm: Realm; email: string; password: string; ip: string };
/** Who is trying, for the throttle: the account (realm and email) and the address. */
type Attempter = Pick<SignInAttempt, "realm" | "email" | "ip">;

function subjects(input: Attempter): { account: string; address: string } {
  return {
    account: `account:${input.realm}:${input.email.trim().toLowerCase().slice(0, MAX_EMAIL_LENGTH)}`,
    address: `address:${input.realm}:${input.ip.slice(0, 64)}`,
  };
}

/**
 * 429 `rate_limited` with Retry-After when the account or the address has failed too often in the
 * window (the password step and the second-factor step count together).
 */
export async function refuseWhenThrottled(db: Kysely<Database>, input: Attempter): Promise<void> {
  const { account, address } = subjects(input);
  const counts = await countFailures(db, [account, address], FAILURE_WINDOW_MINUTES);
  for (const { subject, failures, oldest } of counts) {
    const limit = subject === account ? ACCOUNT_FAILURES : ADDRESS_FAILURES;
    if (failures < limit || oldest === null) continue;
    const free_at = oldest.getTime() + FAILURE_WINDOW_MINUTES * 60_000;
    const retry_after = Math.max(1, Math.ceil((free_at - Date.now()) / 1000));
    throw new ApiError(
      "rate_limited",
      `Too many failed sign-ins ${subject === account ? "for this account" : "from this address"}; try again in ${Math.ceil(retry_after / 60)} minutes.`,
      { headers: { "retry-after": String(retry_after) } },
    );
  }
}

/**
 * Counts the failure and audits it: the actor is the person the email named (id null when none).
 * `step`: which step failed, in the entry's details (a wrong second factor says the password was right).
 */
export async function recordFailure(
  db: Kysely<Database>,
  input: Attempter,
  user: Pick<UserRow, "user_id" | "partner_id"> | null,
  step: "password" | "second_factor" = "password",
): Promise<void> {
  const { account, address } = subjects(input);
  await db.transaction().execute(async (tx) => {
    await insertFailures(tx, [account, address]);
    await recordAudit(tx, {
      actor: {
        type: "user",
        id: user?.user_id ?? null,
        email: input.email.slice(0, MAX_EMAIL_LENGTH),
        ip: input.ip,
      },
      action: "user.sign_in_failed",
      partner_id: user?.partner_id ?? null,
      target: { type: "user", id: user?.user_id ?? null },
      details: step === "password" ? { realm: input.realm } : { realm: input.realm, step },
    });
  });
}

/**
 * The person whose email and password these are, active: the caller then asks for a second factor
 * or starts the session. Refused: 401 `unauthorized`, one message for every cause.
 */
export async function checkPassword(db: Kysely<Database>, input: SignInAttempt): Promise<UserRow> {
  await refuseWhenThrottled(db, input);
  await deleteOldFailures(db, FAILURE_WINDOW_MINUTES, PURGE_PER_ATTEMPT);
  const email = input.email.trim();
  const user =
    email.length > 0 && email.length <= MAX_EMAIL_LENGTH
      ? await selectUserByEmail(db, input.realm, email)
      : null;
  const hash = user?.password_hash ?? (await decoyHash());
  const matches =
    input.password.length <= MAX_PASSWORD_LENGTH && (await verifyPassword(input.password, hash));
  if (!matches || user === null || user.password_hash === null || user.status !== "active") {
    await recordFailure(db, input, user);
    throw new ApiError("unauthorized", "The email or password is not right.");
  }
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
