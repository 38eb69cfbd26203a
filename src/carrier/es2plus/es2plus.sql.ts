// The ES2+ adapter's own tables (migration 0010): the operator's profile inventory and our intent
// per order, written before each SM-DP+ call. Plain SQL over a pg pool: the adapter sits below the
// domains and shares nothing with them.
import type pg from "pg";

type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;

export type IntentState = "ordering" | "released" | "refused" | "cancelled";

export type IntentRow = {
  reference: string;
  iccid: string;
  matching_id: string;
  profile_type: string;
  smdp_address: string | null;
  state: IntentState;
  refusal: string | null;
  cancel_requested_at: Date | null;
  /** Set when a repeated CancelOrder's 3.5 could not tell "cancelled by us" from "downloaded". */
  cancel_ambiguous_at: Date | null;
  /** Set before our first DownloadOrder is sent (migration 0022); null: none was ever sent. */
  download_ordered_at: Date | null;
};

const INTENT_COLUMNS =
  "reference, iccid, matching_id, profile_type, smdp_address, state, refusal, cancel_requested_at, cancel_ambiguous_at, " +
  "download_ordered_at";

export async function selectIntent(db: Queryable, reference: string): Promise<IntentRow | null> {
  const result = await db.query<IntentRow>(
    `select ${INTENT_COLUMNS} from es2plus_profile_orders where reference = $1`,
    [reference],
  );
  return result.rows[0] ?? null;
}

/** Serializes the intent of one reference between concurrent callers (a retry and the resolver). */
export async function lockReference(client: pg.PoolClient, reference: string): Promise<void> {
  await client.query("select pg_advisory_xact_lock(hashtext('es2plus:' || $1))", [reference]);
}

/** The lowest free ICCID of the package, taken for `reference`; null when none is left. */
export async function takeIccid(
  client: pg.PoolClient,
  reference: string,
  external_package_id: string,
): Promise<{ iccid: string; profile_type: string } | null> {
  const result = await client.query<{ iccid: string; profile_type: string }>(
    `update es2plus_inventory set reference = $1, taken_at = now()
     where iccid = (select iccid from es2plus_inventory
                    where external_package_id = $2 and reference is null
                    order by iccid limit 1 for update skip locked)
     returning iccid, profile_type`,
    [reference, external_package_id],
  );
  return result.rows[0] ?? null;
}

export async function insertIntent(
  client: pg.PoolClient,
  intent: { reference: string; iccid: string; matching_id: string; profile_type: string },
): Promise<IntentRow> {
  const result = await client.query<IntentRow>(
    `insert into es2plus_profile_orders (reference, iccid, matching_id, profile_type)
     values ($1, $2, $3, $4) returning ${INTENT_COLUMNS}`,
    [intent.reference, intent.iccid, intent.matching_id, intent.profile_type],
  );
  return result.rows[0]!;
}

/**
 * Records, before a DownloadOrder is sent, that one may reach the SM-DP+; returns whether one was
 * recorded before this (only then can "ICCID not available" be our own earlier call's doing).
 */
export async function markDownloadOrdered(db: Queryable, reference: string): Promise<boolean> {
  const result = await db.query<{ ordered_before: boolean }>(
    `update es2plus_profile_orders o set download_ordered_at = coalesce(o.download_ordered_at, now()),
       updated_at = now()
     from (select reference, download_ordered_at from es2plus_profile_orders where reference = $1 for update) b
     where o.reference = b.reference
     returning b.download_ordered_at is not null as ordered_before`,
    [reference],
  );
  return result.rows[0]?.ordered_before ?? false;
}

export async function markReleased(db: Queryable, reference: string, smdp_address: string): Promise<void> {
  await db.query(
    `update es2plus_profile_orders set state = 'released', smdp_address = $2, updated_at = now()
     where reference = $1 and state = 'ordering'`,
    [reference, smdp_address],
  );
}

export async function markRefused(db: Queryable, reference: string, refusal: string): Promise<void> {
  await db.query(
    `update es2plus_profile_orders set state = 'refused', smdp_address = null, refusal = $2, updated_at = now()
     where reference = $1 and state in ('ordering', 'released')`,
    [reference, refusal.slice(0, 500)],
  );
}

