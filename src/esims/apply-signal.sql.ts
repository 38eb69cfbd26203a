// SQL of applying carrier signals: the eSIM row locked for the merge, its bundles, and the writes
// of one merge (every changed bundle in one statement), plus the pull sync's scheduling columns.
// Each write that changes what the eSIM renders notifies `esim_changed` with its ICCID (delivered
// at commit, repeats in one transaction folded into one) so every process drops its cached body.
import { sql, type Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import type { StoredBundle, StoredEsim } from "./apply-signal-merge.ts";
import { type PullSchedule, pullAt } from "./pull-schedule.ts";

export type LockedEsim = StoredEsim & { partner_id: string; created_at: Date };

/** The eSIM, locked until the merge commits: signals for one eSIM apply one at a time. */
export async function lockEsim(trx: Transaction<Database>, iccid: string): Promise<LockedEsim | null> {
  const result = await sql<LockedEsim>`
    select iccid, partner_id, created_at, status, installed_at, activated_at, expires_at, deleted_at,
           usage_updated_at
    from esims where iccid = ${iccid} for update`.execute(trx);
  return result.rows[0] ?? null;
}

/** The eSIM's bundles, original first; bounded like the carrier's signal. */
export async function bundlesOf(
  trx: Transaction<Database>,
  iccid: string,
  limit: number,
): Promise<StoredBundle[]> {
  const result = await sql<StoredBundle>`
    select order_id, status, data_mb, data_used_mb, activated_at, expires_at
    from esim_bundles where iccid = ${iccid} order by position limit ${limit}`.execute(trx);
  return result.rows;
}

export async function updateBundles(
  trx: Transaction<Database>,
  bundles: readonly StoredBundle[],
): Promise<void> {
  if (bundles.length === 0) return;
  const iso = (date: Date | null) => date?.toISOString() ?? null;
  await sql`
    update esim_bundles b
    set status = v.status, data_used_mb = v.data_used_mb, activated_at = v.activated_at, expires_at = v.expires_at
    from unnest(${bundles.map((b) => b.order_id)}::text[], ${bundles.map((b) => b.status)}::text[],
                ${bundles.map((b) => b.data_used_mb)}::bigint[],
                ${bundles.map((b) => iso(b.activated_at))}::timestamptz[],
                ${bundles.map((b) => iso(b.expires_at))}::timestamptz[])
         as v (order_id, status, data_used_mb, activated_at, expires_at)
    where b.order_id = v.order_id
    returning pg_notify('esim_changed', b.iccid)`.execute(trx);
}

export async function updateEsimState(trx: Transaction<Database>, esim: StoredEsim): Promise<void> {
  await sql`
    update esims
    set status = ${esim.status}, installed_at = ${esim.installed_at}, activated_at = ${esim.activated_at},
        expires_at = ${esim.expires_at}, deleted_at = ${esim.deleted_at}, usage_updated_at = ${esim.usage_updated_at}
    where iccid = ${esim.iccid}
    returning pg_notify('esim_changed', iccid)`.execute(trx);
}

/**
 * After a signal was applied the eSIM is fresh; `schedule` (pull-schedule.ts) says when it is next
 * pulled, null: never (a top-up makes it due again). Pulled: at the schedule, and the failure count
 * starts again. Pushed: the due pull is put off to at least the interval's time (a pull in flight
 * keeps its claim), but never past the schedule's time-driven line.
 */
export async function markSynced(
  trx: Transaction<Database>,
  iccid: string,
  schedule: PullSchedule,
  pulled: boolean,
): Promise<void> {
  const next =
    schedule === null
      ? sql`null`
      : pulled
        ? sql`${pullAt(schedule)}::timestamptz`
        : // least and greatest skip nulls: no line, or no pull scheduled before (a revived eSIM).
          sql`least(greatest(next_sync_at, ${schedule.regular_at}::timestamptz), ${schedule.line_at}::timestamptz)`;
  await sql`
    update esims
    set next_sync_at = ${next},
        last_synced_at = ${pulled ? sql`now()` : sql`last_synced_at`},
        sync_failures = ${pulled ? sql`0` : sql`sync_failures`},
        last_sync_error = ${pulled ? sql`null` : sql`last_sync_error`}
    where iccid = ${iccid}`.execute(trx);
}
