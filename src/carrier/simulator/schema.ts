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

-- The lifecycle after the sale (README "Lifecycle"): the profile's download and deletion, and one
-- bundle per provisioning or top-up reference, queued until it starts.
alter table carrier_sim.profiles
  add column if not exists installed_at timestamptz,
  add column if not exists deleted_at timestamptz;

create table if not exists carrier_sim.bundles (
  id bigint generated always as identity primary key,
  reference text not null unique,
  iccid text not null references carrier_sim.profiles (iccid),
  -- null: unlimited data.
  data_mb bigint check (data_mb > 0),
  data_used_mb bigint not null default 0 check (data_used_mb >= 0),
  validity_days integer not null check (validity_days > 0),
  status text not null default 'queued' check (status in ('queued', 'active', 'depleted', 'expired')),
  activated_at timestamptz,
  expires_at timestamptz,
  created_at timestamptz not null default now()
);
create index if not exists bundles_iccid on carrier_sim.bundles (iccid, id);
create index if not exists bundles_running_expiry on carrier_sim.bundles (expires_at) where status = 'active';

-- Refunds (README "Cancellations"): a cancelled profile or bundle is gone for the device and the
-- carrier's signals; the row stays, so a second cancel of the same reference answers ok again.
alter table carrier_sim.profiles add column if not exists cancelled_at timestamptz;
alter table carrier_sim.bundles add column if not exists cancelled_at timestamptz;

-- Profiles and top-ups made before bundles existed get theirs (the original's data is what the
-- profile holds less its top-ups'); idempotent by reference.
insert into carrier_sim.bundles (reference, iccid, data_mb, validity_days, created_at)
select p.reference, p.iccid,
       nullif(greatest(p.data_mb_total - coalesce((select sum(t.data_mb) from carrier_sim.topups t
                                                   where t.iccid = p.iccid), 0), 0), 0),
       p.validity_days, p.created_at
from carrier_sim.profiles p
on conflict (reference) do nothing;
insert into carrier_sim.bundles (reference, iccid, data_mb, validity_days, created_at)
select t.reference, t.iccid, t.data_mb, t.validity_days, t.created_at from carrier_sim.topups t
on conflict (reference) do nothing;
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
