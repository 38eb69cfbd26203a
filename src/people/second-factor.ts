// The second factor (issue 31): enrolling TOTP (a seed made, shown, confirmed with a first code, then
// kept sealed), recovery codes (ten, shown once, kept as SHA-256 hashes, each used once), and the
// sign-in step that takes a TOTP code or a recovery code. A code is taken once: a TOTP step is
// recorded by the statement that accepts it, a recovery code marked used by the one that spends it,
// so two requests with one code never both pass. Wrong codes are sign-in failures of the account
// and the address (sign-in.ts), throttled with the passwords' failures.
import { createHash, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Config } from "../config.ts";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import type { Actor } from "../shared/actor.ts";
import { ApiError } from "../shared/errors.ts";
import { sessionHash } from "./sessions.ts";
import { auditFailure, releaseAttempt, reserveAttempt } from "./sign-in.ts";
import { matchingStep, newSeed, openSeed, otpauthUri, sealSeed } from "./totp.ts";
import {
  acceptTotpStep,
  clearTotpSecret,
  countUnusedRecoveryCodes,
  deleteTotpEnrolment,
  replaceRecoveryCodes,
  selectPasskeys,
  selectTotpEnrolment,
  setTotpSecret,
  upsertTotpEnrolment,
  useRecoveryCode,
} from "./two-factor.sql.ts";
import { selectUser, type UserRow } from "./users.sql.ts";

export const RECOVERY_CODE_COUNT = 10;
/** An enrolment left unconfirmed this long is forgotten (the person starts again). */
const ENROLMENT_MINUTES = 15;
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/** What a person may type as a code: a 6-digit TOTP code or a recovery code, with spaces or dashes. */
const MAX_CODE_LENGTH = 40;

type Person = Pick<UserRow, "user_id" | "email" | "partner_id" | "realm">;

export type TotpEnrolment = { seed: string; uri: string };

/** Starts (or starts over) enrolling TOTP in this session: a new seed, kept sealed until confirmed. */
export async function startTotpEnrolment(
  db: Executor,
  config: Pick<Config, "webhook_secret_key">,
  input: { session_id: string; user: Person },
): Promise<TotpEnrolment> {
  const seed = newSeed();
  await upsertTotpEnrolment(db, {
    session_hash: sessionHash(input.session_id),
    user_id: input.user.user_id,
    secret_sealed: sealSeed(config, input.user.user_id, seed),
    lifetime_minutes: ENROLMENT_MINUTES,
  });
  return { seed, uri: otpauthUri(seed, input.user.email) };
}

/** The enrolment this session started and has not confirmed, if any (the page shows it again). */
export async function pendingTotpEnrolment(
  db: Executor,
  config: Pick<Config, "webhook_secret_key">,
  input: { session_id: string; user: Person },
): Promise<TotpEnrolment | null> {
  const row = await selectTotpEnrolment(db, sessionHash(input.session_id));
  if (row === null || row.user_id !== input.user.user_id) return null;
  const seed = openSeed(config, row.user_id, row.secret_sealed);
  return { seed, uri: otpauthUri(seed, input.user.email) };
}

/** Ten new recovery codes, `XXXXX-XXXXX` in base32 (50 random bits each). */
function newRecoveryCodes(): string[] {
  const codes: string[] = [];
  for (let i = 0; i < RECOVERY_CODE_COUNT; i++) {
    const bytes = randomBytes(10);
    let text = "";
    for (const byte of bytes) text += BASE32[byte & 31];
    codes.push(`${text.slice(0, 5)}-${text.slice(5)}`);
  }
  return codes;
}

/** A code as typed, without spaces, dashes or case: what is hashed and compared. */
function normalised(code: string): string {
  return code.replace(/[\s-]/g, "").toUpperCase();
}

function recoveryCodeHash(code: string): Buffer {
  return createHash("sha256")
    .update(`recovery\0${normalised(code)}`, "utf8")
    .digest();
}

/** Whether the person has any second factor now (read in the caller's transaction). */
async function hasSecondFactor(db: Executor, user_id: string): Promise<boolean> {
  const row = await selectUser(db, user_id);
  return row !== null && (row.totp_secret_sealed !== null || row.has_passkey);
}

/**
 * Ten new recovery codes for a person who just got their first second factor, in the caller's
 * transaction, audited as user.two_factor_enabled; null when they had one already (their codes stay).
 */
export async function firstFactorEnabled(
  db: Executor,
  input: { user: Person; actor: Actor; method: "totp" | "passkey"; had_factor: boolean },
): Promise<string[] | null> {
  await recordAudit(db, {
    actor: input.actor,
    action: "user.two_factor_enabled",
    partner_id: input.user.partner_id,
    target: { type: "user", id: input.user.user_id },
    details: { method: input.method },
  });
  if (input.had_factor) return null;
  const codes = newRecoveryCodes();
  await replaceRecoveryCodes(db, input.user.user_id, codes.map(recoveryCodeHash));
  return codes;
}

/**
 * Confirms this session's TOTP enrolment with a first code: the seed becomes the person's (the
 * code's step taken, so it cannot sign in later), audited. Answers the recovery codes to show once
 * (null when the person already had a second factor and keeps their codes); `false` when the code
 * is not right or there is no enrolment to confirm.
 */
