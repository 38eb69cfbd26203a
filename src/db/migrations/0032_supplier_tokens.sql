-- Issue 33: a supplier's access token, shared by every process and the CLI (contract, "Suppliers
-- (operator side)"), and the Airalo adapter's intent per order (src/carrier/airalo/).

-- One row per supplier whose API takes a bearer token from a client-credentials grant (Airalo's
-- POST /v2/token). Sealed at rest (AES-256-GCM under a key derived from the supplier's client
-- secret, src/carrier/airalo/token.ts): a copy of the database alone does not hand out the token.
-- A refresh is taken under pg_advisory_xact_lock(hashtext('supplier_token:' || supplier)), so
-- one process refreshes at a time and the others wait, then read the new row.
create table supplier_tokens (
  supplier text primary key check (supplier in ('airalo', 'esimgo')),
  access_token_sealed text not null check (length(access_token_sealed) between 1 and 8192),
  expires_at timestamptz not null,
  refreshed_at timestamptz not null default now(),
  check (expires_at > refreshed_at)
);

-- Airalo has no idempotency key: a repeated POST /v2/orders makes a second order
-- (docs/suppliers/airalo.md §6). So our intent is written before the POST, our reference goes into
-- the order's `description`, and a reference whose POST may have reached Airalo is looked up
-- (GET /v2/orders?filter[description]=...) before anything is posted again.
--   requested_at: set (by one conditional UPDATE: the claim) just before a POST is sent; null when
--     no POST is in flight or unknown. Cleared only by an answer that says nothing was made (429,
--     401, a coded "try later"), or re-claimed after a lookup found nothing and the POST is older
--     than the in-flight window.
--   airalo_order_id (+ iccid, smdp_address, matching_id): Airalo's answer, or what a lookup found.
--   refusal: Airalo's definitive no; nothing was made.
create table airalo_orders (
  reference text primary key check (length(reference) between 1 and 200),
  kind text not null check (kind in ('sim', 'topup')),
  package_id text not null check (length(package_id) between 1 and 200),
  -- sim: the eSIM Airalo made (null until known); topup: the eSIM topped up (always set).
  iccid text check (iccid ~ '^[0-9]{18,22}$'),
  -- Our package's data, to name bundles in esimState (null: unlimited).
  data_mb integer check (data_mb > 0),
  requested_at timestamptz,
  posts integer not null default 0 check (posts between 0 and 1000),
  airalo_order_id bigint unique,
  smdp_address text check (length(smdp_address) <= 253),
  matching_id text check (length(matching_id) <= 255),
  refusal text check (length(refusal) <= 500),
  answered_at timestamptz,
  -- Refunds (POST /v2/refund): a request reviewed later by Airalo; its id once answered.
  refund_requested_at timestamptz,
  refund_id text check (length(refund_id) <= 100),
  created_at timestamptz not null default now(),
  check (kind = 'sim' or iccid is not null),
  check (airalo_order_id is null or refusal is null),
  check (kind = 'topup' or airalo_order_id is null or (iccid is not null and matching_id is not null))
);
create index airalo_orders_iccid on airalo_orders (iccid, airalo_order_id) where iccid is not null;
