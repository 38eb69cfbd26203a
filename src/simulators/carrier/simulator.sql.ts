// Every statement the simulator runs against its `carrier_sim` schema, written out.
import assert from "node:assert/strict";
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

/** `count` serials of the inventory range at once; those never used are gaps, never reused. */
export async function nextIccidSerials(db: Queryable, count: number): Promise<number[]> {
  const result = await db.query<{ serial: number }>(
    "select nextval('carrier_sim.iccid_serial')::float8 as serial from generate_series(1, $1::integer)",
    [count],
  );
  return result.rows.map((row) => row.serial);
}

export type ProvisionOutcome =
  | { kind: "profile"; iccid: string; matching_id: string; smdp_address: string }
  | { kind: "refused"; reason: string };

/** carrier_sim.provision_profile (schema.ts): the recorded answer, or the refusal, or the new profile. */
export async function provisionInOneCall(
  db: Queryable,
  profile: Omit<NewProfile, "data_mb_total"> & { data_mb_total: number | null; refusal: string | null },
): Promise<ProvisionOutcome> {
  const result = await db.query<{
    kind: "profile" | "refused";
    iccid: string;
    matching_id: string;
    smdp_address: string;
    reason: string;
  }>(
    `select kind, iccid, matching_id, smdp_address, reason
     from carrier_sim.provision_profile($1, $2, $3, $4, $5, $6::bigint, $7::integer, $8::date, $9, $10)`,
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
      profile.refusal,
    ],
  );
  const row = result.rows[0];
  if (!row) throw new Error(`carrier_sim.provision_profile answered nothing for ${profile.reference}`);
  return row.kind === "refused"
    ? { kind: "refused", reason: row.reason }
    : { kind: "profile", iccid: row.iccid, matching_id: row.matching_id, smdp_address: row.smdp_address };
}

export type NewProfile = Omit<ProfileRow, "created_at" | "data_mb_total"> & {
  data_mb_total: number | null;
  end_user_email: string;
};

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

/** A top-up's recorded answer, in one statement: its ICCID and the profile's data now, or its refusal. */
export async function selectTopupAnswer(
  db: Queryable,
  reference: string,
): Promise<{ iccid: string; data_mb_total: number | null } | { reason: string } | null> {
  const result = await db.query<{
    iccid: string | null;
    data_mb_total: number | null;
    reason: string | null;
  }>(
    `select t.iccid, p.data_mb_total::float8 as data_mb_total, null::text as reason
     from carrier_sim.topups t left join carrier_sim.profiles p on p.iccid = t.iccid
     where t.reference = $1
     union all
     select null, null, r.reason from carrier_sim.refusals r where r.reference = $1`,
    [reference],
  );
  const row = result.rows[0];
  if (!row) return null;
  return row.iccid !== null
    ? { iccid: row.iccid, data_mb_total: row.data_mb_total }
    : { reason: row.reason ?? "refused" };
}

export type TopUpOutcome =
  /** Recorded by this call: the caller applies time to the bundles (lifecycle.ts advance). */
  | {
      kind: "topup";
      iccid: string;
      data_mb_total: number | null;
      installed_at: Date | null;
      deleted_at: Date | null;
    }
  /** The reference's recorded top-up, from an earlier call: nothing was added. */
  | { kind: "recorded"; iccid: string; data_mb_total: number | null }
  | { kind: "refused"; reason: string };

/**
 * carrier_sim.top_up (schema.ts), in the caller's transaction: the recorded answer, or the refusal
 * (recorded), or the top-up recorded with its data added and its bundle queued; the profile stays
 * locked until the transaction ends.
 */
export async function topUpInOneCall(
  client: pg.PoolClient,
  topup: Omit<TopupRow, "created_at"> & { refusal: string | null },
): Promise<TopUpOutcome> {
  // Each kind fills its own columns (schema.ts): the ICCID for the two answers, the reason for a refusal.
  const result = await client.query<{
    kind: TopUpOutcome["kind"];
    iccid: string | null;
    data_mb_total: number | null;
    reason: string | null;
    installed_at: Date | null;
    deleted_at: Date | null;
  }>(
    `select kind, iccid, data_mb_total, reason, installed_at, deleted_at
     from carrier_sim.top_up($1, $2, $3, $4::bigint, $5::integer, $6)`,
    [
      topup.reference,
      topup.iccid,
      topup.external_package_id,
      topup.data_mb,
      topup.validity_days,
      topup.refusal,
    ],
  );
  const row = result.rows[0];
  if (!row) throw new Error(`carrier_sim.top_up answered nothing for ${topup.reference}`);
  if (row.kind === "refused") {
    assert.ok(row.reason !== null, `carrier_sim.top_up refused ${topup.reference} without a reason`);
    return { kind: "refused", reason: row.reason };
  }
  const { iccid, data_mb_total, installed_at, deleted_at } = row;
  assert.ok(iccid !== null, `carrier_sim.top_up answered ${row.kind} without an ICCID`);
  if (row.kind === "recorded") return { kind: "recorded", iccid, data_mb_total };
  return { kind: "topup", iccid, data_mb_total, installed_at, deleted_at };
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
