// The SM-DP+ simulator's own schema, `smdp_sim`: another company's records, beside the API's
// tables, surviving a crash of either side. Created at start-up, idempotently, under an advisory
// lock (two processes starting on one empty database take turns). The lock is the transaction's,
// not the session's: the sandbox's built-in SM-DP+ connects through the service's pool, which may
// be PgBouncer in transaction mode.
import type pg from "pg";
import { inTransaction } from "../../db/pool.ts";

const SCHEMA_SQL = `
create schema if not exists smdp_sim;

-- One row per profile the operator loaded (POST /sandbox/profiles). States (SGP.22 5.3):
-- AVAILABLE -> ALLOCATED (LINKED with an EID) -> CONFIRMED -> RELEASED -> DOWNLOADED -> INSTALLED
-- -> DELETED; CancelOrder ends an unused one as AVAILABLE again or UNAVAILABLE.
create table if not exists smdp_sim.profiles (
  iccid text primary key,
  profile_type text not null,
  state text not null default 'AVAILABLE' check (state in ('AVAILABLE', 'ALLOCATED', 'LINKED',
    'CONFIRMED', 'RELEASED', 'DOWNLOADED', 'INSTALLED', 'DELETED', 'UNAVAILABLE')),
  eid text,
  matching_id text unique,
  loaded_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index if not exists profiles_free on smdp_sim.profiles (profile_type, iccid) where state = 'AVAILABLE';

-- Every transition, for the audit (profiles ever released) and for support-like inspection.
create table if not exists smdp_sim.transitions (
  id bigint generated always as identity primary key,
  iccid text not null references smdp_sim.profiles (iccid),
  function text not null,
  from_state text not null,
  to_state text not null,
  at timestamptz not null default now()
);
create index if not exists transitions_iccid on smdp_sim.transitions (iccid, id);
`;

export async function ensureSmdpSchema(pool: pg.Pool): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query("select pg_advisory_xact_lock(hashtext('smdp_sim:schema'))");
    await client.query(SCHEMA_SQL);
  });
}
