-- The eSIM after the sale (contract: "eSIMs") and the events partners hear about ("Webhooks").
--
-- 1. An eSIM has one normalised status, moved only forward by carrier signals (pushed or pulled);
--    a top-up may move depleted/expired back to active or installed (a new bundle). Timestamps
--    are the carrier's times of the facts, not ours.
alter table esims
  add column status text not null default 'released'
    check (status in ('released', 'installed', 'active', 'depleted', 'expired', 'deleted', 'cancelled')),
  add column installed_at timestamptz,
  add column activated_at timestamptz,
  add column expires_at timestamptz,
  add column deleted_at timestamptz,
  -- How fresh the usage figures are: the carrier's as-of time of the newest usage applied.
  add column usage_updated_at timestamptz,
  -- The pull sync: when this eSIM is next due, and how the last attempts went.
  add column next_sync_at timestamptz not null default now(),
  add column last_synced_at timestamptz,
  add column sync_failures integer not null default 0 check (sync_failures >= 0),
  add column last_sync_error text check (length(last_sync_error) <= 500),
  -- Newest first, stable under inserts: the keyset of GET /v1/esims.
  add column seq bigint generated always as identity;
create unique index esims_seq_idx on esims (seq);
create index esims_partner_page_idx on esims (partner_id, seq desc);
create index esims_partner_status_idx on esims (partner_id, status, seq desc);
-- Only eSIMs that can still change are synced (deleted and cancelled are final).
create index esims_sync_due_idx on esims (next_sync_at)
  where status in ('released', 'installed', 'active', 'depleted', 'expired');

-- 2. One bundle per order on the eSIM: the original (position 0), then top-ups in order. A top-up's
--    position is its order's seq: unique and increasing without reading the other bundles, so two
--    top-ups of one eSIM completing at once never race for a position (the purchase path stays
--    one insert).
create table esim_bundles (
  order_id text primary key references orders (order_id),
  iccid text not null references esims (iccid),
  position bigint not null check (position >= 0),
  package_id text not null references packages (package_id),
  name text not null check (length(name) between 1 and 200),
  data_mb integer check (data_mb > 0),            -- null: unlimited
  validity_days integer not null check (validity_days between 1 and 3650),
  data_used_mb bigint not null default 0 check (data_used_mb >= 0),
  status text not null default 'queued' check (status in ('queued', 'active', 'depleted', 'expired', 'cancelled')),
  activated_at timestamptz,
  expires_at timestamptz,
  created_at timestamptz not null default now(),
  unique (iccid, position)
);

-- Bundles for what was sold before this migration: every completed order with its eSIM.
insert into esim_bundles (order_id, iccid, position, package_id, name, data_mb, validity_days, created_at)
select o.order_id, o.iccid,
       case when o.type = 'esim' then 0 else o.seq end,
       o.package_id, p.name, o.data_mb, o.validity_days, o.created_at
from orders o
join packages p on p.package_id = o.package_id
join esims e on e.iccid = o.iccid
where o.status = 'completed';

-- 3. Events: facts written in the same transaction as the change they announce, whether or not the
--    partner has a webhook endpoint. `dedup_key` makes a once-only event (a usage threshold of a
--    bundle, an expiry warning) impossible to record twice, whatever signal repeats.
create table events (
  event_id text primary key,                       -- evt_…, the webhook-id
  seq bigint generated always as identity unique,  -- newest first in GET /v1/events
  partner_id text not null references partners (partner_id),
  type text not null check (type ~ '^[a-z_]+\.[a-z_]+$'),
  data jsonb not null,
  dedup_key text check (length(dedup_key) between 1 and 200),
  created_at timestamptz not null default now()
);
create index events_partner_page_idx on events (partner_id, seq desc);
create index events_partner_type_idx on events (partner_id, type, seq desc);
create unique index events_dedup_idx on events (partner_id, dedup_key) where dedup_key is not null;
