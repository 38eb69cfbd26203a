// SQL of the pull sync: claiming the eSIMs that are due, oldest first, so that two processes never
// pull the same one, and recording a failed pull.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { PackageSupplier } from "../db/schema.ts";

/**
 * The statuses of the partial index esims_sync_due_idx. Deleted and cancelled are final; an expired
 * eSIM is not pulled either (its next_sync_at is null, pull-schedule.ts) until a top-up makes it due.
 */
const SYNCABLE = sql`status in ('released', 'installed', 'active', 'depleted', 'expired')`;

/**
 * Claims up to `limit` due eSIMs, oldest due first: `for update skip locked` passes over the rows
 * another process is claiming, and moving `next_sync_at` forward by the lease keeps them claimed
 * after this statement commits, until the pull records its outcome or the lease runs out (the
 * process died: another one pulls them then).
 */
export async function claimDueEsims(db: Executor, limit: number, lease_s: number): Promise<DueEsim[]> {
  const result = await sql<DueEsim>`
    update esims e set next_sync_at = now() + make_interval(secs => ${lease_s})
    from (select iccid from esims where ${SYNCABLE} and next_sync_at <= now()
          order by next_sync_at limit ${limit} for update skip locked) due,
         orders o
    where e.iccid = due.iccid and o.order_id = e.order_id
    returning e.iccid, o.supplier`.execute(db);
  return result.rows;
}

/** A claimed eSIM and the supplier of the order that made it: where its state is pulled from. */
export type DueEsim = { iccid: string; supplier: PackageSupplier };

/** The supplier of the order that made the eSIM; null: no such eSIM. */
export async function esimSupplier(db: Executor, iccid: string): Promise<PackageSupplier | null> {
  const result = await sql<{ supplier: PackageSupplier }>`
    select o.supplier from esims e join orders o on o.order_id = e.order_id
    where e.iccid = ${iccid}`.execute(db);
  return result.rows[0]?.supplier ?? null;
}

/** Claims a round gave up on (the carrier is down): due again now. Returns how many. */
export async function releaseClaims(db: Executor, iccids: readonly string[]): Promise<number> {
  if (iccids.length === 0) return 0;
  const result = await sql`
    update esims set next_sync_at = now()
    where iccid = any(${[...iccids]}::text[]) and next_sync_at is not null`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Due for a pull now: a top-up's completion added a bundle the carrier will report (a depleted or
 * expired eSIM is usable again). One UPDATE of a column no foreign key uses: its row lock (FOR NO
 * KEY UPDATE) does not conflict with the key-share locks that concurrent top-ups' bundle inserts
 * take on this eSIM, so they never deadlock on it (a SELECT ... FOR UPDATE here did).
 */
export async function dueNow(db: Executor, iccid: string): Promise<void> {
  // Already due (an earlier top-up, a pull not yet run): nothing to write, and no row lock held for
  // the rest of the caller's transaction, which concurrent top-ups of this eSIM would queue behind.
  await sql`
    update esims set next_sync_at = now()
    where iccid = ${iccid} and (next_sync_at is null or next_sync_at > now())`.execute(db);
}

/**
 * A failed pull: counted, kept for the operator, and tried again after `interval_s` doubled per
 * failure so far (at most `max_s`), times `jitter` (1 to 1.2).
 */
export async function markSyncFailed(
  db: Executor,
  iccid: string,
  error: string,
  backoff: { interval_s: number; max_s: number; jitter: number },
): Promise<void> {
  await sql`
    update esims
    set sync_failures = sync_failures + 1, last_sync_error = ${error.slice(0, 500)},
        next_sync_at = now() + make_interval(secs => greatest(${backoff.interval_s}::float8,
          least(${backoff.interval_s}::float8 * power(2, least(sync_failures, 20)), ${backoff.max_s}::float8))
          * ${backoff.jitter}::float8)
    where iccid = ${iccid} and next_sync_at is not null`.execute(db);
}

export type UnreachableEsim = {
  iccid: string;
  partner_id: string;
  status: string;
  sync_failures: number;
  last_sync_error: string | null;
  last_synced_at: Date | null;
  /** null: not pulled any more (expired, deleted, cancelled). */
  next_sync_at: Date | null;
  created_at: Date;
  /** Seconds since the last successful pull, or since the eSIM was made when it never had one. */
  unreached_for_s: number;
};

const SYNC_COLUMNS = sql`iccid, partner_id, status, sync_failures, last_sync_error, last_synced_at, next_sync_at,
  created_at, extract(epoch from now() - coalesce(last_synced_at, created_at))::float8 as unreached_for_s`;

/** eSIMs the sync could not reach on its last attempts and still pulls, longest unreached first. */
export async function unreachableEsims(db: Executor, limit: number): Promise<UnreachableEsim[]> {
  const result = await sql<UnreachableEsim>`
    select ${SYNC_COLUMNS}
    from esims where (sync_failures > 0 or last_sync_error is not null) and next_sync_at is not null
    order by coalesce(last_synced_at, created_at) limit ${limit}`.execute(db);
  return result.rows;
}

/** One eSIM's sync columns, for `esims show`. */
export async function syncStateOf(db: Executor, iccid: string): Promise<UnreachableEsim | null> {
  const result = await sql<UnreachableEsim>`
    select ${SYNC_COLUMNS} from esims where iccid = ${iccid}`.execute(db);
  return result.rows[0] ?? null;
}
