// SQL of resent confirmation emails (migration 0029): one row per resend, the outbox and the log in
// one. Inserted by the request's transaction; claimed with SKIP LOCKED under a lease like
// email_outbox rows (email-outbox.sql.ts); marked sent by one statement once the relay accepted it.
// Private to src/notifications/.
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import type pg from "pg";
import type { Executor } from "../db/executor.ts";

export type ResendRow = {
  email_id: string;
  order_id: string;
  recipient: string;
  created_at: Date;
  attempts: number;
  last_error: string | null;
  sent_at: Date | null;
};

const RESEND_COLUMNS = sql`email_id, order_id, recipient, created_at, attempts, last_error, sent_at`;

export async function insertResend(
  db: Executor,
  row: {
    email_id: string;
    order_id: string;
    partner_id: string;
    recipient: string;
    to_other_address: boolean;
    idempotency_key: string | null;
  },
): Promise<void> {
  await sql`
    insert into email_resends (email_id, order_id, partner_id, recipient, to_other_address, idempotency_key)
    values (${row.email_id}, ${row.order_id}, ${row.partner_id}, ${row.recipient}, ${row.to_other_address},
            ${row.idempotency_key})`.execute(db);
}

/**
 * Takes the partner's lock on resends to other addresses (held to the transaction's end, so
 * concurrent ones take turns and the cap is exact), then counts its resends to other addresses of
 * the last `hours`, and in how many seconds the oldest of them leaves that window. Taken after the
 * order's row lock and never before it, so no two transactions wait on each other in a cycle.
 */
export async function lockRecentResendsToOtherAddresses(
  db: Executor,
  partner_id: string,
  hours: number,
): Promise<{ count: number; oldest_leaves_in_s: number }> {
  await sql`select pg_advisory_xact_lock(hashtext('resends_to_other_addresses:' || ${partner_id}))`.execute(
    db,
  );
  const result = await sql<{ count: number; oldest_leaves_in_s: number | null }>`
    select count(*)::int as count,
           ceil(extract(epoch from (min(created_at) + make_interval(hours => ${hours}) - clock_timestamp())))::int
             as oldest_leaves_in_s
    from email_resends
    where partner_id = ${partner_id} and to_other_address
      and created_at > clock_timestamp() - make_interval(hours => ${hours})`.execute(db);
  const row = result.rows[0];
  return { count: row?.count ?? 0, oldest_leaves_in_s: Math.max(1, row?.oldest_leaves_in_s ?? 1) };
}

/**
 * Resend requests of the order made within the last `hours` (read under the order's row lock), and
 * in how many seconds the oldest of them leaves that window. The rows one request queued (a group
 * order's, one per traveller) share its transaction's created_at (now()), so they count once.
 */
export async function recentResends(
  db: Executor,
  order_id: string,
  hours: number,
): Promise<{ count: number; oldest_leaves_in_s: number }> {
  const result = await sql<{ count: number; oldest_leaves_in_s: number | null }>`
    select count(distinct created_at)::int as count,
           ceil(extract(epoch from (min(created_at) + make_interval(hours => ${hours}) - now())))::int
             as oldest_leaves_in_s
    from email_resends
    where order_id = ${order_id} and created_at > now() - make_interval(hours => ${hours})`.execute(db);
  const row = result.rows[0];
  return { count: row?.count ?? 0, oldest_leaves_in_s: Math.max(1, row?.oldest_leaves_in_s ?? 1) };
}

/** The resend a partner's Idempotency-Key made, whichever order it was for. */
export async function resendByKey(
  db: Executor,
  partner_id: string,
  idempotency_key: string,
): Promise<ResendRow | null> {
  const result = await sql<ResendRow>`
    select ${RESEND_COLUMNS} from email_resends
    where partner_id = ${partner_id} and idempotency_key = ${idempotency_key}`.execute(db);
  return result.rows[0] ?? null;
}

/** The resends queued with `first` by one request (its transaction's created_at): at most 50. */
export async function resendsOfRequest(db: Executor, first: ResendRow): Promise<ResendRow[]> {
  const result = await sql<ResendRow>`
    select ${RESEND_COLUMNS} from email_resends
    where order_id = ${first.order_id}
      and created_at = (select created_at from email_resends where email_id = ${first.email_id})
    limit 50`.execute(db);
  return result.rows;
}

/** Every resend of the order, oldest first (at most `limit`). */
export async function resendsOf(db: Executor, order_id: string, limit: number): Promise<ResendRow[]> {
  const result = await sql<ResendRow>`
    select ${RESEND_COLUMNS} from email_resends
    where order_id = ${order_id} order by created_at, email_id limit ${limit}`.execute(db);
  return result.rows;
}

export type ClaimedResend = {
  email_id: string;
  order_id: string;
  recipient: string;
  attempts: number;
  lease_token: string;
};

