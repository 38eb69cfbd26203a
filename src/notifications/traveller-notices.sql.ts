// SQL of the traveller notices (migration 0043): queued once per bundle and kind (the unique key),
// claimed with SKIP LOCKED under a lease as the confirmation outbox is, then marked sent, failed
// or skipped; and the eSIMs' List-Unsubscribe tokens. Private to src/notifications/.
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import type pg from "pg";
import type { Executor } from "../db/executor.ts";

export type NoticeKind = "usage_80" | "expires_24h";

export type NewNotice = {
  notice_id: string;
  bundle_order_id: string;
  kind: NoticeKind;
  iccid: string;
  partner_id: string;
  esim_order_id: string;
  package_name: string;
  data_used_mb: number;
  data_mb: number | null;
  expires_at: Date | null;
};

/** Queues the notices; one already there for a bundle and kind stays as it is. Returns how many are new. */
export async function insertNotices(db: Executor, notices: readonly NewNotice[]): Promise<number> {
  if (notices.length === 0) return 0;
  const column = <K extends keyof NewNotice>(name: K) => notices.map((notice) => notice[name]);
  const result = await sql`
    insert into traveller_notices (notice_id, bundle_order_id, kind, iccid, partner_id, esim_order_id,
                                   package_name, data_used_mb, data_mb, expires_at)
    select * from unnest(${column("notice_id")}::text[], ${column("bundle_order_id")}::text[],
                         ${column("kind")}::text[], ${column("iccid")}::text[], ${column("partner_id")}::text[],
                         ${column("esim_order_id")}::text[], ${column("package_name")}::text[],
                         ${column("data_used_mb")}::bigint[], ${column("data_mb")}::int[],
                         ${column("expires_at")}::timestamptz[])
    on conflict (bundle_order_id, iccid, kind) do nothing`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export type ClaimedNotice = NewNotice & { attempts: number; lease_token: string };

const CLAIM_SQL = `
update traveller_notices n
set due_at = clock_timestamp() + make_interval(secs => $2::float8), attempts = n.attempts + 1, lease_token = $3
from (
  select notice_id from traveller_notices
  where status = 'queued' and due_at <= now()
  order by due_at
  limit $1
  for update skip locked
) due
where n.notice_id = due.notice_id
returning n.notice_id, n.bundle_order_id, n.kind, n.iccid, n.partner_id, n.esim_order_id, n.package_name,
          n.data_used_mb::float8 as data_used_mb, n.data_mb, n.expires_at, n.attempts, n.lease_token`;

/** Claims up to `limit` due notices for `lease_ms`. */
export async function claimDueNotices(
  pool: pg.Pool,
  input: { limit: number; lease_ms: number },
): Promise<ClaimedNotice[]> {
  const token = randomBytes(12).toString("base64url");
  const { rows } = await pool.query<ClaimedNotice>(CLAIM_SQL, [input.limit, input.lease_ms / 1000, token]);
  return rows;
}

/** Only while this claim still holds the row: a claim taken since is left alone. */
export async function markNoticeSent(
  pool: pg.Pool,
  claim: { notice_id: string; lease_token: string; message_id: string },
): Promise<void> {
  await pool.query(
    `update traveller_notices set status = 'sent', sent_at = now(), message_id = $3, last_error = null
     where notice_id = $1 and lease_token = $2 and status = 'queued'`,
    [claim.notice_id, claim.lease_token, claim.message_id],
  );
}

/** Not to be sent (unsubscribed, turned off, the order refunded): final, with why. */
export async function markNoticeSkipped(
  pool: pg.Pool,
  claim: { notice_id: string; lease_token: string; reason: string },
): Promise<void> {
  await pool.query(
    `update traveller_notices set status = 'skipped', last_error = $3
     where notice_id = $1 and lease_token = $2 and status = 'queued'`,
    [claim.notice_id, claim.lease_token, claim.reason.slice(0, 500)],
  );
}

/** A failed attempt: due again after `retry_after_s`, or final `failed` once it used `max_attempts`. */
export async function recordNoticeFailure(
  pool: pg.Pool,
  failure: {
    notice_id: string;
    lease_token: string;
    error: string;
    retry_after_s: number;
    max_attempts: number;
  },
): Promise<void> {
  await pool.query(
    `update traveller_notices
     set due_at = clock_timestamp() + make_interval(secs => $3::float8), last_error = $4,
         status = case when attempts >= $5 then 'failed' else 'queued' end
     where notice_id = $1 and lease_token = $2 and status = 'queued'`,
    [
      failure.notice_id,
      failure.lease_token,
      failure.retry_after_s,
      failure.error.slice(0, 500),
      failure.max_attempts,
    ],
  );
}

export type Subscription = { unsubscribe_token: string; unsubscribed: boolean };

/** The eSIM's unsubscribe token, made with its first notice (the same one ever after). */
export async function subscriptionOf(pool: pg.Pool, iccid: string): Promise<Subscription> {
  const token = randomBytes(24).toString("base64url");
  // The no-op update makes the row come back whether it was inserted now or before.
  const { rows } = await pool.query<{ unsubscribe_token: string; unsubscribed: boolean }>(
    `insert into traveller_notice_subscriptions (iccid, unsubscribe_token) values ($1, $2)
     on conflict (iccid) do update set iccid = excluded.iccid
     returning unsubscribe_token, unsubscribed_at is not null as unsubscribed`,
    [iccid, token],
  );
  return rows[0]!;
}

/** The one-click unsubscribe: the eSIM of this token, now unsubscribed (again is the same); null: no such token. */
export async function unsubscribeByToken(pool: pg.Pool, token: string): Promise<{ iccid: string } | null> {
  const { rows } = await pool.query<{ iccid: string }>(
    `update traveller_notice_subscriptions set unsubscribed_at = coalesce(unsubscribed_at, now())
     where unsubscribe_token = $1 returning iccid`,
    [token],
  );
  return rows[0] ?? null;
}

/** Whether the token exists (the GET page asks before offering the button). */
export async function tokenExists(pool: pg.Pool, token: string): Promise<boolean> {
  const { rows } = await pool.query(
    "select 1 from traveller_notice_subscriptions where unsubscribe_token = $1",
    [token],
  );
  return rows.length > 0;
}
