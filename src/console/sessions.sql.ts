// SQL of the console's sessions (migration 0011): rows keyed by the SHA-256 of the session id.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

export type SessionKind = "partner" | "operator";

export type SessionRow = {
  kind: SessionKind;
  partner_id: string | null;
  key_id: string | null;
  operator_token_hash: Buffer | null;
};

export async function insertSession(
  db: Executor,
  row: SessionRow & { session_hash: Buffer; lifetime_hours: number },
): Promise<void> {
  await sql`
    insert into console_sessions (session_hash, kind, partner_id, key_id, operator_token_hash, expires_at)
    values (${row.session_hash}, ${row.kind}, ${row.partner_id}, ${row.key_id}, ${row.operator_token_hash},
            now() + make_interval(hours => ${row.lifetime_hours}))`.execute(db);
}

/**
 * The live session of this hash and kind, touched (last_seen_at = now) in the same statement; none
 * when it is past its absolute expiry or idle longer than `idle_minutes`.
 */
export async function touchSession(
  db: Executor,
  input: { session_hash: Buffer; kind: SessionKind; idle_minutes: number },
): Promise<SessionRow | null> {
  const result = await sql<SessionRow>`
    update console_sessions set last_seen_at = now()
    where session_hash = ${input.session_hash} and kind = ${input.kind}
      and expires_at > now()
      and last_seen_at > now() - make_interval(mins => ${input.idle_minutes})
    returning kind, partner_id, key_id, operator_token_hash`.execute(db);
  return result.rows[0] ?? null;
}

export async function deleteSession(db: Executor, session_hash: Buffer): Promise<void> {
  await sql`delete from console_sessions where session_hash = ${session_hash}`.execute(db);
}

/** Removes up to `limit` sessions that can no longer be used (run at each sign-in: no timer needed). */
export async function deleteDeadSessions(db: Executor, idle_minutes: number, limit: number): Promise<void> {
  await sql`
    delete from console_sessions where session_hash in (
      select session_hash from console_sessions
      where expires_at <= now() or last_seen_at <= now() - make_interval(mins => ${idle_minutes})
      limit ${limit})`.execute(db);
}