/**
 * A refusal decided while the SM-DP+ may still hold the profile: kept in `refusal` (the state stays)
 * before CancelOrder is sent, so every later call finishes the withdrawal instead of going on.
 */
export async function markWithdrawing(db: Queryable, reference: string, refusal: string): Promise<void> {
  await db.query(
    `update es2plus_profile_orders set refusal = $2, updated_at = now()
     where reference = $1 and state in ('ordering', 'released') and refusal is null`,
    [reference, refusal.slice(0, 500)],
  );
}

export async function markCancelRequested(db: Queryable, reference: string): Promise<void> {
  await db.query(
    `update es2plus_profile_orders set cancel_requested_at = coalesce(cancel_requested_at, now()),
       updated_at = now() where reference = $1`,
    [reference],
  );
}

/**
 * A definite answer to our CancelOrder (or evidence that settles an ambiguous one): nothing of ours
 * is in flight any more, so a later 3.5 is not ours.
 */
export async function clearCancelRequested(db: Queryable, reference: string): Promise<void> {
  await db.query(
    `update es2plus_profile_orders set cancel_requested_at = null, cancel_ambiguous_at = null, updated_at = now()
     where reference = $1 and state = 'released'`,
    [reference],
  );
}

/** A repeated CancelOrder answered 3.5 with no download notification: held until evidence settles it. */
export async function markCancelAmbiguous(db: Queryable, reference: string): Promise<void> {
  await db.query(
    `update es2plus_profile_orders set cancel_ambiguous_at = coalesce(cancel_ambiguous_at, now()),
       updated_at = now() where reference = $1 and state = 'released'`,
    [reference],
  );
}

export type AmbiguousCancel = { reference: string; iccid: string; profile_type: string; since: Date };

/** The held cancels, oldest first (at most `limit`), for the operator. */
export async function selectAmbiguousCancels(db: Queryable, limit: number): Promise<AmbiguousCancel[]> {
  const result = await db.query<AmbiguousCancel>(
    `select reference, iccid, profile_type, cancel_ambiguous_at as since from es2plus_profile_orders
     where cancel_ambiguous_at is not null and state = 'released'
     order by cancel_ambiguous_at, reference limit $1`,
    [limit],
  );
  return result.rows;
}

export async function countAmbiguousCancels(db: Queryable): Promise<number> {
  const result = await db.query<{ n: number }>(
    `select count(*)::int as n from es2plus_profile_orders
     where cancel_ambiguous_at is not null and state = 'released'`,
  );
  return result.rows[0]?.n ?? 0;
}

export async function markCancelled(db: Queryable, reference: string): Promise<void> {
  await db.query(
    `update es2plus_profile_orders set state = 'cancelled', updated_at = now()
     where reference = $1 and state = 'released'`,
    [reference],
  );
}

/** Whether the SM-DP+ told us (HandleDownloadProgressInfo 3, 4 or 5) that the profile left it. */
export async function wasDownloaded(db: Queryable, iccid: string): Promise<boolean> {
  const result = await db.query(
    `select 1 from smdp_notifications where iccid = $1 and notification_point_id in (3, 4, 5)
       and status in ('Executed-Success', 'Executed-WithWarning') limit 1`,
    [iccid],
  );
  return result.rows.length > 0;
}

/** Adds ICCIDs to the inventory; an ICCID already there is left as it is. Returns how many were new. */
export async function insertInventory(
  client: pg.PoolClient,
  rows: { external_package_id: string; profile_type: string; iccids: readonly string[] },
): Promise<number> {
  const result = await client.query(
    `insert into es2plus_inventory (iccid, external_package_id, profile_type)
     select unnest($1::text[]), $2, $3 on conflict (iccid) do nothing`,
    [rows.iccids, rows.external_package_id, rows.profile_type],
  );
  return result.rowCount ?? 0;
}

export type InventoryCount = {
  external_package_id: string;
  profile_type: string;
  total: number;
  free: number;
};

export async function countInventory(db: Queryable, limit: number): Promise<InventoryCount[]> {
  const result = await db.query<InventoryCount>(
    `select external_package_id, profile_type, count(*)::int as total,
            (count(*) filter (where reference is null))::int as free
     from es2plus_inventory group by 1, 2 order by 1, 2 limit $1`,
    [limit],
  );
  return result.rows;
}
