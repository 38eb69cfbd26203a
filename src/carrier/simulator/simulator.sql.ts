// Every statement the simulator runs against its `carrier_sim` schema, written out.
import type pg from "pg";

type Queryable = pg.Pool | pg.PoolClient;

export type ProfileRow = {
  reference: string;
  iccid: string;
  matching_id: string;
  smdp_address: string;
  external_package_id: string;
  data_mb_total: number | null;
  validity_days: number;
  start_date: string | null;
  created_at: Date;
};

export type TopupRow = {
  reference: string;
  iccid: string;
  external_package_id: string;
  data_mb: number | null;
  validity_days: number;
  created_at: Date;
};

export type RefusalRow = { reference: string; kind: "profile" | "topup"; reason: string; created_at: Date };

// bigint columns may arrive as text (pg's default) when the pool was not made by src/db/pool.ts.
const PROFILE_COLUMNS = `reference, iccid, matching_id, smdp_address, external_package_id,
  data_mb_total::float8 as data_mb_total, validity_days, start_date::text as start_date, created_at`;

/** Serialises every call for one reference, so a refusal and a provisioning can never both win. */
export async function lockReference(client: pg.PoolClient, reference: string): Promise<void> {
  await client.query("select pg_advisory_xact_lock(hashtext('carrier_sim:reference'), hashtext($1))", [
    reference,
  ]);
}

export async function selectProfileByReference(db: Queryable, reference: string): Promise<ProfileRow | null> {
  const result = await db.query<ProfileRow>(
    `select ${PROFILE_COLUMNS} from carrier_sim.profiles where reference = $1`,
    [reference],
  );
  return result.rows[0] ?? null;
}

export async function selectProfileByIccid(db: Queryable, iccid: string): Promise<ProfileRow | null> {
  const result = await db.query<ProfileRow>(
    `select ${PROFILE_COLUMNS} from carrier_sim.profiles where iccid = $1`,
    [iccid],
  );
  return result.rows[0] ?? null;
}

export async function selectRefusal(db: Queryable, reference: string): Promise<RefusalRow | null> {
  const result = await db.query<RefusalRow>(
    "select reference, kind, reason, created_at from carrier_sim.refusals where reference = $1",
    [reference],
  );
  return result.rows[0] ?? null;
}

export async function nextIccidSerial(client: pg.PoolClient): Promise<number> {
  const result = await client.query<{ serial: number }>(
    "select nextval('carrier_sim.iccid_serial')::float8 as serial",
  );
  return result.rows[0]!.serial;
}

export type NewProfile = Omit<ProfileRow, "created_at" | "data_mb_total"> & {
  data_mb_total: number | null;
  end_user_email: string;
};

/** Null when the reference already has a profile: the caller then reads and returns that one. */
export async function insertProfile(client: pg.PoolClient, profile: NewProfile): Promise<ProfileRow | null> {
  const result = await client.query<ProfileRow>(
    `insert into carrier_sim.profiles
       (reference, iccid, matching_id, smdp_address, external_package_id,
        data_mb_total, validity_days, start_date, end_user_email)
     values ($1, $2, $3, $4, $5, $6::bigint, $7::integer, $8::date, $9)
     on conflict (reference) do nothing
     returning ${PROFILE_COLUMNS}`,
    [
      profile.reference,
      profile.iccid,
      profile.matching_id,
      profile.smdp_address,
      profile.external_package_id,
      profile.data_mb_total,
      profile.validity_days,
      profile.start_date,
      profile.end_user_email,
    ],
  );
  return result.rows[0] ?? null;
}

export async function insertRefusal(
  client: pg.PoolClient,
  refusal: { reference: string; kind: "profile" | "topup"; reason: string },
): Promise<void> {
  await client.query(
    `insert into carrier_sim.refusals (reference, kind, reason) values ($1, $2, $3)
     on conflict (reference) do nothing`,
    [refusal.reference, refusal.kind, refusal.reason],
  );
}

