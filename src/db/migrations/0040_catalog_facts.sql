-- Issue 34 (contract, "Catalog additions"): the facts partners need to sell a package, and the
-- list of devices that take an eSIM.

-- What a package runs on, per country it covers: [{"country_code", "name", "technologies"}]. A
-- jsonb value rather than a table: it is read and written whole with its package, never queried
-- by operator. '[]' means not stated (a supplier that gives none); the import checks the shape.
-- fair_use: the throttling of an unlimited package once its daily allowance is used, null when
-- the package has a data allowance (or its supplier does not state one).
alter table packages
  add column networks jsonb not null default '[]'::jsonb check (jsonb_typeof(networks) = 'array'),
  add column fair_use_daily_data_mb integer check (fair_use_daily_data_mb between 1 and 1000000),
  add column fair_use_throttled_kbps integer check (fair_use_throttled_kbps between 1 and 1000000),
  add column kyc_required boolean not null default false,
  add check ((fair_use_daily_data_mb is null) = (fair_use_throttled_kbps is null)),
  add check (fair_use_daily_data_mb is null or data_mb is null);

-- The eSIM-capable devices partners show their travellers: shipped with the service
-- (src/catalog/shipped-devices.ts seeds it), replaced whole by the operator's import.
create table compatible_devices (
  brand text not null check (length(brand) between 1 and 64),
  model text not null check (length(model) between 1 and 128),
  os text not null check (length(os) between 1 and 32),
  primary key (brand, model)
);

-- One row: when the list was last replaced, and by what ('shipped': the service's own list, which
-- a newer release may refresh; 'import': the operator's, which nothing but another import replaces).
create table compatible_devices_list (
  singleton boolean primary key default true check (singleton),
  source text not null check (source in ('shipped', 'import')),
  -- The shipped list's date (its `updated_at`), or the moment of the import.
  updated_at timestamptz not null,
  device_count integer not null check (device_count between 0 and 5000)
);
