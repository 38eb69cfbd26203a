// SQL of webhook deliveries (migration 0009), private to src/webhooks: one row per (endpoint, event),
// claimed by a lease so that one sender at a time calls the receiver, and a killed sender's claim
// simply runs out (the delivery goes again: at least once).
import { sql, type Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";

export type DeliveryRow = {
  delivery_id: string;
  seq: number;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: string | null;
  created_at: Date;
};

const COLUMNS = sql`delivery_id, seq, endpoint_id, event_id, event_type, status, attempts, last_attempt_at,
  next_attempt_at, last_response_status, last_error, created_at`;

export type NewDelivery = {
  delivery_id: string;
  endpoint_id: string;
  partner_id: string;
  event_id: string;
  event_type: string;
};

/**
 * Due at once; a pair already delivered to (a repeated dispatch) is left as it is, and so is an
 * endpoint deleted since it was read. Its DELETE may commit between that read and this insert,
 * and the foreign key would then fail the whole transaction: the join locks each endpoint as the
 * foreign key check does (FOR KEY SHARE), so a DELETE in progress is waited for, its endpoint left
 * out if it commits and kept if it rolls back; one not yet begun waits for this commit (its
 * cascade then takes the deliveries).
 */
export async function insertDeliveries(trx: Transaction<Database>, rows: NewDelivery[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await sql`
    insert into webhook_deliveries (delivery_id, endpoint_id, partner_id, event_id, event_type, next_attempt_at)
    select x.d, x.e, x.p, x.v, x.t, now()
    from unnest(${rows.map((r) => r.delivery_id)}::text[], ${rows.map((r) => r.endpoint_id)}::text[],
                ${rows.map((r) => r.partner_id)}::text[], ${rows.map((r) => r.event_id)}::text[],
                ${rows.map((r) => r.event_type)}::text[]) as x(d, e, p, v, t)
    join webhook_endpoints w on w.endpoint_id = x.e
    for key share of w
    on conflict (endpoint_id, event_id) do nothing`.execute(trx);
  return Number(result.numAffectedRows);
}

/**
 * Locks the endpoints these events' deliveries go to (FOR KEY SHARE), before the deliveries are
 * deleted. An endpoint's DELETE takes its endpoint's row first and its cascade then deletes the
 * endpoint's deliveries: both lock an endpoint before its deliveries, so the two never deadlock;
 * one waits for the other. Nothing else conflicts: UPDATEs never change endpoint_id or seq, so
 * they take FOR NO KEY UPDATE, and new deliveries take FOR KEY SHARE (insertDeliveries and the
 * foreign key check).
 */
export async function lockEndpointsOfEvents(trx: Transaction<Database>, event_ids: string[]): Promise<void> {
  if (event_ids.length === 0) return;
  await sql`
    select 1 from webhook_endpoints
    where endpoint_id in (
      select endpoint_id from webhook_deliveries where event_id = any(${event_ids}::text[]))
    order by endpoint_id
    for key share`.execute(trx);
}

/** Deletes every delivery of these events (webhook_deliveries_event_endpoint_key). */
export async function deleteDeliveriesOfEvents(
  trx: Transaction<Database>,
  event_ids: string[],
): Promise<number> {
  if (event_ids.length === 0) return 0;
  const result = await sql`
    delete from webhook_deliveries where event_id = any(${event_ids}::text[])`.execute(trx);
  return Number(result.numAffectedRows);
}

/** Wakes every process's delivery loop (at commit, when inside a transaction). */
export async function notifyDeliveriesDue(db: Executor): Promise<void> {
  await sql`select pg_notify('webhook_deliveries_due', '')`.execute(db);
}

export async function pageOfDeliveries(
  db: Executor,
  input: { endpoint_id: string; status: string | null; before_seq: number | null; limit: number },
): Promise<DeliveryRow[]> {
  const result = await sql<DeliveryRow>`
    select ${COLUMNS} from webhook_deliveries
    where endpoint_id = ${input.endpoint_id}
      ${input.status === null ? sql`` : sql`and status = ${input.status}`}
      ${input.before_seq === null ? sql`` : sql`and seq < ${input.before_seq}`}
    order by seq desc
    limit ${input.limit}`.execute(db);
  return result.rows;
}

/**
 * The partner's failed deliveries (given up on), counted up to `cap`: through its endpoints (at most
 * 10), each an index range of (endpoint_id, status), so a long log costs no more than `cap` rows.
 */
export async function countFailedDeliveries(db: Executor, partner_id: string, cap: number): Promise<number> {
  const result = await sql<{ count: string }>`
    select count(*) as count from (
      select 1 from webhook_deliveries
      where endpoint_id in (select endpoint_id from webhook_endpoints where partner_id = ${partner_id})
        and status = 'failed'
      limit ${cap}) as capped`.execute(db);
  return Number(result.rows[0]?.count ?? 0);
}

/** Due again at once, whatever its state: the manual retry. Null when it is not this endpoint's. */
export async function retryDelivery(
  db: Executor,
  endpoint_id: string,
  delivery_id: string,
): Promise<DeliveryRow | null> {
  const result = await sql<DeliveryRow>`
    update webhook_deliveries set status = 'pending', next_attempt_at = now()
    where delivery_id = ${delivery_id} and endpoint_id = ${endpoint_id}
    returning ${COLUMNS}`.execute(db);
  return result.rows[0] ?? null;
}

export type ClaimedDelivery = {
  delivery_id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  lease_token: string;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  /** Older replaced secrets still within their overlap, newest first (migration 0018). */
  earlier_secrets_sealed: string[];
};

/** Calls in flight per endpoint, across all processes (leases not yet run out). */
export async function inFlightByEndpoint(trx: Transaction<Database>): Promise<Map<string, number>> {
  const result = await sql<{ endpoint_id: string; n: number }>`
    select endpoint_id, count(*)::int as n from webhook_deliveries
    where leased_until > now() group by endpoint_id`.execute(trx);
  return new Map(result.rows.map((row) => [row.endpoint_id, row.n]));
}

/**
 * Due deliveries of enabled endpoints, oldest due first, skipping endpoints already at their cap
 * (so one dead receiver's backlog cannot fill the page), locked for the claim that follows.
 */
export async function dueDeliveries(
  trx: Transaction<Database>,
  saturated: string[],
  limit: number,
): Promise<Array<{ delivery_id: string; endpoint_id: string }>> {
  const result = await sql<{ delivery_id: string; endpoint_id: string }>`
    select d.delivery_id, d.endpoint_id
    from webhook_deliveries d join webhook_endpoints e on e.endpoint_id = d.endpoint_id
    where d.status = 'pending' and d.next_attempt_at <= now()
      and (d.leased_until is null or d.leased_until <= now())
      and e.status = 'enabled' and d.endpoint_id <> all(${saturated}::text[])
    order by d.next_attempt_at
    limit ${limit}
    for update of d skip locked`.execute(trx);
  return result.rows;
}

/** Leases the chosen deliveries for one attempt each: the attempt counts from here. */
export async function leaseDeliveries(
  trx: Transaction<Database>,
  delivery_ids: string[],
  lease_token: string,
  lease_ms: number,
): Promise<ClaimedDelivery[]> {
  if (delivery_ids.length === 0) return [];
  const result = await sql<ClaimedDelivery>`
    update webhook_deliveries d set
      leased_until = clock_timestamp() + make_interval(secs => ${lease_ms / 1000}),
      lease_token = ${lease_token}, attempts = d.attempts + 1, last_attempt_at = now()
    from webhook_endpoints e
    where d.delivery_id = any(${delivery_ids}::text[]) and e.endpoint_id = d.endpoint_id
    returning d.delivery_id, d.endpoint_id, d.event_id, d.attempts, d.lease_token, e.url, e.secret_sealed,
      case when e.previous_secret_expires_at > now() then e.previous_secret_sealed end as previous_secret_sealed,
      array(select s ->> 'sealed' from jsonb_array_elements(e.earlier_secrets) with ordinality as t(s, n)
            where (s ->> 'expires_at')::timestamptz > now() order by n) as earlier_secrets_sealed`.execute(
    trx,
  );
  return result.rows;
}

export type Outcome = {
  status: "pending" | "succeeded" | "failed";
  /** Seconds until the next attempt (pending only). */
  retry_after_ms: number | null;
  last_response_status: number | null;
  last_error: string | null;
};

/** Records the attempt's outcome, only by the lease holder: a sender whose lease ran out changes nothing. */
export async function recordOutcome(
  db: Executor,
  delivery_id: string,
  lease_token: string,
  outcome: Outcome,
): Promise<boolean> {
  const next =
    outcome.retry_after_ms === null
      ? sql`null`
      : sql`now() + make_interval(secs => ${outcome.retry_after_ms / 1000})`;
  const result = await sql`
    update webhook_deliveries set status = ${outcome.status}, next_attempt_at = ${next},
      last_response_status = ${outcome.last_response_status}, last_error = ${outcome.last_error},
      leased_until = null, lease_token = null
    where delivery_id = ${delivery_id} and lease_token = ${lease_token}`.execute(db);
  return Number(result.numAffectedRows) === 1;
}

export type Success = { delivery_id: string; lease_token: string; endpoint_id: string; status: number };

/**
 * Records attempts that succeeded, many at once (a group commit, deliver-webhooks.ts): as
 * recordOutcome does, each only while the lease that sent it still holds; then the endpoints that
 * answered stop failing, recorded or not (they did answer; a retried write heals them too; a
 * failure recorded meanwhile by the lease's new holder starts its run again at its next failure) (`failing_since` cleared, locked in endpoint order so two writers never wait
 * on each other in opposite orders). Two statements, as before: one locking an endpoint after its
 * deliveries would deadlock with an endpoint's DELETE, which locks it before cascading to them.
 */
export async function recordSuccesses(db: Executor, successes: readonly Success[]): Promise<void> {
  if (successes.length === 0) return;
  await sql`
    update webhook_deliveries d set status = 'succeeded', next_attempt_at = null,
      last_response_status = s.status, last_error = null, leased_until = null, lease_token = null
    from unnest(${successes.map((s) => s.delivery_id)}::text[], ${successes.map((s) => s.lease_token)}::text[],
                ${successes.map((s) => s.status)}::int[]) as s(delivery_id, lease_token, status)
    where d.delivery_id = s.delivery_id and d.lease_token = s.lease_token`.execute(db);
  const endpoint_ids = [...new Set(successes.map((success) => success.endpoint_id))];
  await sql`
      update webhook_endpoints e set failing_since = null
      from (select endpoint_id from webhook_endpoints
            where endpoint_id = any(${endpoint_ids}::text[]) and failing_since is not null
            order by endpoint_id
            for no key update) recovered
      where e.endpoint_id = recovered.endpoint_id`.execute(db);
}

/**
 * Claims run one at a time across all processes (a transaction-scoped advisory lock held for a few
 * milliseconds), so the per-endpoint count of calls in flight each claim reads is exact.
 */
export async function serializeClaims(trx: Transaction<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended('webhook_delivery_claims', 0))`.execute(trx);
}
