// SQL of the second factor (migrations 0023, 0025): a person's TOTP seed and last accepted step,
// recovery codes, passkeys, and the short-lived state of an enrolment or a WebAuthn ceremony.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

// --- TOTP -----------------------------------------------------------------------------------------

/** A seed being enrolled by this session (replaces one it was enrolling before). */
export async function upsertTotpEnrolment(
  db: Executor,
  row: { session_hash: Buffer; user_id: string; secret_sealed: Buffer; lifetime_minutes: number },
): Promise<void> {
  await sql`
    insert into totp_enrolments (session_hash, user_id, secret_sealed, expires_at)
    values (${row.session_hash}, ${row.user_id}, ${row.secret_sealed},
            now() + make_interval(mins => ${row.lifetime_minutes}))
    on conflict (session_hash) do update
      set user_id = excluded.user_id, secret_sealed = excluded.secret_sealed,
          expires_at = excluded.expires_at`.execute(db);
}

export async function selectTotpEnrolment(
  db: Executor,
  session_hash: Buffer,
): Promise<{ user_id: string; secret_sealed: Buffer } | null> {
  const result = await sql<{ user_id: string; secret_sealed: Buffer }>`
    select user_id, secret_sealed from totp_enrolments
    where session_hash = ${session_hash} and expires_at > now()`.execute(db);
  return result.rows[0] ?? null;
}

export async function deleteTotpEnrolment(db: Executor, session_hash: Buffer): Promise<void> {
  await sql`delete from totp_enrolments where session_hash = ${session_hash}`.execute(db);
}

/** The person's seed from now on; `last_step` the step of the code that confirmed it (not taken again). */
export async function setTotpSecret(
  db: Executor,
  user_id: string,
  secret_sealed: Buffer,
  last_step: number,
): Promise<void> {
  await sql`
    update users set totp_secret_sealed = ${secret_sealed}, totp_last_step = ${last_step}
    where user_id = ${user_id}`.execute(db);
}

