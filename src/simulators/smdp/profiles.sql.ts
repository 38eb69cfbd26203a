// The SM-DP+ simulator's SQL: one profile row per ICCID, locked for each function call, and its
// transitions.
import type pg from "pg";

export type ProfileState =
  | "AVAILABLE"
  | "ALLOCATED"
  | "LINKED"
  | "CONFIRMED"
  | "RELEASED"
  | "DOWNLOADED"
  | "INSTALLED"
  | "DELETED"
  | "UNAVAILABLE";

export type SmdpProfile = {
  iccid: string;
  profile_type: string;
  state: ProfileState;
  eid: string | null;
  matching_id: string | null;
};

type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;
const COLUMNS = "iccid, profile_type, state, eid, matching_id";

export async function lockProfile(client: pg.PoolClient, iccid: string): Promise<SmdpProfile | null> {
  const result = await client.query<SmdpProfile>(
    `select ${COLUMNS} from smdp_sim.profiles where iccid = $1 for update`,
    [iccid],
  );
  return result.rows[0] ?? null;
}

export async function selectProfile(db: Queryable, iccid: string): Promise<SmdpProfile | null> {
  const result = await db.query<SmdpProfile>(`select ${COLUMNS} from smdp_sim.profiles where iccid = $1`, [
    iccid,
  ]);
  return result.rows[0] ?? null;
}

/** The first AVAILABLE profile of a type, locked; null when none is left. */
export async function lockFreeProfileOfType(
  client: pg.PoolClient,
  profile_type: string,
): Promise<SmdpProfile | null> {
  const result = await client.query<SmdpProfile>(
    `select ${COLUMNS} from smdp_sim.profiles where profile_type = $1 and state = 'AVAILABLE'
     order by iccid limit 1 for update skip locked`,
    [profile_type],
  );
  return result.rows[0] ?? null;
}

export async function profileTypeExists(db: Queryable, profile_type: string): Promise<boolean> {
  const result = await db.query("select 1 from smdp_sim.profiles where profile_type = $1 limit 1", [
    profile_type,
  ]);
  return result.rows.length > 0;
}

export async function matchingIdTaken(db: Queryable, matching_id: string, iccid: string): Promise<boolean> {
  const result = await db.query("select 1 from smdp_sim.profiles where matching_id = $1 and iccid <> $2", [
    matching_id,
    iccid,
  ]);
  return result.rows.length > 0;
}

export async function moveProfile(
  client: pg.PoolClient,
  profile: SmdpProfile,
  to: ProfileState,
  fn: string,
  fields: { eid?: string | null; matching_id?: string | null } = {},
): Promise<SmdpProfile> {
  const result = await client.query<SmdpProfile>(
    `update smdp_sim.profiles set state = $2,
       eid = case when $3::boolean then $4 else eid end,
       matching_id = case when $5::boolean then $6 else matching_id end,
       updated_at = now()
     where iccid = $1 returning ${COLUMNS}`,
    [
      profile.iccid,
      to,
      "eid" in fields,
      fields.eid ?? null,
      "matching_id" in fields,
      fields.matching_id ?? null,
    ],
  );
  await client.query(
    "insert into smdp_sim.transitions (iccid, function, from_state, to_state) values ($1, $2, $3, $4)",
    [profile.iccid, fn, profile.state, to],
  );
  return result.rows[0]!;
}

/** Loads profiles as AVAILABLE; an ICCID already loaded is left as it is. Returns how many were new. */
export async function loadProfiles(
  db: Queryable,
  profile_type: string,
  iccids: readonly string[],
): Promise<number> {
  const result = await db.query(
    `insert into smdp_sim.profiles (iccid, profile_type) select unnest($1::text[]), $2
     on conflict (iccid) do nothing`,
    [iccids, profile_type],
  );
  return result.rowCount ?? 0;
}

/** The audit: profiles by state, and every profile ever released (ConfirmOrder with release, or ReleaseProfile). */
export async function auditProfiles(db: Queryable, limit: number) {
  const counts = await db.query<{ state: ProfileState; count: number }>(
    "select state, count(*)::int as count from smdp_sim.profiles group by state order by state",
  );
  const released = await db.query<{ iccid: string; matching_id: string | null; state: ProfileState }>(
    `select p.iccid, p.matching_id, p.state from smdp_sim.profiles p
     where exists (select 1 from smdp_sim.transitions t where t.iccid = p.iccid and t.to_state = 'RELEASED')
     order by p.iccid limit $1`,
    [limit],
  );
  return {
    counts: Object.fromEntries(counts.rows.map((row) => [row.state, row.count])),
    released: released.rows,
  };
}
