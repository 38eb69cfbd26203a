// SQL of the confirmation email outbox (migration 0007): claimed in batches with SKIP LOCKED, the
// claim pushing due_at past the time a send may take (the lease), deleted in the statement that
// records the delivery. Private to src/notifications/.
import { randomBytes } from "node:crypto";
import type pg from "pg";

export type ClaimedEmail = {
  order_id: string;
  /** Claims so far, this one included. */
  attempts: number;
  lease_token: string;
  /** Its delivery is already recorded (a row left by an older release): nothing to send. */
  delivered: boolean;
};

const CLAIM_SQL = `
update email_outbox e
set due_at = clock_timestamp() + make_interval(secs => $2::float8), attempts = e.attempts + 1, lease_token = $3
from (
  select order_id from email_outbox
  where due_at <= now() and attempts < $4
  order by due_at
  limit $1
  for update skip locked
) due
where e.order_id = due.order_id
returning e.order_id, e.attempts, e.lease_token,
          exists (select 1 from email_deliveries d where d.order_id = e.order_id) as delivered`;

/** Claims up to `limit` due emails for `lease_ms`; rows that used `max_attempts` claims stay put. */
export async function claimDueEmails(
  pool: pg.Pool,
  input: { limit: number; lease_ms: number; max_attempts: number },
): Promise<ClaimedEmail[]> {
  const token = randomBytes(12).toString("base64url");
  const { rows } = await pool.query<ClaimedEmail>(CLAIM_SQL, [
    input.limit,
    input.lease_ms / 1000,
    token,
    input.max_attempts,
  ]);
  return rows;
}

// One statement for a batch of sent emails: each row leaves the outbox exactly when its delivery is
// recorded, in the same statement.
const RECORD_DELIVERIES_SQL = `
with sent as (delete from email_outbox where order_id = any($1::text[]) returning order_id)
insert into email_deliveries (order_id, message_id, recipient)
select * from unnest($1::text[], $2::text[], $3::text[])
on conflict (order_id, position) do nothing`;

export type Delivery = { order_id: string; message_id: string; recipient: string };

export async function recordDeliveries(pool: pg.Pool, deliveries: readonly Delivery[]): Promise<void> {
  await pool.query(RECORD_DELIVERIES_SQL, [
    deliveries.map((delivery) => delivery.order_id),
    deliveries.map((delivery) => delivery.message_id),
    deliveries.map((delivery) => delivery.recipient),
  ]);
}

/** Drops a row whose delivery was recorded before (nothing to send). */
export async function dropDelivered(pool: pg.Pool, order_id: string): Promise<void> {
  await pool.query(
    "delete from email_outbox e where e.order_id = $1 and exists (select 1 from email_deliveries d where d.order_id = e.order_id)",
    [order_id],
  );
}

/**
 * The row of an email not to be sent: an order refunded before it went out (nothing to install), or
 * a partner that sends its own confirmations (notification settings).
 */
export async function dropUnsent(pool: pg.Pool, order_id: string): Promise<void> {
  await pool.query("delete from email_outbox where order_id = $1", [order_id]);
}

/**
 * A failed attempt: due again after `retry_after_s`, with the error kept for the operator; only
 * while this claim still holds the row (a claim taken since is left alone).
 */
export async function recordFailure(
  pool: pg.Pool,
  failure: { order_id: string; lease_token: string; error: string; retry_after_s: number },
): Promise<void> {
  await pool.query(
    `update email_outbox
     set due_at = clock_timestamp() + make_interval(secs => $3::float8), last_error = $4
     where order_id = $1 and lease_token = $2`,
    [failure.order_id, failure.lease_token, failure.retry_after_s, failure.error.slice(0, 500)],
  );
}

/**
 * Gives back claims never started (a process closing): due again at once, for whoever claims next,
 * and the attempt the claim counted is taken back (nothing was tried; on a row's last attempt it
 * would otherwise never be claimed again).
 */
export async function releaseClaims(
  pool: pg.Pool,
  claims: readonly { order_id: string; lease_token: string }[],
): Promise<void> {
  if (claims.length === 0) return;
  await pool.query(
    `update email_outbox e set due_at = now(), attempts = e.attempts - 1
     from unnest($1::text[], $2::text[]) as claim(order_id, lease_token)
     where e.order_id = claim.order_id and e.lease_token = claim.lease_token`,
    [claims.map((claim) => claim.order_id), claims.map((claim) => claim.lease_token)],
  );
}

export type OutboxStats = { queued: number; due: number; failed: number };

/** For /metrics and the bench: rows waiting, rows due now, rows that used all their attempts. */
export async function outboxStats(pool: pg.Pool, max_attempts: number): Promise<OutboxStats> {
  const { rows } = await pool.query<OutboxStats>(
    `select count(*)::int as queued,
            (count(*) filter (where due_at <= now() and attempts < $1))::int as due,
            (count(*) filter (where attempts >= $1))::int as failed
     from email_outbox`,
    [max_attempts],
  );
  return rows[0] ?? { queued: 0, due: 0, failed: 0 };
}
