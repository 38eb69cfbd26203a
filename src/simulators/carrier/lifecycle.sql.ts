// The simulator's SQL of the lifecycle after the sale: profiles downloaded and deleted, bundles
// started, used, depleted and expired (README "Lifecycle").
import type pg from "pg";

type Queryable = pg.Pool | pg.PoolClient;

export type SimBundleRow = {
  id: number;
  reference: string;
  status: "queued" | "active" | "depleted" | "expired";
  data_mb: number | null;
  data_used_mb: number;
  validity_days: number;
  activated_at: Date | null;
  expires_at: Date | null;
  /** When the bundle was bought: a bundle never starts before it existed. */
  created_at: Date;
};

export type SimProfileState = { iccid: string; installed_at: Date | null; deleted_at: Date | null };

const BUNDLE_COLUMNS = `id::float8 as id, reference, status, data_mb::float8 as data_mb,
  data_used_mb::float8 as data_used_mb, validity_days, activated_at, expires_at, created_at`;

/** Locks the profile: every lifecycle change of one eSIM runs one at a time. A cancelled one is gone. */
export async function lockProfileState(
  client: pg.PoolClient,
  iccid: string,
): Promise<SimProfileState | null> {
  const result = await client.query<SimProfileState>(
    `select iccid, installed_at, deleted_at from carrier_sim.profiles
     where iccid = $1 and cancelled_at is null for update`,
    [iccid],
  );
  return result.rows[0] ?? null;
}

/**
 * The profile and its bundles (as selectBundles reads them) in one statement, for a signal: null
 * when there is no such profile (or it was cancelled).
 */
export async function selectProfileWithBundles(
  db: Queryable,
  iccid: string,
  limit: number,
): Promise<{ profile: SimProfileState; bundles: SimBundleRow[] } | null> {
  const result = await db.query<SimProfileState & { [K in keyof SimBundleRow]: SimBundleRow[K] | null }>(
    `select p.iccid, p.installed_at, p.deleted_at, b.id, b.reference, b.status, b.data_mb, b.data_used_mb,
            b.validity_days, b.activated_at, b.expires_at, b.created_at
     from carrier_sim.profiles p
     left join lateral (
       select ${BUNDLE_COLUMNS} from carrier_sim.bundles
       where iccid = p.iccid and cancelled_at is null order by id limit $2) b on true
     where p.iccid = $1 and p.cancelled_at is null
     order by b.id`,
    [iccid, limit],
  );
  const first = result.rows[0];
  if (first === undefined) return null;
  const profile = { iccid: first.iccid, installed_at: first.installed_at, deleted_at: first.deleted_at };
  const bundles = result.rows.flatMap((row) =>
    row.id === null
      ? []
      : [
          {
            id: row.id,
            reference: row.reference!,
            status: row.status!,
            data_mb: row.data_mb,
            data_used_mb: row.data_used_mb!,
            validity_days: row.validity_days!,
            activated_at: row.activated_at,
            expires_at: row.expires_at,
            created_at: row.created_at!,
          },
        ],
  );
  return { profile, bundles };
}

/**
 * Oldest first (the original, then top-ups in the order they were bought); at most `limit`.
 * Cancelled bundles (refunded) are gone for the device and the signals alike.
 */
export async function selectBundles(db: Queryable, iccid: string, limit: number): Promise<SimBundleRow[]> {
  const result = await db.query<SimBundleRow>(
    `select ${BUNDLE_COLUMNS} from carrier_sim.bundles
     where iccid = $1 and cancelled_at is null order by id limit $2`,
    [iccid, limit],
  );
  return result.rows;
}

export async function markInstalled(client: pg.PoolClient, iccid: string, at: Date): Promise<void> {
  await client.query(
    "update carrier_sim.profiles set installed_at = coalesce(installed_at, $2::timestamptz) where iccid = $1",
    [iccid, at],
  );
}

export async function markDeleted(client: pg.PoolClient, iccid: string, at: Date): Promise<void> {
  await client.query(
    "update carrier_sim.profiles set deleted_at = coalesce(deleted_at, $2::timestamptz) where iccid = $1",
    [iccid, at],
  );
}

/**
 * Running and depleted bundles whose validity ended by `now` become expired; then the eSIM's
 * bundles as selectBundles reads them, those just expired included: one statement, as the
 * lifecycle's every step starts with both. The select sees the rows as they were before the update
 * (one snapshot), so an expired one's status is set in the answer from the update's own list.
 */
export async function expireLapsedAndSelectBundles(
  client: pg.PoolClient,
  iccid: string,
  now: Date,
  limit: number,
): Promise<SimBundleRow[]> {
  const result = await client.query<SimBundleRow>(
    `with expired as (
       update carrier_sim.bundles set status = 'expired'
       where iccid = $1 and status in ('active', 'depleted') and expires_at <= $2::timestamptz
       returning id)
     select b.id::float8 as id, b.reference, case when e.id is null then b.status else 'expired' end as status,
            b.data_mb::float8 as data_mb, b.data_used_mb::float8 as data_used_mb, b.validity_days,
            b.activated_at, b.expires_at, b.created_at
     from carrier_sim.bundles b left join expired e on e.id = b.id
     where b.iccid = $1 and b.cancelled_at is null order by b.id limit $3`,
    [iccid, now, limit],
  );
  return result.rows;
}

/** Starts a queued bundle at `at`: its validity runs from then. */
export async function startBundle(client: pg.PoolClient, id: number, at: Date): Promise<void> {
  await client.query(
    `update carrier_sim.bundles
     set status = 'active', activated_at = $2::timestamptz,
         expires_at = $2::timestamptz + make_interval(days => validity_days)
     where id = $1 and status = 'queued'`,
    [id, at],
  );
}

export async function setBundleUsage(
  client: pg.PoolClient,
  id: number,
  data_used_mb: number,
  depleted: boolean,
): Promise<void> {
  await client.query(
    `update carrier_sim.bundles
     set data_used_mb = $2::bigint, status = case when $3::boolean then 'depleted' else status end where id = $1`,
    [id, data_used_mb, depleted],
  );
}

/** The sandbox `expire`: every bundle ends now (a running one at the earlier of now and its expiry). */
export async function expireAllBundles(client: pg.PoolClient, iccid: string, now: Date): Promise<void> {
  await client.query(
    `update carrier_sim.bundles
     set status = 'expired', expires_at = least(coalesce(expires_at, $2::timestamptz), $2::timestamptz)
     where iccid = $1 and status <> 'expired' and cancelled_at is null`,
    [iccid, now],
  );
}

/** eSIMs with a running bundle past its validity: the ticker ends them and signals it. */
export async function selectIccidsWithLapsedBundles(
  db: Queryable,
  now: Date,
  limit: number,
): Promise<string[]> {
  const result = await db.query<{ iccid: string }>(
    `select distinct iccid from carrier_sim.bundles
     where status = 'active' and expires_at <= $1::timestamptz limit $2`,
    [now, limit],
  );
  return result.rows.map((row) => row.iccid);
}
