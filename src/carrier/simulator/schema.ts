// The simulator's own schema, `carrier_sim`, beside (never inside) the API's tables: it plays a
// separate company whose records survive an API crash, and its own crash too.
// Created at start-up rather than by the API's migrations, because the simulator is a service of
// its own. Every statement is idempotent; an advisory lock makes two processes starting against
// one empty database take turns (a bare `create ... if not exists` can still race on the catalog).
import type pg from "pg";

const LOCK_SQL = "select pg_advisory_lock(hashtext('carrier_sim:schema'))";
const UNLOCK_SQL = "select pg_advisory_unlock(hashtext('carrier_sim:schema'))";

const SCHEMA_SQL = `
create schema if not exists carrier_sim;

-- The inventory range: the serial part of the ICCID (11 digits between the issuer prefix and the
-- Luhn digit). No cycle: running out of inventory is an error, never a reused ICCID.
create sequence if not exists carrier_sim.iccid_serial
  as bigint minvalue 1 maxvalue 99999999999 no cycle;

create table if not exists carrier_sim.profiles (
  id bigint generated always as identity primary key,
  reference text not null unique,
  iccid text not null unique,
  matching_id text not null unique,
  smdp_address text not null,
  external_package_id text not null,
  -- null: unlimited data.
  data_mb_total bigint check (data_mb_total >= 0),
  validity_days integer not null check (validity_days > 0),
  start_date date,
  end_user_email text not null,
  created_at timestamptz not null default now()
);

create table if not exists carrier_sim.topups (
  id bigint generated always as identity primary key,
  reference text not null unique,
  iccid text not null references carrier_sim.profiles (iccid),
  external_package_id text not null,
  -- null: the top-up makes the profile unlimited.
  data_mb integer check (data_mb > 0),
  validity_days integer not null check (validity_days > 0),
  created_at timestamptz not null default now()
);
create index if not exists topups_iccid on carrier_sim.topups (iccid);

-- A refused reference stays refused: a retry must get the same answer, not a second chance.
create table if not exists carrier_sim.refusals (
  id bigint generated always as identity primary key,
  reference text not null unique,
  kind text not null check (kind in ('profile', 'topup')),
  reason text not null,
  created_at timestamptz not null default now()
);
`;

export async function ensureSimulatorSchema(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query(LOCK_SQL);
    await client.query(SCHEMA_SQL);
  } finally {
    await client.query(UNLOCK_SQL).catch(() => undefined);
    client.release();
  }
}
