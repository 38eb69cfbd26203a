// SQL of the console sessions (migrations 0011, 0024): rows keyed by the SHA-256 of the session id, each a person's.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

export type SessionKind = "partner" | "operator";
export type SessionStage = "signed_in" | "second_factor" | "enrol_second_factor";

/** A live session and, read in the same statement, the person it belongs to. */
export type SessionRow = {
  kind: SessionKind;
  user_id: string;
  partner_id: string | null;
  stage: SessionStage;
  email: string;
  name: string;
  role: string;
  /** When the session began: a signed-in one, when its sign-in finished (the second factor replaces it). */
  signed_in_at: Date;
};

export async function insertSession(
  db: Executor,
  row: {
    session_hash: Buffer;
    kind: SessionKind;
    user_id: string;
    partner_id: string | null;
    stage: SessionStage;
    lifetime_minutes: number;
  },
): Promise<void> {
  await sql`
    insert into console_sessions (session_hash, kind, user_id, partner_id, stage, expires_at)
    values (${row.session_hash}, ${row.kind}, ${row.user_id}, ${row.partner_id}, ${row.stage},
            now() + make_interval(mins => ${row.lifetime_minutes}))`.execute(db);
}

/**
 * The live session of this hash and kind, touched (last_seen_at = now) in the same statement, with
 * its person; none when it is past its absolute expiry, idle longer than `idle_minutes`, or its
 * person is no longer active (disabling a person deletes their sessions too; this is the backstop).
 */
export async function touchSession(
  db: Executor,
  input: { session_hash: Buffer; kind: SessionKind; idle_minutes: number },
): Promise<SessionRow | null> {
  const result = await sql<SessionRow>`
    update console_sessions s set last_seen_at = now()
    from users u
    where s.session_hash = ${input.session_hash} and s.kind = ${input.kind}
      and s.expires_at > now()
      and s.last_seen_at > now() - make_interval(mins => ${input.idle_minutes})
      and u.user_id = s.user_id and u.status = 'active'
    returning s.kind, s.user_id, s.partner_id, s.stage, u.email, u.name, u.role, s.created_at as signed_in_at`.execute(
    db,
  );
  return result.rows[0] ?? null;
}

/** Deletes the session: whether it was there (a second tab finishing the same sign-in finds it gone). */
export async function deleteSession(db: Executor, session_hash: Buffer): Promise<boolean> {
  const result = await sql`delete from console_sessions where session_hash = ${session_hash}`.execute(db);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

/** Ends every session of a person, or every one but `keep` (a password changed in this session). */
export async function deleteUserSessions(db: Executor, user_id: string, keep: Buffer | null): Promise<void> {
  await sql`
    delete from console_sessions
    where user_id = ${user_id} ${keep === null ? sql`` : sql`and session_hash <> ${keep}`}`.execute(db);
}

/** Removes up to `limit` sessions that can no longer be used (run at each sign-in: no timer needed). */
export async function deleteDeadSessions(db: Executor, idle_minutes: number, limit: number): Promise<void> {
  await sql`
    delete from console_sessions where session_hash in (
      select session_hash from console_sessions
      where expires_at <= now() or last_seen_at <= now() - make_interval(mins => ${idle_minutes})
      limit ${limit})`.execute(db);
}
