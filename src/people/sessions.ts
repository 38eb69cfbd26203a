// Console sessions (issue 17, a person's since issue 31): a random session id that travels only in
// an HttpOnly cookie; the database keeps its SHA-256. The CSRF token of a session is derived from
// its id (a second hash, under a label), so it needs no storage, differs from anything stored, and
// only the holder of the cookie can know it. A session that still owes a second factor opens only
// the pages that finish signing in (the console checks `stage`).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import type { Config } from "../config.ts";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import { ApiError } from "../shared/errors.ts";
import type { Realm } from "./roles.ts";
import {
  deleteDeadSessions,
  deleteSession,
  deleteUserSessions,
  insertSession,
  type SessionKind,
  type SessionRow,
  type SessionStage,
  touchSession,
} from "./sessions.sql.ts";

export type { SessionKind, SessionStage };

/** A signed-in person: the session's id (from the cookie), who they are and what they may do. */
export type ConsoleSession = SessionRow & { session_id: string };

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
const MAX_SECRET_LENGTH = 200;
/** Dead sessions removed per sign-in: the table stays small without a timer of its own. */
const PURGE_PER_SIGN_IN = 100;
/** A session that still owes a second factor lives this long; the signed-in one that replaces it, the full time. */
export const SECOND_FACTOR_MINUTES = 10;

export function sessionHash(session_id: string): Buffer {
  return createHash("sha256").update(`session\0${session_id}`, "utf8").digest();
}

export function csrfToken(session_id: string): string {
  return createHash("sha256").update(`csrf\0${session_id}`, "utf8").digest("base64url");
}

export function csrfTokenMatches(session_id: string, presented: unknown): boolean {
  if (typeof presented !== "string" || presented.length > MAX_SECRET_LENGTH) return false;
  const expected = Buffer.from(csrfToken(session_id));
  const given = Buffer.from(presented);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * A new session for a person, always under a new id (a session id is never carried over from
 * before sign-in: no fixation). `stage` says whether a second factor is still owed.
 */
export async function startSession(
  db: Executor,
  config: Pick<Config, "console_idle_minutes" | "console_session_hours">,
  user: { user_id: string; realm: Realm; partner_id: string | null },
  stage: SessionStage,
): Promise<string> {
  await deleteDeadSessions(db, config.console_idle_minutes, PURGE_PER_SIGN_IN);
  const session_id = randomBytes(32).toString("base64url");
  await insertSession(db, {
    session_hash: sessionHash(session_id),
    kind: user.realm,
    user_id: user.user_id,
    partner_id: user.partner_id,
    stage,
    lifetime_minutes: stage === "signed_in" ? config.console_session_hours * 60 : SECOND_FACTOR_MINUTES,
  });
  return session_id;
}

/** The live session behind a cookie value, or null (unknown, expired, idle, its person no longer active). */
export async function findSession(
  db: Executor,
  config: Pick<Config, "console_idle_minutes">,
  session_id: string | undefined,
  kind: SessionKind,
): Promise<ConsoleSession | null> {
  if (session_id === undefined || !SESSION_ID.test(session_id)) return null;
  const row = await touchSession(db, {
    session_hash: sessionHash(session_id),
    kind,
    idle_minutes: config.console_idle_minutes,
  });
  return row && { session_id, ...row };
}

/**
 * The second factor is given (or enrolled): the half-signed-in session is replaced by a signed-in
 * one under a new id (whoever saw the old id has nothing), which the caller sets as the cookie.
 */
export async function finishSignIn(
  db: Kysely<Database>,
  config: Pick<Config, "console_idle_minutes" | "console_session_hours">,
  session: Pick<ConsoleSession, "session_id" | "kind" | "user_id" | "partner_id">,
): Promise<string> {
  // One transaction: the half session gives way to the whole one once. Two tabs finishing the
  // same sign-in at once (a code in one, a passkey in the other): the second finds it gone.
  return db.transaction().execute(async (tx) => {
    if (!(await deleteSession(tx, sessionHash(session.session_id))))
      throw new ApiError("unauthorized", "This sign-in was finished already: sign in again.");
    return startSession(
      tx,
      config,
      { user_id: session.user_id, realm: session.kind, partner_id: session.partner_id },
      "signed_in",
    );
  });
}

export async function signOut(db: Executor, session_id: string): Promise<void> {
  await deleteSession(db, sessionHash(session_id));
}

/**
 * Ends a person's sessions at once (disabled, role changed, password reset), in the caller's
 * transaction; `keep_session_id` spares the session making the change (a password changed there).
 */
export async function endSessions(
  db: Executor,
  user_id: string,
  keep_session_id: string | null = null,
): Promise<void> {
  await deleteUserSessions(db, user_id, keep_session_id === null ? null : sessionHash(keep_session_id));
}
