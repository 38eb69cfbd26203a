// Passkeys (WebAuthn, issue 31) with @simplewebauthn/server: registering one (named by the person)
// and signing in with one as the second factor. Each ceremony's challenge is made here, kept in
// PostgreSQL for this console session (5 minutes) and taken by the statement that verifies the
// answer: single use, and never from another session. The relying party is the console's own host
// and origin (the caller reads them from the request). A refused passkey at sign-in is a sign-in
// failure like a wrong code.
import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import type { Actor } from "../shared/actor.ts";
import { ApiError } from "../shared/errors.ts";
import { firstFactorEnabled } from "./second-factor.ts";
import { sessionHash } from "./sessions.ts";
import { auditFailure, releaseAttempt, reserveAttempt } from "./sign-in.ts";
import {
  deletePasskey,
  insertPasskey,
  type PasskeyRow,
  recordPasskeyUse,
  replaceRecoveryCodes,
  selectPasskey,
  selectPasskeys,
  takeChallenge,
  upsertChallenge,
} from "./two-factor.sql.ts";
import { selectUser, type UserRow } from "./users.sql.ts";

/** The console as a WebAuthn relying party: its host name (RP ID) and origin, from the request. */
export type RelyingParty = { rp_id: string; origin: string; rp_name: string };

export const MAX_PASSKEYS_PER_PERSON = 10;
export const MAX_PASSKEY_NAME_LENGTH = 100;
const CHALLENGE_MINUTES = 5;
const CEREMONY_TIMEOUT_MS = CHALLENGE_MINUTES * 60_000;
/** A browser's answer to a ceremony is a few kilobytes; anything far larger is not one. */
const MAX_RESPONSE_LENGTH = 32_768;

type Person = Pick<UserRow, "user_id" | "email" | "name" | "partner_id" | "realm">;

export type Passkey = { credential_id: string; name: string; created_at: Date; last_used_at: Date | null };

export async function listPasskeys(db: Executor, user_id: string): Promise<Passkey[]> {
  const rows = await selectPasskeys(db, user_id, MAX_PASSKEYS_PER_PERSON);
  return rows.map(({ credential_id, name, created_at, last_used_at }) => ({
    credential_id,
    name,
    created_at,
    last_used_at,
  }));
}

/** Options for registering a new passkey in this session (its challenge kept for 5 minutes). */
export async function registrationOptions(
  db: Executor,
  input: { session_id: string; user: Person; rp: RelyingParty },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await selectPasskeys(db, input.user.user_id, MAX_PASSKEYS_PER_PERSON);
  const options = await generateRegistrationOptions({
    rpName: input.rp.rp_name,
    rpID: input.rp.rp_id,
    userName: input.user.email,
    userDisplayName: input.user.name || input.user.email,
    userID: new TextEncoder().encode(input.user.user_id),
    attestationType: "none",
    timeout: CEREMONY_TIMEOUT_MS,
    excludeCredentials: existing.map((k) => ({ id: k.credential_id, transports: transportsOf(k) })),
    authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
  });
  await upsertChallenge(db, {
    session_hash: sessionHash(input.session_id),
    ceremony: "registration",
    challenge: options.challenge,
    lifetime_minutes: CHALLENGE_MINUTES,
  });
  return options;
}

function transportsOf(row: PasskeyRow): AuthenticatorTransportFuture[] {
  return row.transports as AuthenticatorTransportFuture[];
}

function parsed<T>(response: string): T | null {
  if (response.length === 0 || response.length > MAX_RESPONSE_LENGTH) return null;
  try {
    const value: unknown = JSON.parse(response);
    return value !== null && typeof value === "object" ? (value as T) : null;
  } catch {
    return null;
  }
}

/**
 * Verifies the browser's answer to this session's registration challenge and keeps the passkey,
 * audited (user.passkey_added; user.two_factor_enabled and ten recovery codes when it is the
 * person's first second factor). Answers the recovery codes to show once (null: none new).
 * Refused (400 `invalid_request`): no live challenge, an answer that does not verify, too many passkeys.
 */
