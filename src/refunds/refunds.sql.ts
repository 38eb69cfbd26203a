// SQL of refund intents (migration 0008: order_refunds). Private to src/refunds/. A refund is
// driven by whoever holds its lease (token and time), like a pending order: the request that made
// it, a retry after its lease expired or its holder's process stopped beating (a crash:
// shared/liveness.ts), or the sweep.
import { randomBytes } from "node:crypto";
import { sql, type Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import { type Actor, SYSTEM_ACTOR } from "../shared/actor.ts";
import { holderGone } from "../shared/liveness.ts";

export type RefundRow = {
  order_id: string;
  partner_id: string;
  state: "refunding" | "refunded";
  lease_live: boolean;
  attempts: number;
};

export type RefundLease = { order_id: string; partner_id: string; lease_token: string };

function newLeaseToken(): string {
  return randomBytes(12).toString("base64url");
}

const lease = (lease_ms: number) => sql`clock_timestamp() + make_interval(secs => ${lease_ms / 1000})`;

/** The lease of `order_refunds` row `r` may be taken: nobody holds it, it ran out, or its holder is gone. */
const takable = sql<boolean>`(r.lease_until is null or r.lease_until <= clock_timestamp() or ${holderGone(sql`r.lease_holder`)})`;

/** The order's refund intent, if any; call with the order row locked. */
export async function selectRefund(trx: Transaction<Database>, order_id: string): Promise<RefundRow | null> {
  const result = await sql<RefundRow>`
    select order_id, partner_id, state, attempts, not ${takable} as lease_live
    from order_refunds r where order_id = ${order_id}`.execute(trx);
  return result.rows[0] ?? null;
}

/** A new intent, `refunding`, leased to its creator (the process `lease_holder`) for `lease_ms`. */
export async function insertRefundIntent(
  trx: Transaction<Database>,
  order: { order_id: string; partner_id: string },
  lease_ms: number,
  lease_holder: string | null,
  requested: { actor: Actor; reason: string | null },
): Promise<RefundLease> {
  const requested_by = requested.actor;
  const lease_token = newLeaseToken();
  await sql`
    insert into order_refunds (order_id, partner_id, state, lease_until, lease_token, lease_holder,
                               requested_by_type, requested_by_id, requested_by_email, requested_by_ip,
                               requested_reason)
    values (${order.order_id}, ${order.partner_id}, 'refunding', ${lease(lease_ms)}, ${lease_token}, ${lease_holder},
            ${requested_by.type}, ${requested_by.id}, ${requested_by.email ?? null}, ${requested_by.ip},
            ${requested.reason})`.execute(trx);
  return { ...order, lease_token };
}

/**
 * Who asked for the order's refund and why (the intent's), for its audit entry; the system, with
 * no reason, for an intent written before migration 0027.
 */
export async function refundRequester(
  trx: Transaction<Database>,
  order_id: string,
): Promise<{ actor: Actor; reason: string | null }> {
  const result = await sql<{
    type: Actor["type"] | null;
    id: string | null;
    email: string | null;
    ip: string | null;
    reason: string | null;
  }>`
    select requested_by_type as type, requested_by_id as id, requested_by_email as email,
           requested_by_ip as ip, requested_reason as reason
    from order_refunds where order_id = ${order_id}`.execute(trx);
  const row = result.rows[0];
  if (row === undefined || row.type === null) return { actor: SYSTEM_ACTOR, reason: null };
  return { actor: { type: row.type, id: row.id, email: row.email, ip: row.ip }, reason: row.reason };
}

/**
 * Takes the lease of a refunding intent that ran out, was given up, or whose holder is gone, for
 * the process `lease_holder`; null when someone alive holds it.
 */
export async function takeExpiredLease(
  db: Executor,
  order_id: string,
  lease_ms: number,
  lease_holder: string | null,
): Promise<RefundLease | null> {
  const lease_token = newLeaseToken();
  const result = await sql<{ order_id: string; partner_id: string }>`
    update order_refunds r set lease_until = ${lease(lease_ms)}, lease_token = ${lease_token}, lease_holder = ${lease_holder}
    where r.order_id = ${order_id} and r.state = 'refunding' and ${takable}
    returning r.order_id, r.partner_id`.execute(db);
  const row = result.rows[0];
  return row ? { ...row, lease_token } : null;
}

/**
 * An operator's turn (settle-held-refund.ts): the lease of a refunding intent nobody drives (its
 * lease given up, even if a backoff has it wait, expired, or its holder gone), for the process
 * `lease_holder`. Null when a live driver holds it now.
 */
export async function takeIdleLease(
  db: Executor,
  order_id: string,
  lease_ms: number,
  lease_holder: string | null,
): Promise<RefundLease | null> {
  const lease_token = newLeaseToken();
  // The holder is named (or cleared, for the CLI, which does not beat) like every other claim's: a
  // stale holder left on the row would let another claimer take the operator's turn as "gone".
  const result = await sql<{ order_id: string; partner_id: string }>`
    update order_refunds r set lease_until = ${lease(lease_ms)}, lease_token = ${lease_token},
      lease_holder = ${lease_holder}
    where order_id = ${order_id} and state = 'refunding'
      and (lease_token is null or ${takable})
    returning order_id, partner_id`.execute(db);
  const row = result.rows[0];
  return row ? { ...row, lease_token } : null;
}

/**
 * The partner's refunds started in the last hour (refunding or refunded; a refused one leaves no
 * intent), and when the oldest of them leaves that hour. The partner's refund starts take turns on
 * a transaction-scoped advisory lock first, so two concurrent ones never both see room for one.
 */
export async function lockRecentRefunds(
  trx: Transaction<Database>,
  partner_id: string,
): Promise<{ count: number; frees_in_s: number }> {
  await sql`select pg_advisory_xact_lock(hashtext('refunds:' || ${partner_id}))`.execute(trx);
  const result = await sql<{ count: number; frees_in_s: number }>`
    select count(*)::int as count,
           coalesce(ceil(extract(epoch from min(created_at) + interval '1 hour' - clock_timestamp())), 0)::int
             as frees_in_s
    from order_refunds
    where partner_id = ${partner_id} and created_at > clock_timestamp() - interval '1 hour'`.execute(trx);
  return result.rows[0] ?? { count: 0, frees_in_s: 0 };
}

/**
 * The sweep's claim: up to `limit` refunding intents whose lease expired or whose holder is gone
 * (its process stopped beating), for the process `lease_holder`, oldest first, in the
 * order the sweep drives them. The one in position n (from 1) is leased for n x `lease_ms`: it
 * waits for the n - 1 before it, each driven within `lease_ms`. A sweep that dies gives each back
 * when its own turn would have ended, not all of them at the end of a whole round. SKIP LOCKED: two
 * sweeps (processes) never wait on, nor take, the same row.
 */
export async function claimDueRefunds(
  db: Executor,
  limit: number,
  lease_ms: number,
  lease_holder: string | null,
): Promise<RefundLease[]> {
  const lease_token = newLeaseToken();
  const result = await sql<{ order_id: string; partner_id: string; position: number }>`
    update order_refunds r
    set lease_until = clock_timestamp() + make_interval(secs => ${lease_ms / 1000}::float8 * due.position),
        lease_token = ${lease_token}, lease_holder = ${lease_holder}
    from (
      select order_id, row_number() over (order by lease_until nulls first, order_id)::int as position
      from (
        select order_id, lease_until from order_refunds r
        where state = 'refunding' and ${takable}
        order by lease_until nulls first, order_id
        limit ${limit}
        for update skip locked
      ) locked
    ) due
    where r.order_id = due.order_id
    returning r.order_id, r.partner_id, due.position`.execute(db);
  return result.rows
    .sort((a, b) => a.position - b.position)
    .map(({ order_id, partner_id }) => ({ order_id, partner_id, lease_token }));
}

/**
 * The sweep's turn comes: its lease renewed for `lease_ms` from now, only while it still holds it
 * (same token, not expired). False when it ran out meanwhile: another driver may hold it now, and
 * the sweep leaves the refund to it. A row update either way, so a concurrent taker and this
 * renewal take turns on the row: never both.
 */
export async function renewLease(db: Executor, held: RefundLease, lease_ms: number): Promise<boolean> {
  const result = await sql`
    update order_refunds r set lease_until = ${lease(lease_ms)}
    where order_id = ${held.order_id} and state = 'refunding' and lease_token = ${held.lease_token}
      and not ${takable}
    returning 1 as renewed`.execute(db);
  return result.rows.length === 1;
}

/**
 * Unknown outcome: the holder gives its lease up. At once (a client's retry may drive it again), or
 * with `backoff` (the sweep): after 1, 2, 4 ... seconds, at most 5 minutes, per failed attempt.
 */
export async function giveUpLease(
  db: Executor,
  held: RefundLease,
  backoff: boolean,
  error: string,
): Promise<void> {
  await sql`
    update order_refunds
    set lease_until = case when ${backoff}::boolean
                           then clock_timestamp() + make_interval(secs => least(300, power(2, least(attempts, 9))))
                           else clock_timestamp() end,
        lease_token = null, lease_holder = null,
        attempts = attempts + 1, last_error = ${error.slice(0, 500)}
    where order_id = ${held.order_id} and state = 'refunding' and lease_token = ${held.lease_token}`.execute(
    db,
  );
}

/** refunding -> refunded, in the transaction that credits the wallet. */
export async function markRefundDone(trx: Transaction<Database>, order_id: string): Promise<void> {
  await sql`
    update order_refunds
    set state = 'refunded', refunded_at = clock_timestamp(), lease_until = null, lease_token = null,
        attempts = attempts + 1, last_error = null
    where order_id = ${order_id} and state = 'refunding'`.execute(trx);
}

/** The carrier refused: the intent goes, the order stays completed (a later attempt asks again). */
export async function deleteRefundIntent(trx: Transaction<Database>, order_id: string): Promise<void> {
  await sql`delete from order_refunds where order_id = ${order_id} and state = 'refunding'`.execute(trx);
}

export type RefundStatus = {
  state: "refunding" | "refunded";
  attempts: number;
  last_error: string | null;
  lease_until: Date | null;
  created_at: Date;
  refunded_at: Date | null;
};

/** The refund of an order as it stands, for the operator; null when none was asked for. */
export async function selectRefundStatus(db: Executor, order_id: string): Promise<RefundStatus | null> {
  const result = await sql<RefundStatus>`
    select state, attempts, last_error, lease_until, created_at, refunded_at
    from order_refunds where order_id = ${order_id}`.execute(db);
  return result.rows[0] ?? null;
}
