// The simulator's own schema, `carrier_sim`, beside (never inside) the API's tables: it plays a
// separate company whose records survive an API crash, and its own crash too.
// Created at start-up rather than by the API's migrations, because the simulator is a service of
// its own. Every statement is idempotent; an advisory lock makes two processes starting against
// one empty database take turns (a bare `create ... if not exists` can still race on the catalog).
// The lock is the transaction's, not the session's: the sandbox's built-in simulator connects
// through the service's pool, which may be PgBouncer in transaction mode.
import type pg from "pg";
import { inTransaction } from "../../db/pool.ts";

const LOCK_SQL = "select pg_advisory_xact_lock(hashtext('carrier_sim:schema'))";

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

-- A provisioning in one round trip (provision-profile.ts): under the reference's lock, the recorded
-- answer (the profile, or the refusal) if there is one; else the refusal given, or the new profile
-- and its queued bundle. Each statement of a volatile function reads a fresh snapshot, so what a
-- call that held the lock before this one committed is seen. kind: 'profile' or 'refused'.
create or replace function carrier_sim.provision_profile(
  p_reference text, p_iccid text, p_matching_id text, p_smdp_address text, p_external_package_id text,
  p_data_mb bigint, p_validity_days integer, p_start_date date, p_end_user_email text, p_refusal text)
returns table (kind text, iccid text, matching_id text, smdp_address text, reason text)
language plpgsql volatile as $fn$
begin
  perform pg_advisory_xact_lock(hashtext('carrier_sim:reference'), hashtext(p_reference));
  return query select 'profile'::text, p.iccid, p.matching_id, p.smdp_address, null::text
    from carrier_sim.profiles p where p.reference = p_reference;
  if found then return; end if;
  return query select 'refused'::text, null::text, null::text, null::text, r.reason
    from carrier_sim.refusals r where r.reference = p_reference;
  if found then return; end if;
  if p_refusal is not null then
    insert into carrier_sim.refusals (reference, kind, reason) values (p_reference, 'profile', p_refusal)
      on conflict (reference) do nothing;
    return query select 'refused'::text, null::text, null::text, null::text, p_refusal;
    return;
  end if;
  insert into carrier_sim.profiles (reference, iccid, matching_id, smdp_address, external_package_id,
                                    data_mb_total, validity_days, start_date, end_user_email)
    values (p_reference, p_iccid, p_matching_id, p_smdp_address, p_external_package_id,
            p_data_mb, p_validity_days, p_start_date, p_end_user_email);
  -- The original bundle, queued until the first data use (README "Lifecycle").
  insert into carrier_sim.bundles (reference, iccid, data_mb, validity_days)
    values (p_reference, p_iccid, p_data_mb, p_validity_days) on conflict (reference) do nothing;
  return query select 'profile'::text, p_iccid, p_matching_id, p_smdp_address, null::text;
end
$fn$;

-- A top-up's records in one round trip (top-up.ts), as the provisioning's above: under the
-- reference's lock, the recorded answer (the top-up with the profile's data now, or the refusal)
-- if there is one; else, with the profile row locked, a refusal (no such profile, a cancelled one,
-- or the one given) recorded; else the top-up recorded, its data added to the profile's total
-- (unlimited, null, on either side makes it unlimited) and its bundle queued. The caller then
-- applies time to the bundles (lifecycle.ts advance) in the same transaction, under the same
-- profile lock, with the profile's installed_at and deleted_at returned here. Under the lock the
-- top-up's insert cannot conflict: if it did, the data was added already, so it fails instead.
-- kind: 'topup' (recorded now: installed_at and deleted_at given), 'recorded' or 'refused'.
create or replace function carrier_sim.top_up(
  p_reference text, p_iccid text, p_external_package_id text, p_data_mb bigint, p_validity_days integer,
  p_refusal text)
returns table (kind text, iccid text, data_mb_total float8, reason text, installed_at timestamptz,
               deleted_at timestamptz)
language plpgsql volatile as $fn$
declare
  v_profile carrier_sim.profiles%rowtype;
  v_reason text;
  v_total bigint;
begin
  perform pg_advisory_xact_lock(hashtext('carrier_sim:reference'), hashtext(p_reference));
  return query select 'recorded'::text, t.iccid, p.data_mb_total::float8, null::text, null::timestamptz,
                      null::timestamptz
    from carrier_sim.topups t left join carrier_sim.profiles p on p.iccid = t.iccid
    where t.reference = p_reference;
  if found then return; end if;
  return query select 'refused'::text, null::text, null::float8, r.reason, null::timestamptz, null::timestamptz
    from carrier_sim.refusals r where r.reference = p_reference;
  if found then return; end if;
  select * into v_profile from carrier_sim.profiles p where p.iccid = p_iccid for update;
  v_reason := case when not found then 'unknown iccid ' || p_iccid
                   when v_profile.cancelled_at is not null then 'profile ' || p_iccid || ' was cancelled'
                   else p_refusal end;
  if v_reason is not null then
    insert into carrier_sim.refusals (reference, kind, reason) values (p_reference, 'topup', v_reason)
      on conflict (reference) do nothing;
    return query select 'refused'::text, null::text, null::float8, v_reason, null::timestamptz, null::timestamptz;
    return;
  end if;
  insert into carrier_sim.topups (reference, iccid, external_package_id, data_mb, validity_days)
    values (p_reference, p_iccid, p_external_package_id, p_data_mb, p_validity_days);
  update carrier_sim.profiles p
    set data_mb_total = case when p.data_mb_total is null or p_data_mb is null then null
                             else p.data_mb_total + p_data_mb end
    where p.iccid = p_iccid
    returning p.data_mb_total into v_total;
  insert into carrier_sim.bundles (reference, iccid, data_mb, validity_days)
    values (p_reference, p_iccid, p_data_mb, p_validity_days) on conflict (reference) do nothing;
  return query select 'topup'::text, p_iccid, v_total::float8, null::text, v_profile.installed_at,
                      v_profile.deleted_at;
end
$fn$;
`;

export async function ensureSimulatorSchema(pool: pg.Pool): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(LOCK_SQL);
    await client.query(SCHEMA_SQL);
  });
}
