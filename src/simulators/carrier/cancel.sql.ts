// The simulator's SQL of cancellations (README "Cancellations"): a refund's cancel of a profile
// (with its bundles) or of one queued top-up bundle, marked by `cancelled_at`, never deleted.
import type pg from "pg";

type Queryable = pg.Pool | pg.PoolClient;

export type CancellableProfile = {
  iccid: string;
  reference: string;
  installed_at: Date | null;
  deleted_at: Date | null;
  cancelled_at: Date | null;
};

export type CancellableBundle = {
  reference: string;
  iccid: string;
  status: string;
  data_used_mb: number;
  cancelled_at: Date | null;
};

/** The profile row, locked: a cancel and a device's use of one eSIM run one at a time. */
export async function lockProfileForCancel(
  client: pg.PoolClient,
  iccid: string,
): Promise<CancellableProfile | null> {
  const result = await client.query<CancellableProfile>(
    `select iccid, reference, installed_at, deleted_at, cancelled_at
     from carrier_sim.profiles where iccid = $1 for update`,
    [iccid],
  );
  return result.rows[0] ?? null;
}

export async function selectBundleByReference(
  db: Queryable,
  reference: string,
): Promise<CancellableBundle | null> {
  const result = await db.query<CancellableBundle>(
    `select reference, iccid, status, data_used_mb::float8 as data_used_mb, cancelled_at
     from carrier_sim.bundles where reference = $1`,
    [reference],
  );
  return result.rows[0] ?? null;
}

/** Whether any live bundle of the eSIM has started or carried data. */
export async function anyBundleUsed(db: Queryable, iccid: string): Promise<boolean> {
  const result = await db.query<{ used: boolean }>(
    `select exists (select 1 from carrier_sim.bundles
                    where iccid = $1 and cancelled_at is null and (status <> 'queued' or data_used_mb > 0)) as used`,
    [iccid],
  );
  return result.rows[0]?.used === true;
}

/** The profile and every bundle on it, cancelled at `at` (those already cancelled keep their time). */
export async function markProfileCancelled(client: pg.PoolClient, iccid: string, at: Date): Promise<void> {
  await client.query(
    "update carrier_sim.profiles set cancelled_at = coalesce(cancelled_at, $2::timestamptz) where iccid = $1",
    [iccid, at],
  );
  await client.query(
    "update carrier_sim.bundles set cancelled_at = coalesce(cancelled_at, $2::timestamptz) where iccid = $1",
    [iccid, at],
  );
}

export async function markBundleCancelled(client: pg.PoolClient, reference: string, at: Date): Promise<void> {
  await client.query(
    "update carrier_sim.bundles set cancelled_at = coalesce(cancelled_at, $2::timestamptz) where reference = $1",
    [reference, at],
  );
}

export type CancellationRow = {
  reference: string;
  iccid: string;
  kind: "profile" | "bundle";
  cancelled_at: Date;
};

/** Cancellations since `since`: profiles by their reference, and top-up bundles cancelled alone. */
export async function listCancellationsSince(
  db: Queryable,
  since: Date,
  limit: number,
): Promise<CancellationRow[]> {
  const result = await db.query<CancellationRow>(
    `select reference, iccid, kind, cancelled_at from (
       select p.reference, p.iccid, 'profile' as kind, p.cancelled_at from carrier_sim.profiles p
       where p.cancelled_at >= $1
       union all
       select b.reference, b.iccid, 'bundle', b.cancelled_at from carrier_sim.bundles b
       join carrier_sim.profiles p on p.iccid = b.iccid
       where b.cancelled_at >= $1 and b.reference <> p.reference
         and (p.cancelled_at is null or b.cancelled_at < p.cancelled_at)
     ) c order by cancelled_at, reference limit $2`,
    [since, limit],
  );
  return result.rows;
}

export async function countCancellationsSince(db: Queryable, since: Date): Promise<number> {
  const result = await db.query<{ n: number }>(
    `select ((select count(*) from carrier_sim.profiles where cancelled_at >= $1)
           + (select count(*) from carrier_sim.bundles b join carrier_sim.profiles p on p.iccid = b.iccid
              where b.cancelled_at >= $1 and b.reference <> p.reference
                and (p.cancelled_at is null or b.cancelled_at < p.cancelled_at)))::integer as n`,
    [since],
  );
  return result.rows[0]?.n ?? 0;
}
