// Console sessions: an API key (partner) or ADMIN_TOKEN (operator) exchanged for a random session
// id, which travels only in an HttpOnly cookie; the database keeps its SHA-256. The CSRF token of a
// session is derived from its id (a second hash, under a label), so it needs no storage, differs
// from anything stored, and only the holder of the cookie can know it.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import type { Config } from "../config.ts";
import type { Database } from "../db/schema.ts";
import { findApiKey, keyIsActive } from "../partners/api-key-lookup.ts";
import { hashApiKey, keyEnvironment } from "../partners/api-keys.ts";
import { keyRefusal, keyRefusalError, keyRestrictions } from "../partners/key-restrictions.ts";
import { ApiError } from "../shared/errors.ts";
import {
  deleteDeadSessions,
  deleteSession,
  insertSession,
  type SessionKind,
  type SessionRow,
  touchSession,
} from "./sessions.sql.ts";

export type { SessionKind };

/** A signed-in console user: the session's id (from the cookie) and whose it is. */
export type ConsoleSession = {
  session_id: string;
  kind: SessionKind;
  partner_id: string | null;
  key_id: string | null;
};

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
const MAX_SECRET_LENGTH = 200;
/** Dead sessions removed per sign-in: the table stays small without a timer of its own. */
const PURGE_PER_SIGN_IN = 100;

/** What an operator session remembers of ADMIN_TOKEN: a labelled hash, so a new token ends old sessions. */
function operatorTokenHash(token: string): Buffer {
  return createHash("sha256").update(`operator\0${token}`, "utf8").digest();
}

function sessionHash(session_id: string): Buffer {
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

async function startSession(
  db: Kysely<Database>,
  config: Config,
  owner: Omit<ConsoleSession, "session_id"> & { operator_token_hash: Buffer | null },
): Promise<ConsoleSession> {
  await deleteDeadSessions(db, config.console_idle_minutes, PURGE_PER_SIGN_IN);
  const session_id = randomBytes(32).toString("base64url");
  await insertSession(db, {
    ...owner,
    session_hash: sessionHash(session_id),
    lifetime_hours: config.console_session_hours,
  });
  return { session_id, kind: owner.kind, partner_id: owner.partner_id, key_id: owner.key_id };
}

/**
 * A partner signs in with one of its API keys: the same checks as the API's (format, environment,
 * revoked, and the key's restrictions). The console's forms change things, so signing in is judged
 * as a write from `ip`: a read-only key, or a key from outside its allowed IPs, gets no session
 * (else it would issue itself a full key). People's sign-in (issue 31) retires this.
 */
export async function signInPartner(
  db: Kysely<Database>,
  config: Config,
  api_key: string,
  ip: string,
): Promise<ConsoleSession> {
  const key = api_key.trim();
  const env = key.length <= MAX_SECRET_LENGTH ? keyEnvironment(key) : null;
  if (env === null) throw new ApiError("unauthorized", "That is not an API key.");
  if (env !== config.app_env) {
    throw new ApiError(
      "wrong_environment",
      `This is a ${env} key; this console is the ${config.app_env} environment.`,
    );
  }
  const record = await findApiKey(db, hashApiKey(key));
  if (!record || record.revoked) throw new ApiError("unauthorized", "The API key is unknown or revoked.");
  const restrictions = keyRestrictions(record.scope, record.allowed_ips);
  const refusal = restrictions === null ? null : keyRefusal(restrictions, "POST", ip);
  if (refusal !== null) throw keyRefusalError(refusal, ip);
  return startSession(db, config, {
    kind: "partner",
    partner_id: record.partner_id,
    key_id: record.key_id,
    operator_token_hash: null,
  });
}

/** The operator signs in with ADMIN_TOKEN, compared in constant time; without one there is no operator console. */
export async function signInOperator(
  db: Kysely<Database>,
  config: Config,
  token: string,
): Promise<ConsoleSession> {
  const expected = config.admin_token;
  if (expected === null) throw new ApiError("not_found", "The operator console needs ADMIN_TOKEN to be set.");
  const matches = timingSafeEqual(hashApiKey(token.trim()), hashApiKey(expected));
  if (!matches || token.length > MAX_SECRET_LENGTH)
    throw new ApiError("unauthorized", "That is not the operator token.");
  return startSession(db, config, {
    kind: "operator",
    partner_id: null,
    key_id: null,
    operator_token_hash: operatorTokenHash(expected),
  });
}

/** Whether the session's credential still works: its API key unrevoked, or ADMIN_TOKEN unchanged. */
async function credentialHolds(db: Kysely<Database>, config: Config, row: SessionRow): Promise<boolean> {
  if (row.kind === "partner") return keyIsActive(db, row.key_id!, row.partner_id!);
  const token = config.admin_token;
  return (
    token !== null &&
    row.operator_token_hash !== null &&
    operatorTokenHash(token).equals(row.operator_token_hash)
  );
}

/** The live session behind a cookie value, or null (unknown, expired, idle, its key revoked, a new ADMIN_TOKEN). */
export async function findSession(
  db: Kysely<Database>,
  config: Config,
  session_id: string | undefined,
  kind: SessionKind,
): Promise<ConsoleSession | null> {
  if (session_id === undefined || !SESSION_ID.test(session_id)) return null;
  const row = await touchSession(db, {
    session_hash: sessionHash(session_id),
    kind,
    idle_minutes: config.console_idle_minutes,
  });
  if (!row || !(await credentialHolds(db, config, row))) return null;
  return { session_id, kind: row.kind, partner_id: row.partner_id, key_id: row.key_id };
}

export async function signOut(db: Kysely<Database>, session_id: string): Promise<void> {
  await deleteSession(db, sessionHash(session_id));
}
