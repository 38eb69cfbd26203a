// SQL of webhook endpoints (migration 0009), private to src/webhooks. Every read and write names the
// partner: another partner's endpoint is not found, exactly like an unknown one.
import { sql, type Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";

export type EndpointRow = {
  endpoint_id: string;
  partner_id: string;
  url: string;
  description: string | null;
  event_types: string[];
  status: "enabled" | "disabled";
  disabled_reason: string | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
};

const COLUMNS = sql`endpoint_id, partner_id, url, description, event_types, status, disabled_reason,
  secret_sealed, previous_secret_sealed, previous_secret_expires_at, created_at`;

/**
 * Serializes endpoint creation per partner for the rest of the transaction (an advisory lock on
 * the partner, so two concurrent creates cannot both see 9), and returns how many it has.
 */
export async function lockAndCountEndpoints(trx: Transaction<Database>, partner_id: string): Promise<number> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`webhook_endpoints:${partner_id}`}, 0))`.execute(
    trx,
  );
  const result = await sql<{ n: number }>`
    select count(*)::int as n from webhook_endpoints where partner_id = ${partner_id}`.execute(trx);
  return result.rows[0]!.n;
}

export async function insertEndpoint(
  trx: Transaction<Database>,
  row: Pick<
    EndpointRow,
    "endpoint_id" | "partner_id" | "url" | "description" | "event_types" | "secret_sealed"
  >,
): Promise<EndpointRow> {
  const result = await sql<EndpointRow>`
    insert into webhook_endpoints (endpoint_id, partner_id, url, description, event_types, secret_sealed)
    values (${row.endpoint_id}, ${row.partner_id}, ${row.url}, ${row.description}, ${row.event_types}::text[],
            ${row.secret_sealed})
    returning ${COLUMNS}`.execute(trx);
  return result.rows[0]!;
}

/** A partner's endpoints, newest first (at most 10 exist). */
export async function endpointsOf(db: Executor, partner_id: string): Promise<EndpointRow[]> {
  const result = await sql<EndpointRow>`
    select ${COLUMNS} from webhook_endpoints where partner_id = ${partner_id}
    order by seq desc limit 100`.execute(db);
  return result.rows;
}

export async function endpointById(
  db: Executor,
  partner_id: string,
  endpoint_id: string,
): Promise<EndpointRow | null> {
  const result = await sql<EndpointRow>`
    select ${COLUMNS} from webhook_endpoints
    where endpoint_id = ${endpoint_id} and partner_id = ${partner_id}`.execute(db);
  return result.rows[0] ?? null;
}

export type EndpointPatch = {
  url?: string;
  description?: string | null;
  event_types?: string[];
  status?: "enabled" | "disabled";
};

/**
 * Applies the fields given. Enabling clears the reason and the failure run (a fresh start);
 * disabling by the partner says so.
 */
export async function updateEndpoint(
  db: Executor,
  partner_id: string,
  endpoint_id: string,
  patch: EndpointPatch,
): Promise<EndpointRow | null> {
  const status = patch.status ?? null;
  const result = await sql<EndpointRow>`
    update webhook_endpoints set
      url = coalesce(${patch.url ?? null}, url),
      description = ${patch.description === undefined ? sql`description` : sql`${patch.description}`},
      event_types = coalesce(${patch.event_types ?? null}::text[], event_types),
      status = coalesce(${status}, status),
      disabled_reason = case
        when ${status}::text = 'enabled' then null
        when ${status}::text = 'disabled' and status = 'enabled' then 'Disabled by the partner.'
        else disabled_reason end,
      failing_since = case when ${status}::text = 'enabled' then null else failing_since end
    where endpoint_id = ${endpoint_id} and partner_id = ${partner_id}
    returning ${COLUMNS}`.execute(db);
  return result.rows[0] ?? null;
}

export async function deleteEndpoint(
  db: Executor,
  partner_id: string,
  endpoint_id: string,
): Promise<boolean> {
  const result = await sql`
    delete from webhook_endpoints where endpoint_id = ${endpoint_id} and partner_id = ${partner_id}`.execute(
    db,
  );
  return Number(result.numAffectedRows) === 1;
}

/**
 * Older replaced secrets kept signing beside the current and the previous one. Migration 0018's
 * CHECK on earlier_secrets holds the same bound: raise both together.
 */
export const MAX_EARLIER_SECRETS = 3;

/**
 * The current secret becomes the previous one, signing beside the new one for `overlap_s`. The
 * previous one, if it still signs, moves to the earlier ones with its own expiry, and so signs out
 * its overlap too; those past it are dropped, and beyond MAX_EARLIER_SECRETS the oldest.
 */
export async function rotateSecret(
  db: Executor,
  partner_id: string,
  endpoint_id: string,
  secret_sealed: string,
  overlap_s: number,
): Promise<boolean> {
  // Every right-hand side reads the row as it was before this update.
  const result = await sql`
    update webhook_endpoints set
      earlier_secrets = (
        select coalesce(jsonb_agg(s order by n), '[]'::jsonb) from (
          select s, n from (
            select jsonb_build_object('sealed', previous_secret_sealed,
                                      'expires_at', previous_secret_expires_at) as s, 0::bigint as n
            where previous_secret_expires_at > now()
            union all
            select s, n from jsonb_array_elements(earlier_secrets) with ordinality as t(s, n)
            where (s ->> 'expires_at')::timestamptz > now()
          ) as live
          order by n limit ${MAX_EARLIER_SECRETS}
        ) as kept),
      previous_secret_sealed = secret_sealed,
      previous_secret_expires_at = now() + make_interval(secs => ${overlap_s}),
      secret_sealed = ${secret_sealed}
    where endpoint_id = ${endpoint_id} and partner_id = ${partner_id}`.execute(db);
  return Number(result.numAffectedRows) === 1;
}

export type SubscribedEndpoint = {
  endpoint_id: string;
  partner_id: string;
  event_types: string[];
  created_at: Date;
};

/** The enabled endpoints of these partners: where their new events go. */
export async function enabledEndpointsOf(db: Executor, partner_ids: string[]): Promise<SubscribedEndpoint[]> {
  const result = await sql<SubscribedEndpoint>`
    select endpoint_id, partner_id, event_types, created_at from webhook_endpoints
    where partner_id = any(${partner_ids}::text[]) and status = 'enabled'`.execute(db);
  return result.rows;
}

/**
 * After a failed attempt: starts the failure run if none, and disables the endpoint once every
 * attempt has failed for `disable_after_s` (the contract's 5 days). Written only when something changes.
 */
export async function markEndpointFailing(
  db: Executor,
  endpoint_id: string,
  disable_after_s: number,
): Promise<void> {
  await sql`
    update webhook_endpoints set
      failing_since = coalesce(failing_since, now()),
      status = case when failing_since < now() - make_interval(secs => ${disable_after_s}) then 'disabled' else status end,
      disabled_reason = case when failing_since < now() - make_interval(secs => ${disable_after_s})
        then 'Every delivery failed for 5 days.' else disabled_reason end
    where endpoint_id = ${endpoint_id} and status = 'enabled'
      and (failing_since is null or failing_since < now() - make_interval(secs => ${disable_after_s}))`.execute(
    db,
  );
}

/**
 * Locks the endpoint's row for an update in `trx` before anything of its deliveries is written:
 * its DELETE locks the row first and its cascade then deletes the deliveries, so a transaction
 * that wrote a delivery first and then waited for the endpoint could deadlock with it.
 */
export async function lockEndpointToUpdate(trx: Transaction<Database>, endpoint_id: string): Promise<void> {
  await sql`select 1 from webhook_endpoints where endpoint_id = ${endpoint_id} for no key update`.execute(
    trx,
  );
}

/** A 410 Gone: the receiver says it is gone for good, so nothing more is sent. */
export async function disableGoneEndpoint(db: Executor, endpoint_id: string): Promise<void> {
  await sql`
    update webhook_endpoints set status = 'disabled',
      disabled_reason = 'The endpoint answered 410 Gone.'
    where endpoint_id = ${endpoint_id} and status = 'enabled'`.execute(db);
}

/** Partners one page of package subscriptions covers (at most 3 rows each, one per package.* type). */
export const PACKAGE_SUBSCRIPTIONS_PAGE = 5_000;

/**
 * One page of the partners with an enabled endpoint, after `after` by partner_id (keyset): each
 * partner's subscriptions are read whole in its page, so a page never splits a partner.
 */
export async function partnersWithEndpoints(
  db: Executor,
  after: string | null,
  limit: number,
): Promise<string[]> {
  const result = await sql<{ partner_id: string }>`
    select distinct partner_id from webhook_endpoints
    where status = 'enabled' and (${after}::text is null or partner_id > ${after}::text)
    order by partner_id
    limit ${limit}`.execute(db);
  return result.rows.map((row) => row.partner_id);
}

/**
 * Per partner of `partner_ids` and package.* type its enabled endpoints receive (listed by name,
 * or all types: an empty list), when the first of them was made. At most 3 rows per partner.
 */
export async function packageSubscriptions(
  db: Executor,
  partner_ids: readonly string[],
): Promise<Array<{ partner_id: string; event_type: string; since: Date }>> {
  if (partner_ids.length === 0) return [];
  const result = await sql<{ partner_id: string; event_type: string; since: Date }>`
    select partner_id, t.event_type, min(created_at) as since
    from webhook_endpoints,
         unnest(case when cardinality(event_types) = 0
                     then array['package.added', 'package.updated', 'package.removed']
                     else event_types end) as t(event_type)
    where status = 'enabled' and partner_id = any(${partner_ids}::text[]) and t.event_type like 'package.%'
    group by partner_id, t.event_type`.execute(db);
  return result.rows;
}
