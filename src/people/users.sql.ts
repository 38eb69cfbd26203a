// SQL of people (migration 0023): users, their one-time links and failed sign-ins.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Realm } from "./roles.ts";

export type UserRow = {
  user_id: string;
  realm: Realm;
  partner_id: string | null;
  email: string;
  name: string;
  role: string;
  status: "invited" | "active" | "disabled";
  password_hash: string | null;
  totp_secret_sealed: Buffer | null;
  totp_last_step: string | null;
  created_at: Date;
  /** created_at as PostgreSQL writes it (microseconds kept): a list's cursor. */
  created_at_text: string;
  last_sign_in_at: Date | null;
  /** Whether the person holds a passkey (read with the row: the sign-in needs it). */
  has_passkey: boolean;
};

const USER_COLUMNS = sql`
  u.user_id, u.realm, u.partner_id, u.email, u.name, u.role, u.status, u.password_hash,
  u.totp_secret_sealed, u.totp_last_step, u.created_at, u.created_at::text as created_at_text, u.last_sign_in_at,
  exists (select 1 from passkeys k where k.user_id = u.user_id) as has_passkey`;

export async function insertUser(
  db: Executor,
  row: {
    user_id: string;
    realm: Realm;
    partner_id: string | null;
    email: string;
    name: string;
    role: string;
  },
): Promise<UserRow | null> {
  const result = await sql<UserRow>`
    with inserted as (
      insert into users (user_id, realm, partner_id, email, name, role)
      values (${row.user_id}, ${row.realm}, ${row.partner_id}, ${row.email}, ${row.name}, ${row.role})
      on conflict (realm, lower(email)) do nothing
      returning *)
    select ${USER_COLUMNS} from inserted u`.execute(db);
  return result.rows[0] ?? null;
}

export async function selectUserByEmail(db: Executor, realm: Realm, email: string): Promise<UserRow | null> {
  const result = await sql<UserRow>`
    select ${USER_COLUMNS} from users u where u.realm = ${realm} and lower(u.email) = lower(${email})`.execute(
    db,
  );
  return result.rows[0] ?? null;
}

export async function selectUser(db: Executor, user_id: string, lock = false): Promise<UserRow | null> {
  const result = await sql<UserRow>`
    select ${USER_COLUMNS} from users u where u.user_id = ${user_id}
    ${lock ? sql`for update of u` : sql``}`.execute(db);
  return result.rows[0] ?? null;
}

export async function markSignedIn(db: Executor, user_id: string): Promise<void> {
  await sql`update users set last_sign_in_at = now() where user_id = ${user_id}`.execute(db);
}

export async function setPasswordHash(db: Executor, user_id: string, password_hash: string): Promise<void> {
  await sql`update users set password_hash = ${password_hash} where user_id = ${user_id}`.execute(db);
}

/**
 * Serializes the attempts on one account (a transaction-scoped advisory lock on the subject's hash),
 * so that counting and reserving a failure is one step for parallel attempts.
 */