export async function selectTopupByReference(db: Queryable, reference: string): Promise<TopupRow | null> {
  const result = await db.query<TopupRow>(
    `select reference, iccid, external_package_id, data_mb, validity_days, created_at
     from carrier_sim.topups where reference = $1`,
    [reference],
  );
  return result.rows[0] ?? null;
}

export async function selectTopupsByIccid(db: Queryable, iccid: string, limit: number): Promise<TopupRow[]> {
  const result = await db.query<TopupRow>(
    `select reference, iccid, external_package_id, data_mb, validity_days, created_at
     from carrier_sim.topups where iccid = $1 order by id limit $2`,
    [iccid, limit],
  );
  return result.rows;
}

/** Locks the profile row so concurrent top-ups of one ICCID add up instead of overwriting. */
export async function selectProfileForUpdate(
  client: pg.PoolClient,
  iccid: string,
): Promise<(ProfileRow & { cancelled_at: Date | null }) | null> {
  const result = await client.query<ProfileRow & { cancelled_at: Date | null }>(
    `select ${PROFILE_COLUMNS}, cancelled_at from carrier_sim.profiles where iccid = $1 for update`,
    [iccid],
  );
  return result.rows[0] ?? null;
}

/** Null when the reference already has a top-up: its data was added once, not again. */
export async function insertTopup(
  client: pg.PoolClient,
  topup: Omit<TopupRow, "created_at">,
): Promise<TopupRow | null> {
  const result = await client.query<TopupRow>(
    `insert into carrier_sim.topups (reference, iccid, external_package_id, data_mb, validity_days)
     values ($1, $2, $3, $4::integer, $5::integer)
     on conflict (reference) do nothing
     returning reference, iccid, external_package_id, data_mb, validity_days, created_at`,
    [topup.reference, topup.iccid, topup.external_package_id, topup.data_mb, topup.validity_days],
  );
  return result.rows[0] ?? null;
}

/** Adds a top-up's data to the profile. Unlimited (null) on either side makes the result unlimited. */
export async function addDataToProfile(
  client: pg.PoolClient,
  iccid: string,
  data_mb: number | null,
): Promise<number | null> {
  const result = await client.query<{ data_mb_total: number | null }>(
    `update carrier_sim.profiles
     set data_mb_total = case when data_mb_total is null or $2::bigint is null then null
                              else data_mb_total + $2::bigint end
     where iccid = $1
     returning data_mb_total::float8 as data_mb_total`,
    [iccid, data_mb],
  );
  if (result.rowCount !== 1) throw new Error(`no profile ${iccid} to top up`);
  return result.rows[0]!.data_mb_total;
}

export type AuditCounts = { provisionings: number; topups: number; refusals: number };

export async function countSince(db: Queryable, since: Date): Promise<AuditCounts> {
  const result = await db.query<AuditCounts>(
    `select
       (select count(*) from carrier_sim.profiles where created_at >= $1)::integer as provisionings,
       (select count(*) from carrier_sim.topups where created_at >= $1)::integer as topups,
       (select count(*) from carrier_sim.refusals where created_at >= $1)::integer as refusals`,
    [since],
  );
  return result.rows[0]!;
}

export async function listProvisioningsSince(db: Queryable, since: Date, limit: number) {
  const result = await db.query<{ reference: string; iccid: string; created_at: Date }>(
    `select reference, iccid, created_at from carrier_sim.profiles
     where created_at >= $1 order by id limit $2`,
    [since, limit],
  );
  return result.rows;
}

export async function listTopupsSince(db: Queryable, since: Date, limit: number) {
  const result = await db.query<{
    reference: string;
    iccid: string;
    data_mb: number | null;
    created_at: Date;
  }>(
    `select reference, iccid, data_mb, created_at from carrier_sim.topups
     where created_at >= $1 order by id limit $2`,
    [since, limit],
  );
  return result.rows;
}

export async function listRefusalsSince(db: Queryable, since: Date, limit: number): Promise<RefusalRow[]> {
  const result = await db.query<RefusalRow>(
    `select reference, kind, reason, created_at from carrier_sim.refusals
     where created_at >= $1 order by id limit $2`,
    [since, limit],
  );
  return result.rows;
}