const CLAIM_SQL = `
update email_resends r
set due_at = clock_timestamp() + make_interval(secs => $2::float8), attempts = r.attempts + 1, lease_token = $3
from (
  select email_id from email_resends
  where sent_at is null and due_at <= now() and attempts < $4
  order by due_at
  limit $1
  for update skip locked
) due
where r.email_id = due.email_id
returning r.email_id, r.order_id, r.recipient, r.attempts, r.lease_token`;

/** Claims up to `limit` due resends for `lease_ms`; rows that used `max_attempts` claims stay put. */
export async function claimDueResends(
  pool: pg.Pool,
  input: { limit: number; lease_ms: number; max_attempts: number },
): Promise<ClaimedResend[]> {
  const token = randomBytes(12).toString("base64url");
  const { rows } = await pool.query<ClaimedResend>(CLAIM_SQL, [
    input.limit,
    input.lease_ms / 1000,
    token,
    input.max_attempts,
  ]);
  return rows;
}

export type ResendSent = { email_id: string; message_id: string };

/** One statement for a batch of accepted resends; a row already marked sent keeps its first time. */
export async function recordResendsSent(pool: pg.Pool, sent: readonly ResendSent[]): Promise<void> {
  await pool.query(
    `update email_resends r set sent_at = clock_timestamp(), message_id = s.message_id, last_error = null
     from unnest($1::text[], $2::text[]) as s(email_id, message_id)
     where r.email_id = s.email_id and r.sent_at is null`,
    [sent.map((row) => row.email_id), sent.map((row) => row.message_id)],
  );
}

/**
 * A failed attempt: due again after `retry_after_s` (null: never, the resend is given up), with
 * the error kept for the log; only while this claim still holds the row. A resend given up, or
 * whose attempts are used, is due at 'infinity': the row stays (it is the log) but leaves the
 * due range of email_resends_due_idx, so a claim never walks past it again.
 */
export async function recordResendFailure(
  pool: pg.Pool,
  failure: {
    email_id: string;
    lease_token: string;
    error: string;
    retry_after_s: number | null;
    max_attempts: number;
  },
): Promise<void> {
  await pool.query(
    `update email_resends
     set due_at = case when $3::float8 is null or attempts >= $5::int then 'infinity'::timestamptz
                       else clock_timestamp() + make_interval(secs => $3::float8) end,
         attempts = case when $3::float8 is null then greatest(attempts, $5::int) else attempts end,
         last_error = $4
     where email_id = $1 and lease_token = $2 and sent_at is null`,
    [
      failure.email_id,
      failure.lease_token,
      failure.retry_after_s,
      failure.error.slice(0, 500),
      failure.max_attempts,
    ],
  );
}

/** Gives back claims never started (a process closing): due again at once, the attempt taken back. */
export async function releaseResendClaims(
  pool: pg.Pool,
  claims: readonly { email_id: string; lease_token: string }[],
): Promise<void> {
  if (claims.length === 0) return;
  await pool.query(
    `update email_resends r set due_at = now(), attempts = r.attempts - 1
     from unnest($1::text[], $2::text[]) as claim(email_id, lease_token)
     where r.email_id = claim.email_id and r.lease_token = claim.lease_token and r.sent_at is null`,
    [claims.map((claim) => claim.email_id), claims.map((claim) => claim.lease_token)],
  );
}

export type ConfirmationState = {
  /** Which of the order's first confirmations (email_outbox.position; 0 for an order of one). */
  position: number;
  /** Recorded delivery of that confirmation, if any. */
  delivered: { recipient: string; delivered_at: Date } | null;
  /** Its outbox row while not delivered. */
  outbox: { attempts: number; last_error: string | null } | null;
};

/**
 * Where each first confirmation of an order stands, by position: delivered, or in the outbox (one
 * for an order of one, at most one per traveller of a group: 50).
 */
export async function confirmationStates(db: Executor, order_id: string): Promise<ConfirmationState[]> {
  const result = await sql<{
    position: number;
    recipient: string | null;
    delivered_at: Date | null;
    attempts: number | null;
    last_error: string | null;
    queued: boolean;
  }>`
    select coalesce(d.position, e.position) as position, d.recipient, d.delivered_at, e.attempts,
           e.last_error, e.order_id is not null as queued
    from (select * from email_deliveries where order_id = ${order_id}) d
    full join (select * from email_outbox where order_id = ${order_id}) e on e.position = d.position
    order by 1 limit 50`.execute(db);
  return result.rows.map((row) => ({
    position: row.position,
    delivered:
      row.recipient !== null && row.delivered_at !== null
        ? { recipient: row.recipient, delivered_at: row.delivered_at }
        : null,
    outbox: row.queued ? { attempts: row.attempts ?? 0, last_error: row.last_error } : null,
  }));
}
