// SQL of applying carrier signals: the eSIM row locked for the merge, its bundles, and the writes
// of one merge (every changed bundle in one statement; the eSIM's state and the pull sync's
// scheduling columns in another).
// Each write that changes what the eSIM renders notifies `esim_changed` with its ICCID (delivered
// at commit, repeats in one transaction folded into one) so every process drops its cached body.
import { sql, type Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import type { StoredBundle, StoredEsim } from "./apply-signal-merge.ts";
import { type PullSchedule, pullAt } from "./pull-schedule.ts";

export type LockedEsim = StoredEsim & { partner_id: string; created_at: Date };

/**
 * The eSIM, locked until the merge commits: signals for one eSIM apply one at a time. FOR NO KEY
 * UPDATE: a signal changes no key, and a top-up completing meanwhile inserts its bundle under a
 * key-share lock of this row, which FOR UPDATE would make wait (docs/architecture.md, "Lock order").
 */
export async function lockEsim(trx: Transaction<Database>, iccid: string): Promise<LockedEsim | null> {
  const result = await sql<LockedEsim>`
    select iccid, partner_id, created_at, status, installed_at, activated_at, expires_at, deleted_at,
           usage_updated_at
    from esims where iccid = ${iccid} for no key update`.execute(trx);
  return result.rows[0] ?? null;
}

/** The eSIM's bundles, original first; bounded like the carrier's signal. */
export async function bundlesOf(
  trx: Transaction<Database>,
  iccid: string,
  limit: number,
): Promise<StoredBundle[]> {
  // A group's eSIM: its bundle's carrier reference is its order line's (migration 0047).
  const result = await sql<StoredBundle>`
    select b.order_id, coalesce(l.reference, b.order_id) as reference, b.status, b.data_mb, b.data_used_mb,
           b.activated_at, b.expires_at
    from esim_bundles b
    left join order_lines l on l.order_id = b.order_id and l.iccid = b.iccid
    where b.iccid = ${iccid} order by b.position limit ${limit}`.execute(trx);
  return result.rows;
}

export async function updateBundles(
  trx: Transaction<Database>,
  iccid: string,
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
    where b.order_id = v.order_id and b.iccid = ${iccid}
    returning pg_notify('esim_changed', b.iccid)`.execute(trx);
}

/**
 * The one write of the eSIM row per signal: its merged state (`esim`, when the merge changed it,
 * else null) and its pull schedule, together. One statement, never two: a second UPDATE of a row
 * this transaction already updated re-checks the row's foreign keys, a key-share lock on its order,
 * which a refund holding that order while it waits for this eSIM would never grant (issue #30).
 * `schedule` (pull-schedule.ts) says when it is next pulled, null: never (a top-up makes it due
 * again). Pulled: at the schedule, and the failure count starts again. Pushed: the due pull is put
 * off to at least the interval's time (a pull in flight keeps its claim), but never past the
 * schedule's time-driven line. A changed state notifies `esim_changed`.
 */
export async function writeEsim(
  trx: Transaction<Database>,
  iccid: string,
  esim: StoredEsim | null,
  sync: { schedule: PullSchedule; pulled: boolean },
): Promise<void> {
  const { schedule, pulled } = sync;
  const next =
    schedule === null
      ? sql`null`
      : pulled
        ? sql`${pullAt(schedule)}::timestamptz`
        : // least and greatest skip nulls: no line, or no pull scheduled before (a revived eSIM).
          sql`least(greatest(next_sync_at, ${schedule.regular_at}::timestamptz), ${schedule.line_at}::timestamptz)`;
  const state =
    esim === null
      ? sql``
      : sql`status = ${esim.status}, installed_at = ${esim.installed_at}, activated_at = ${esim.activated_at},
            expires_at = ${esim.expires_at}, deleted_at = ${esim.deleted_at},
            usage_updated_at = ${esim.usage_updated_at},`;
  await sql`
    update esims
    set ${state}
        next_sync_at = ${next},
        last_synced_at = ${pulled ? sql`now()` : sql`last_synced_at`},
        sync_failures = ${pulled ? sql`0` : sql`sync_failures`},
        last_sync_error = ${pulled ? sql`null` : sql`last_sync_error`}
    where iccid = ${iccid}
    ${esim === null ? sql`` : sql`returning pg_notify('esim_changed', iccid)`}`.execute(trx);
}