export async function clearTotpSecret(db: Executor, user_id: string): Promise<boolean> {
  const result = await sql`
    update users set totp_secret_sealed = null, totp_last_step = null
    where user_id = ${user_id} and totp_secret_sealed is not null`.execute(db);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

/**
 * Takes a code's time step, once: true when `step` is later than every step accepted before, and
 * then recorded in the same statement. Two requests with one code race on this row; the second
 * finds `totp_last_step = step` and gets false (no replay within the ±1 step window).
 */
export async function acceptTotpStep(db: Executor, user_id: string, step: number): Promise<boolean> {
  const result = await sql`
    update users set totp_last_step = ${step}
    where user_id = ${user_id} and totp_secret_sealed is not null
      and (totp_last_step is null or totp_last_step < ${step})
    returning user_id`.execute(db);
  return result.rows.length === 1;
}

// --- Recovery codes -------------------------------------------------------------------------------

export async function replaceRecoveryCodes(db: Executor, user_id: string, hashes: Buffer[]): Promise<void> {
  await sql`delete from recovery_codes where user_id = ${user_id}`.execute(db);
  if (hashes.length === 0) return;
  await sql`
    insert into recovery_codes (user_id, code_hash)
    select ${user_id}, unnest(${hashes}::bytea[])`.execute(db);
}

/** Uses a code once: true for the one statement that marks it used. */
export async function useRecoveryCode(db: Executor, user_id: string, code_hash: Buffer): Promise<boolean> {
  const result = await sql`
    update recovery_codes set used_at = now()
    where user_id = ${user_id} and code_hash = ${code_hash} and used_at is null
    returning user_id`.execute(db);
  return result.rows.length === 1;
}

export async function countUnusedRecoveryCodes(db: Executor, user_id: string): Promise<number> {
  const result = await sql<{ left: number }>`
    select count(*)::int as left from recovery_codes
    where user_id = ${user_id} and used_at is null`.execute(db);
  return result.rows[0]?.left ?? 0;
}

// --- Passkeys -------------------------------------------------------------------------------------

export type PasskeyRow = {
  credential_id: string;
  user_id: string;
  public_key: Buffer;
  counter: string;
  transports: string[];
  name: string;
  created_at: Date;
  last_used_at: Date | null;
};

/** A person's passkeys, oldest first; a person holds at most `limit`. */
export async function selectPasskeys(db: Executor, user_id: string, limit: number): Promise<PasskeyRow[]> {
  const result = await sql<PasskeyRow>`
    select credential_id, user_id, public_key, counter, transports, name, created_at, last_used_at
    from passkeys where user_id = ${user_id}
    order by created_at, credential_id limit ${limit}`.execute(db);
  return result.rows;
}

export async function selectPasskey(
  db: Executor,
  user_id: string,
  credential_id: string,
): Promise<PasskeyRow | null> {
  const result = await sql<PasskeyRow>`
    select credential_id, user_id, public_key, counter, transports, name, created_at, last_used_at
    from passkeys where user_id = ${user_id} and credential_id = ${credential_id}`.execute(db);
  return result.rows[0] ?? null;
}

/** False when the credential is already registered (to anyone). */
export async function insertPasskey(
  db: Executor,
  row: {
    credential_id: string;
    user_id: string;
    public_key: Buffer;
    counter: number;
    transports: string[];
    name: string;
  },
): Promise<boolean> {
  const result = await sql`
    insert into passkeys (credential_id, user_id, public_key, counter, transports, name)
    values (${row.credential_id}, ${row.user_id}, ${row.public_key}, ${row.counter},
            ${row.transports}::text[], ${row.name})
    on conflict (credential_id) do nothing
    returning credential_id`.execute(db);
  return result.rows.length === 1;
}

export async function deletePasskey(
  db: Executor,
  user_id: string,
  credential_id: string,
): Promise<string | null> {
  const result = await sql<{ name: string }>`
    delete from passkeys where user_id = ${user_id} and credential_id = ${credential_id}
    returning name`.execute(db);
  return result.rows[0]?.name ?? null;
}

/**
 * Records a use: the counter the authenticator reported, moved forward only from the one read
 * before verification (two uses racing with one counter value: the second finds it moved and fails).
 * Authenticators that keep no counter report 0 every time; those pass with the counter left at 0.
 */
export async function recordPasskeyUse(
  db: Executor,
  input: { credential_id: string; read_counter: string; new_counter: number },
): Promise<boolean> {
  const result = await sql`
    update passkeys set counter = ${input.new_counter}, last_used_at = now()
    where credential_id = ${input.credential_id} and counter = ${input.read_counter}
    returning credential_id`.execute(db);
  return result.rows.length === 1;
}

// --- WebAuthn challenges --------------------------------------------------------------------------

export type Ceremony = "registration" | "authentication";

/** This session's challenge for the ceremony (replacing one it had). */
export async function upsertChallenge(
  db: Executor,
  row: { session_hash: Buffer; ceremony: Ceremony; challenge: string; lifetime_minutes: number },
): Promise<void> {
  await sql`
    insert into webauthn_challenges (session_hash, ceremony, challenge, expires_at)
    values (${row.session_hash}, ${row.ceremony}, ${row.challenge},
            now() + make_interval(mins => ${row.lifetime_minutes}))
    on conflict (session_hash, ceremony) do update
      set challenge = excluded.challenge, expires_at = excluded.expires_at`.execute(db);
}

/** Takes the challenge (deleted by this statement: single use); null when none, or expired. */
export async function takeChallenge(
  db: Executor,
  session_hash: Buffer,
  ceremony: Ceremony,
): Promise<string | null> {
  const result = await sql<{ challenge: string; live: boolean }>`
    delete from webauthn_challenges where session_hash = ${session_hash} and ceremony = ${ceremony}
    returning challenge, expires_at > now() as live`.execute(db);
  const row = result.rows[0];
  return row?.live ? row.challenge : null;
}
