// People's records, for the other domains and the console: read a person, add one. Their SQL is
// users.sql.ts; who may do what is roles.ts.
import type { Executor } from "../db/executor.ts";
import { ApiError } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { hashPassword } from "./passwords.ts";
import { isRole, type Realm } from "./roles.ts";
import {
  activateUser,
  activateUserWithoutPassword,
  insertUser,
  selectUser,
  selectUserByEmail,
  selectUsers,
  type UserRow,
} from "./users.sql.ts";

export type { UserRow };

/** What a page or an API answer shows of a person: never a hash or a secret. */
export type User = {
  user_id: string;
  email: string;
  name: string;
  role: string;
  status: "invited" | "active" | "disabled";
  created_at: string;
  last_sign_in_at: string | null;
  two_factor: "none" | "totp" | "passkey";
};

export function renderUser(row: UserRow): User {
  return {
    user_id: row.user_id,
    email: row.email,
    name: row.name,
    role: row.role,
    status: row.status,
    created_at: row.created_at.toISOString(),
    last_sign_in_at: row.last_sign_in_at?.toISOString() ?? null,
    two_factor: row.has_passkey ? "passkey" : row.totp_secret_sealed !== null ? "totp" : "none",
  };
}

export function findUser(db: Executor, user_id: string): Promise<UserRow | null> {
  return selectUser(db, user_id);
}

export function findUserByEmail(db: Executor, realm: Realm, email: string): Promise<UserRow | null> {
  return selectUserByEmail(db, realm, email.trim());
}

/**
 * A new person, `invited` (no password yet): null when the realm already has someone with that
 * email (compared case-insensitively). The role must be one of the realm's.
 */
export async function addUser(
  db: Executor,
  input: { realm: Realm; partner_id: string | null; email: string; name?: string; role: string },
): Promise<UserRow | null> {
  if (!isRole(input.realm, input.role)) throw new Error(`role ${input.role} is not a ${input.realm} role`);
  if ((input.realm === "partner") !== (input.partner_id !== null))
    throw new Error("a partner user names its partner; an operator user none");
  return insertUser(db, {
    user_id: newId("user"),
    realm: input.realm,
    partner_id: input.partner_id,
    email: input.email.trim(),
    name: (input.name ?? "").trim(),
    role: input.role,
  });
}

/**
 * An invited person becomes active with this password (already checked by passwordProblem, or a
 * hash made once for many, as tests do). False when the person is no longer `invited`.
 */
export async function activateWithPassword(
  db: Executor,
  user_id: string,
  password: { plain: string } | { hash: string },
): Promise<boolean> {
  const hash = "hash" in password ? password.hash : await hashPassword(password.plain);
  return activateUser(db, user_id, hash);
}

/** A page of a team's people, oldest first (cursor-paged like every list of partner objects). */
export async function listUsers(
  db: Executor,
  input: { realm: Realm; partner_id: string | null; limit: number; cursor: string | null },
): Promise<{ data: UserRow[]; has_more: boolean; next_cursor: string | null }> {
  const after = input.cursor === null ? null : decodeUserCursor(input.cursor);
  const rows = await selectUsers(db, { ...input, limit: input.limit + 1, after });
  const data = rows.slice(0, input.limit);
  const last = data.at(-1);
  const has_more = rows.length > input.limit;
  return {
    data,
    has_more,
    next_cursor: has_more && last ? encodeUserCursor(last) : null,
  };
}

/** The people a page shows at most (a team is small; the API pages through any size). */
export const MAX_TEAM_PAGE = 100;

function encodeUserCursor(row: UserRow): string {
  // Microseconds matter: PostgreSQL keeps them, a Date keeps milliseconds; the text keeps both.
  return Buffer.from(`us:${row.created_at_text}|${row.user_id}`).toString("base64url");
}

function decodeUserCursor(cursor: string): { created_at: string; user_id: string } {
  const match = /^us:([0-9T:.+\- ]{10,40})\|(usr_[A-Za-z0-9_-]{16,64})$/.exec(
    Buffer.from(cursor, "base64url").toString("utf8"),
  );
  if (!match)
    throw new ApiError("invalid_request", "The cursor is not one this API returned.", {
      errors: [{ field: "cursor", code: "invalid_format", message: "is not a valid cursor" }],
    });
  return { created_at: match[1]!, user_id: match[2]! };
}

/**
 * An invited person becomes active without a password: single sign-on vouched for them (they may
 * set a password later through a reset). False when the person is no longer `invited`.
 */
export function activateWithoutPassword(db: Executor, user_id: string): Promise<boolean> {
  return activateUserWithoutPassword(db, user_id);
}
