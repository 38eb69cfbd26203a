-- Webhooks (contract: "Webhooks"): a partner's endpoints, and one delivery per event and endpoint.
--
-- 1. Events are handed to endpoints by the delivery loop, not by the transaction that records them
--    (a purchase stays one insert per event): the loop claims events whose `dispatched_at` is null
--    (FOR UPDATE SKIP LOCKED), makes their deliveries and stamps them, in one transaction. The
--    partial index holds only the events not handed out yet, so it stays tiny. Events recorded
--    before this migration had no endpoint to go to: they count as dispatched.
alter table events add column dispatched_at timestamptz;
update events set dispatched_at = created_at;
create index events_undispatched_idx on events (seq) where dispatched_at is null;

-- 2. Endpoints. The signing secret is stored encrypted (AES-256-GCM with WEBHOOK_SECRET_KEY, the
--    endpoint id as associated data); after a rotation the previous one keeps signing beside it
--    until previous_secret_expires_at. failing_since: the start of an unbroken run of failed
--    attempts (null after any success); five days of it disables the endpoint.
create table webhook_endpoints (
  endpoint_id text primary key,
  seq bigint generated always as identity unique,
  partner_id text not null references partners (partner_id),
  url text not null check (length(url) between 1 and 2048),
  description text check (length(description) <= 500),
  event_types text[] not null default '{}' check (cardinality(event_types) <= 20),
  status text not null default 'enabled' check (status in ('enabled', 'disabled')),
  disabled_reason text check (length(disabled_reason) <= 500),
  secret_sealed text not null check (length(secret_sealed) <= 500),
  previous_secret_sealed text check (length(previous_secret_sealed) <= 500),
  previous_secret_expires_at timestamptz,
  failing_since timestamptz,
  created_at timestamptz not null default now(),
  check ((status = 'disabled') = (disabled_reason is not null))
);
create index webhook_endpoints_partner_idx on webhook_endpoints (partner_id, seq desc);

-- 3. Deliveries: one per (endpoint, event), whatever retries or crashes happen. A sender claims a
--    due one by setting `leased_until` (and a fresh lease_token) in a short transaction, then calls
--    the receiver holding no connection; only the holder of the token records the outcome. A sender
--    killed mid-call leaves the lease to run out and the delivery is sent again (at least once).
create table webhook_deliveries (
  delivery_id text primary key,
  seq bigint generated always as identity unique,
  endpoint_id text not null references webhook_endpoints (endpoint_id) on delete cascade,
  partner_id text not null references partners (partner_id),
  event_id text not null references events (event_id),
  event_type text not null,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  attempts integer not null default 0 check (attempts >= 0),
  last_attempt_at timestamptz,
  next_attempt_at timestamptz,
  last_response_status integer check (last_response_status between 100 and 999),
  last_error text check (length(last_error) <= 500),
  leased_until timestamptz,
  lease_token text,
  created_at timestamptz not null default now(),
  unique (endpoint_id, event_id),
  check ((status = 'pending') = (next_attempt_at is not null))
);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_leased_idx on webhook_deliveries (endpoint_id) where leased_until is not null;
create index webhook_deliveries_page_idx on webhook_deliveries (endpoint_id, seq desc);
create index webhook_deliveries_status_page_idx on webhook_deliveries (endpoint_id, status, seq desc);