export async function lockSubject(db: Executor, subject: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${subject}, 31))`.execute(db);
}

/**
 * Failures of each subject in the window, and when the one that must leave it for the subject to be
 * under `limit` again does (the (count - limit + 1)-th oldest), null while under it.
 */
export async function countFailures(
  db: Executor,
  subjects: Array<{ subject: string; limit: number }>,
  window_minutes: number,
): Promise<Array<{ subject: string; failures: number; frees_at: Date | null }>> {
  const result = await sql<{ subject: string; failures: number; frees_at: Date | null }>`
    select s.subject,
           (select count(*)::int from sign_in_failures f
             where f.subject = s.subject and f.failed_at > now() - make_interval(mins => ${window_minutes})) as failures,
           (select f.failed_at + make_interval(mins => ${window_minutes}) from sign_in_failures f
             where f.subject = s.subject and f.failed_at > now() - make_interval(mins => ${window_minutes})
             order by f.failed_at desc offset s.lim - 1 limit 1) as frees_at
    from unnest(${subjects.map((s) => s.subject)}::text[], ${subjects.map((s) => s.limit)}::int[]) as s (subject, lim)`.execute(
    db,
  );
  return result.rows;
}

/** Reserves one failure per subject: the ids, to delete when the attempt turns out right. */
export async function insertFailures(db: Executor, subjects: string[]): Promise<string[]> {
  const result = await sql<{ failure_id: string }>`
    insert into sign_in_failures (subject) select unnest(${subjects}::text[]) returning failure_id`.execute(
    db,
  );
  return result.rows.map((r) => r.failure_id);
}

export async function deleteFailures(db: Executor, failure_ids: string[]): Promise<void> {
  await sql`delete from sign_in_failures where failure_id = any(${failure_ids}::bigint[])`.execute(db);
}

/** Removes up to `limit` failures older than the window (run at each sign-in: no timer needed). */
export async function deleteOldFailures(db: Executor, window_minutes: number, limit: number): Promise<void> {
  await sql`
    delete from sign_in_failures where failure_id in (
      select failure_id from sign_in_failures
      where failed_at <= now() - make_interval(mins => ${window_minutes}) limit ${limit})`.execute(db);
}

/** An invited person chooses a password: active from now on. False when not (or no longer) invited. */
export async function activateUser(db: Executor, user_id: string, password_hash: string): Promise<boolean> {
  const result = await sql`
    update users set password_hash = ${password_hash}, status = 'active'
    where user_id = ${user_id} and status = 'invited'`.execute(db);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

export type TokenKind = "invitation" | "password_reset";

export async function insertUserToken(
  db: Executor,
  row: { token_hash: Buffer; user_id: string; kind: TokenKind; valid_minutes: number },
): Promise<void> {
  await sql`
    insert into user_tokens (token_hash, user_id, kind, expires_at)
    values (${row.token_hash}, ${row.user_id}, ${row.kind},
            now() + make_interval(mins => ${row.valid_minutes}))`.execute(db);
}

export type UserTokenRow = {
  user_id: string;
  kind: TokenKind;
  expired: boolean;
  used: boolean;
};

/** The token's row, locked until the transaction ends (a link is used by one request at a time). */
export async function lockUserToken(
  db: Executor,
  token_hash: Buffer,
  kind: TokenKind,
): Promise<UserTokenRow | null> {
  const result = await sql<UserTokenRow>`
    select user_id, kind, expires_at <= now() as expired, used_at is not null as used
    from user_tokens where token_hash = ${token_hash} and kind = ${kind}
    for update`.execute(db);
  return result.rows[0] ?? null;
}

export async function markUserTokenUsed(db: Executor, token_hash: Buffer): Promise<void> {
  await sql`update user_tokens set used_at = now() where token_hash = ${token_hash}`.execute(db);
}

/** Deletes up to `limit` links that expired before `before` (purge-user-tokens.ts); how many. */
export async function deleteUserTokensExpiredBefore(
  db: Executor,
  before: Date,
  limit: number,
): Promise<number> {
  const result = await sql`
    delete from user_tokens where token_hash in (
      select token_hash from user_tokens where expires_at < ${before} limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** Links of this kind not yet used: a new one replaces them (the newest link is the only one that works). */
export async function retireUserTokens(db: Executor, user_id: string, kind: TokenKind): Promise<void> {
  await sql`
    update user_tokens set used_at = now()
    where user_id = ${user_id} and kind = ${kind} and used_at is null`.execute(db);
}

/** Links of this kind asked for the person since `minutes` ago (the reset form's budget). */
export async function countRecentTokens(
  db: Executor,
  user_id: string,
  kind: TokenKind,
  minutes: number,
): Promise<number> {
  const result = await sql<{ n: number }>`
    select count(*)::int as n from user_tokens
    where user_id = ${user_id} and kind = ${kind}
      and created_at > now() - make_interval(mins => ${minutes})`.execute(db);
  return result.rows[0]?.n ?? 0;
}

/**
 * A page of a realm's people (of one partner, or the operator's), oldest first by (created_at,
 * user_id); `after` is the last row of the page before.
 */
export async function selectUsers(
  db: Executor,
  input: {
    realm: Realm;
    partner_id: string | null;
    limit: number;
    after: { created_at: string; user_id: string } | null;
  },
): Promise<UserRow[]> {
  const after = input.after;
  const result = await sql<UserRow>`
    select ${USER_COLUMNS} from users u
    where u.realm = ${input.realm}
      -- Equality for a partner (its index serves it), is null for the operator's people.
      and ${input.partner_id === null ? sql`u.partner_id is null` : sql`u.partner_id = ${input.partner_id}`}
      ${after ? sql`and (u.created_at, u.user_id) > (${after.created_at}::timestamptz, ${after.user_id})` : sql``}
    order by u.created_at, u.user_id
    limit ${input.limit}`.execute(db);
  return result.rows;
}

/**
 * The partner's active owners, locked (in user_id order, so two transactions take them in the
 * same order): a change that could leave the partner without one holds them until it commits.
 */
export async function lockActiveOwners(db: Executor, partner_id: string): Promise<string[]> {
  const result = await sql<{ user_id: string }>`
    select user_id from users
    where partner_id = ${partner_id} and role = 'owner' and status = 'active'
    order by user_id
    for update`.execute(db);
  return result.rows.map((row) => row.user_id);
}

export async function updateUserRole(db: Executor, user_id: string, role: string): Promise<void> {
  await sql`update users set role = ${role} where user_id = ${user_id}`.execute(db);
}

export async function updateUserStatus(
  db: Executor,
  user_id: string,
  status: "active" | "disabled",
): Promise<void> {
  await sql`update users set status = ${status} where user_id = ${user_id}`.execute(db);
}

export async function updateUserName(db: Executor, user_id: string, name: string): Promise<void> {
  await sql`update users set name = ${name} where user_id = ${user_id}`.execute(db);
}

/** An invited person who signs in with SSO: active from now on, without a password. False when not invited. */
export async function activateUserWithoutPassword(db: Executor, user_id: string): Promise<boolean> {
  const result = await sql`
    update users set status = 'active' where user_id = ${user_id} and status = 'invited'`.execute(db);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

/**
 * Removes a person who was invited and never came (no live invitation link, never signed in), so
 * the email can be invited elsewhere: a lapsed invitation must not hold an address for ever.
 * False when the person is not such a one (anyone who came, or whose link still works, stays).
 */
export async function deleteLapsedInvitee(db: Executor, user_id: string): Promise<boolean> {
  const lapsed = await sql<{ user_id: string }>`
    select u.user_id from users u
    where u.user_id = ${user_id} and u.status = 'invited' and u.last_sign_in_at is null
      and not exists (select 1 from user_tokens t
                      where t.user_id = u.user_id and t.used_at is null and t.expires_at > now())
    for update`.execute(db);
  if (lapsed.rows.length === 0) return false;
  await sql`delete from user_tokens where user_id = ${user_id}`.execute(db);
  await sql`delete from console_sessions where user_id = ${user_id}`.execute(db);
  await sql`delete from users where user_id = ${user_id}`.execute(db);
  return true;
}

/** The operator's active admins, locked in one order (the operator always keeps one, as a partner an owner). */
export async function lockActiveOperatorAdmins(db: Executor): Promise<string[]> {
  const result = await sql<{ user_id: string }>`
    select user_id from users
    where realm = 'operator' and role = 'admin' and status = 'active'
    order by user_id
    for update`.execute(db);
  return result.rows.map((row) => row.user_id);
}