export async function addPasskey(
  db: Kysely<Database>,
  input: { session_id: string; user: Person; rp: RelyingParty; response: string; name: string; actor: Actor },
): Promise<{ recovery_codes: string[] | null }> {
  const refused = (why: string) => new ApiError("invalid_request", `The passkey was not added: ${why}`);
  const challenge = await takeChallenge(db, sessionHash(input.session_id), "registration");
  if (challenge === null) throw refused("the request expired; try again.");
  const response = parsed<RegistrationResponseJSON>(input.response);
  if (response === null) throw refused("the browser's answer could not be read.");
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: input.rp.origin,
      expectedRPID: input.rp.rp_id,
      requireUserVerification: false,
    });
  } catch {
    throw refused("the browser's answer does not verify.");
  }
  if (!verification.verified) throw refused("the browser's answer does not verify.");
  const { credential } = verification.registrationInfo;
  const name = input.name.trim().slice(0, MAX_PASSKEY_NAME_LENGTH) || "Passkey";
  return db.transaction().execute(async (tx) => {
    const user = await selectUser(tx, input.user.user_id, true);
    if (user === null) throw refused("no such person.");
    const held = await selectPasskeys(tx, user.user_id, MAX_PASSKEYS_PER_PERSON);
    if (held.length >= MAX_PASSKEYS_PER_PERSON)
      throw refused(`a person holds at most ${MAX_PASSKEYS_PER_PERSON} passkeys; remove one first.`);
    const added = await insertPasskey(tx, {
      credential_id: credential.id,
      user_id: user.user_id,
      public_key: Buffer.from(credential.publicKey),
      counter: credential.counter,
      transports: credential.transports ?? [],
      name,
    });
    if (!added) throw refused("this passkey is registered already.");
    await recordAudit(tx, {
      actor: input.actor,
      action: "user.passkey_added",
      partner_id: user.partner_id,
      target: { type: "user", id: user.user_id },
      details: { credential_id: credential.id, name },
    });
    const had_factor = user.totp_secret_sealed !== null || user.has_passkey;
    if (had_factor) return { recovery_codes: null };
    const codes = await firstFactorEnabled(tx, { user, actor: input.actor, method: "passkey", had_factor });
    return { recovery_codes: codes };
  });
}

/** Removes one of the person's passkeys, audited; recovery codes go too when no second factor is left. */
export async function removePasskey(
  db: Kysely<Database>,
  input: { user: Person; credential_id: string; actor: Actor },
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    await selectUser(tx, input.user.user_id, true);
    const name = await deletePasskey(tx, input.user.user_id, input.credential_id);
    if (name === null) return false;
    const after = await selectUser(tx, input.user.user_id);
    if (after !== null && after.totp_secret_sealed === null && !after.has_passkey)
      await replaceRecoveryCodes(tx, input.user.user_id, []);
    await recordAudit(tx, {
      actor: input.actor,
      action: "user.passkey_removed",
      partner_id: input.user.partner_id,
      target: { type: "user", id: input.user.user_id },
      details: { credential_id: input.credential_id, name },
    });
    return true;
  });
}

/** Options for signing in with one of the person's passkeys; null when they have none. */
export async function authenticationOptions(
  db: Executor,
  input: { session_id: string; user: Pick<UserRow, "user_id">; rp: RelyingParty },
): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
  const keys = await selectPasskeys(db, input.user.user_id, MAX_PASSKEYS_PER_PERSON);
  if (keys.length === 0) return null;
  const options = await generateAuthenticationOptions({
    rpID: input.rp.rp_id,
    allowCredentials: keys.map((k) => ({ id: k.credential_id, transports: transportsOf(k) })),
    userVerification: "preferred",
    timeout: CEREMONY_TIMEOUT_MS,
  });
  await upsertChallenge(db, {
    session_hash: sessionHash(input.session_id),
    ceremony: "authentication",
    challenge: options.challenge,
    lifetime_minutes: CHALLENGE_MINUTES,
  });
  return options;
}

/**
 * The sign-in's second step with a passkey: the browser's answer to this session's challenge, from
 * one of this person's passkeys, verified; its counter and last use recorded. Refused: 401
 * `unauthorized` (a sign-in failure), or 429 `rate_limited` once the account or address failed too often.
 */
export async function checkPasskey(
  db: Kysely<Database>,
  input: { session_id: string; user: UserRow; rp: RelyingParty; response: string; ip: string },
): Promise<void> {
  const attempter = { realm: input.user.realm, email: input.user.email, ip: input.ip };
  const reservation = await reserveAttempt(db, attempter);
  if (await passkeyVerifies(db, input)) {
    await releaseAttempt(db, reservation);
    return;
  }
  await auditFailure(db, attempter, input.user, { step: "second_factor" });
  throw new ApiError("unauthorized", "That passkey was not accepted.");
}

async function passkeyVerifies(
  db: Kysely<Database>,
  input: { session_id: string; user: UserRow; rp: RelyingParty; response: string },
): Promise<boolean> {
  const challenge = await takeChallenge(db, sessionHash(input.session_id), "authentication");
  const response = parsed<AuthenticationResponseJSON>(input.response);
  if (challenge === null || response === null || typeof response.id !== "string") return false;
  const key = await selectPasskey(db, input.user.user_id, response.id);
  if (key === null) return false;
  try {
    const verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: input.rp.origin,
      expectedRPID: input.rp.rp_id,
      credential: {
        id: key.credential_id,
        publicKey: new Uint8Array(key.public_key),
        counter: Number(key.counter),
        transports: transportsOf(key),
      },
      requireUserVerification: false,
    });
    if (!verification.verified) return false;
    return recordPasskeyUse(db, {
      credential_id: key.credential_id,
      read_counter: key.counter,
      new_counter: verification.authenticationInfo.newCounter,
    });
  } catch {
    return false;
  }
}