export async function confirmTotpEnrolment(
  db: Kysely<Database>,
  config: Pick<Config, "webhook_secret_key">,
  input: { session_id: string; user: Person; code: string; actor: Actor },
): Promise<{ recovery_codes: string[] | null } | false> {
  const session_hash = sessionHash(input.session_id);
  return db.transaction().execute(async (tx) => {
    const row = await selectTotpEnrolment(tx, session_hash);
    if (row === null || row.user_id !== input.user.user_id) return false;
    const seed = openSeed(config, row.user_id, row.secret_sealed);
    const step = matchingStep(seed, normalised(input.code.slice(0, MAX_CODE_LENGTH)));
    if (step === null) return false;
    const current = await selectUser(tx, input.user.user_id, true);
    if (current === null) return false;
    if (current.totp_secret_sealed !== null)
      throw new ApiError("invalid_request", "An authenticator app is already set up; remove it first.");
    const had_factor = current.has_passkey;
    await setTotpSecret(tx, current.user_id, row.secret_sealed, step);
    await deleteTotpEnrolment(tx, session_hash);
    const codes = await firstFactorEnabled(tx, {
      user: input.user,
      actor: input.actor,
      method: "totp",
      had_factor,
    });
    return { recovery_codes: codes };
  });
}

/** Removes the person's authenticator app; their recovery codes go too when no passkey is left. */
export async function disableTotp(
  db: Kysely<Database>,
  input: { user: Person; actor: Actor },
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    await selectUser(tx, input.user.user_id, true);
    if (!(await clearTotpSecret(tx, input.user.user_id))) return false;
    if (!(await hasSecondFactor(tx, input.user.user_id)))
      await replaceRecoveryCodes(tx, input.user.user_id, []);
    await recordAudit(tx, {
      actor: input.actor,
      action: "user.two_factor_disabled",
      partner_id: input.user.partner_id,
      target: { type: "user", id: input.user.user_id },
      details: { method: "totp" },
    });
    return true;
  });
}

/** Ten new recovery codes replacing every old one (used or not); only for a person with a second factor. */
export async function regenerateRecoveryCodes(
  db: Kysely<Database>,
  input: { user: Person; actor: Actor },
): Promise<string[]> {
  return db.transaction().execute(async (tx) => {
    await selectUser(tx, input.user.user_id, true);
    if (!(await hasSecondFactor(tx, input.user.user_id)))
      throw new ApiError("invalid_request", "Set up an authenticator app or a passkey first.");
    const codes = newRecoveryCodes();
    await replaceRecoveryCodes(tx, input.user.user_id, codes.map(recoveryCodeHash));
    await recordAudit(tx, {
      actor: input.actor,
      action: "user.recovery_codes_regenerated",
      partner_id: input.user.partner_id,
      target: { type: "user", id: input.user.user_id },
      details: { count: RECOVERY_CODE_COUNT },
    });
    return codes;
  });
}

export function unusedRecoveryCodes(db: Executor, user_id: string): Promise<number> {
  return countUnusedRecoveryCodes(db, user_id);
}

/** Whether the person has passkeys (the sign-in step offers "Use a passkey"), and how many. */
export async function passkeyCount(db: Executor, user_id: string): Promise<number> {
  return (await selectPasskeys(db, user_id, 100)).length;
}

/**
 * The sign-in's second step with a typed code: a TOTP code (6 digits) or a recovery code. Answers
 * how the person proved it; refused: 401 `unauthorized` (counted as a sign-in failure of the account
 * and the address), or 429 `rate_limited` once they have failed too often (checked first).
 */
export async function checkSecondFactorCode(
  db: Kysely<Database>,
  config: Pick<Config, "webhook_secret_key">,
  input: { user: UserRow; code: string; ip: string },
): Promise<"totp" | "recovery_code"> {
  const attempter = { realm: input.user.realm, email: input.user.email, ip: input.ip };
  const reservation = await reserveAttempt(db, attempter);
  const code = normalised(input.code.slice(0, MAX_CODE_LENGTH));
  const method = await takeCode(db, config, input.user, code, input.ip);
  if (method !== null) {
    await releaseAttempt(db, reservation);
    return method;
  }
  await auditFailure(db, attempter, input.user, { step: "second_factor" });
  throw new ApiError("unauthorized", "That code is not right, or it was used already.");
}

async function takeCode(
  db: Kysely<Database>,
  config: Pick<Config, "webhook_secret_key">,
  user: UserRow,
  code: string,
  ip: string,
): Promise<"totp" | "recovery_code" | null> {
  if (/^\d{6}$/.test(code)) {
    if (user.totp_secret_sealed === null) return null;
    const step = matchingStep(openSeed(config, user.user_id, user.totp_secret_sealed), code);
    return step !== null && (await acceptTotpStep(db, user.user_id, step)) ? "totp" : null;
  }
  if (!/^[A-Z2-7]{10}$/.test(code)) return null;
  return db.transaction().execute(async (tx) => {
    if (!(await useRecoveryCode(tx, user.user_id, recoveryCodeHash(code)))) return null;
    await recordAudit(tx, {
      actor: { type: "user", id: user.user_id, email: user.email, ip },
      action: "user.recovery_code_used",
      partner_id: user.partner_id,
      target: { type: "user", id: user.user_id },
      details: { codes_left: await countUnusedRecoveryCodes(tx, user.user_id) },
    });
    return "recovery_code" as const;
  });
}
