// SQL of the confirmation email outbox (migration 0007): claimed in batches with SKIP LOCKED, the
// claim pushing due_at past the time a send may take (the lease), deleted in the statement that
// records the delivery. Private to src/notifications/.
import { randomBytes } from "node:crypto";
import type pg from "pg";

export type ClaimedEmail = {
  order_id: string;
  /**
   * Which of the order's emails (migration 0047): 0 for an order of one and for a group without
   * travellers (one email with every eSIM); a group's traveller's is their line's position.
   */
  position: number;
  /** Claims so far, this one included. */
  attempts: number;
  lease_token: string;
  /** Its delivery is already recorded (a row left by an older release): nothing to send. */
  delivered: boolean;
};

/** One email of the outbox: an order's, and which of its emails (ClaimedEmail.position). */
export type OutboxKey = { order_id: string; position: number };

const CLAIM_SQL = `
update email_outbox e
set due_at = clock_timestamp() + make_interval(secs => $2::float8), attempts = e.attempts + 1, lease_token = $3
from (
  select order_id, position from email_outbox
  where due_at <= now() and attempts < $4
  order by due_at
  limit $1
  for update skip locked
) due
where e.order_id = due.order_id and e.position = due.position
returning e.order_id, e.position, e.attempts, e.lease_token,
          exists (select 1 from email_deliveries d where d.order_id = e.order_id and d.position = e.position)
            as delivered`;

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
// recorded, in the same statement; one traveller's email of a group never takes another's row.
const RECORD_DELIVERIES_SQL = `
with sent as (
  delete from email_outbox e using unnest($1::text[], $2::int[]) as s(order_id, position)
  where e.order_id = s.order_id and e.position = s.position
  returning e.order_id
)
insert into email_deliveries (order_id, position, message_id, recipient)
select * from unnest($1::text[], $2::int[], $3::text[], $4::text[])
on conflict (order_id, position) do nothing`;

/** A sent email; `position` is the outbox row's (absent: 0, an order of one). */
export type Delivery = { order_id: string; position?: number; message_id: string; recipient: string };

export async function recordDeliveries(pool: pg.Pool, deliveries: readonly Delivery[]): Promise<void> {
  await pool.query(RECORD_DELIVERIES_SQL, [
    deliveries.map((delivery) => delivery.order_id),
    deliveries.map((delivery) => delivery.position ?? 0),
    deliveries.map((delivery) => delivery.message_id),
    deliveries.map((delivery) => delivery.recipient),
  ]);
}

/** Drops a row whose delivery was recorded before (nothing to send). */
export async function dropDelivered(pool: pg.Pool, email: OutboxKey): Promise<void> {
  await pool.query(
    `delete from email_outbox e where e.order_id = $1 and e.position = $2
       and exists (select 1 from email_deliveries d where d.order_id = e.order_id and d.position = e.position)`,
    [email.order_id, email.position],
  );
}

/**
 * The row of an email not to be sent: an order refunded before it went out (nothing to install), or
 * a partner that sends its own confirmations (notification settings).
 */
export async function dropUnsent(pool: pg.Pool, email: OutboxKey): Promise<void> {
  await pool.query("delete from email_outbox where order_id = $1 and position = $2", [
    email.order_id,
    email.position,
  ]);
}

/**
 * A failed attempt: due again after `retry_after_s`, with the error kept for the operator; only
 * while this claim still holds the row (a claim taken since is left alone).
 */
export async function recordFailure(
  pool: pg.Pool,
  failure: OutboxKey & { lease_token: string; error: string; retry_after_s: number },
): Promise<void> {
  await pool.query(
    `update email_outbox
     set due_at = clock_timestamp() + make_interval(secs => $3::float8), last_error = $4
     where order_id = $1 and position = $5 and lease_token = $2`,
    [
      failure.order_id,
      failure.lease_token,
      failure.retry_after_s,
      failure.error.slice(0, 500),
      failure.position,
    ],
  );
}

/**
 * Gives back claims never started (a process closing): due again at once, for whoever claims next,
 * and the attempt the claim counted is taken back (nothing was tried; on a row's last attempt it
 * would otherwise never be claimed again).
 */
export async function releaseClaims(
  pool: pg.Pool,
  claims: readonly (OutboxKey & { lease_token: string })[],
): Promise<void> {
  if (claims.length === 0) return;
  await pool.query(
    `update email_outbox e set due_at = now(), attempts = e.attempts - 1
     from unnest($1::text[], $2::int[], $3::text[]) as claim(order_id, position, lease_token)
     where e.order_id = claim.order_id and e.position = claim.position and e.lease_token = claim.lease_token`,
    [
      claims.map((claim) => claim.order_id),
      claims.map((claim) => claim.position),
      claims.map((claim) => claim.lease_token),
    ],
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
