-- Issue 33: the eSIM Go adapter's intent per order (src/carrier/esimgo/).
--
-- eSIM Go takes no idempotency key and no client reference on an order: every POST /orders is a
-- new order (docs/suppliers/esimgo.md §3, §6). So our intent is written before the POST, and a
-- reference whose POST may have landed is looked up (GET /orders in a createdAt window, matching
-- the bundle, the quantity and, for a top-up, the ICCID) before anything is posted again.
--   requested_at: set (by one conditional UPDATE under a per-bundle advisory lock: the claim) just
--     before a POST is sent; null when no POST is in flight or unknown. Cleared only by an answer
--     that says nothing was made (429, 401, 403), or re-claimed after a lookup found nothing and
--     the POST is older than the in-flight window. While one reference of a bundle (and, for a
--     top-up, of an eSIM) has requested_at set and no answer, another reference of that bundle
--     posts only once that one's order is found, or its lookup found none after its live call:
--     the window match of a lost answer then has one reference of ours to serve.
--   order_reference (+ iccid, smdp_address, matching_id): eSIM Go's answer, or what a lookup
--     found; unique, so one eSIM Go order is never ours twice.
--   refusal: eSIM Go's definitive no (a 400 to POST /orders); nothing was made.
--   refund_*: a revoke with refund of the bundle (DELETE /esims/{iccid}/bundles/{item}).
create table esimgo_orders (
  reference text primary key check (length(reference) between 1 and 200),
  kind text not null check (kind in ('esim', 'topup')),
  -- The bundle name, case-sensitive at eSIM Go.
  item text not null check (length(item) between 1 and 200),
  -- esim: the eSIM eSIM Go made (null until known); topup: the eSIM topped up (always set).
  iccid text check (iccid ~ '^[0-9]{18,22}$'),
  requested_at timestamptz,
  posts integer not null default 0 check (posts between 0 and 1000),
  order_reference text unique check (length(order_reference) between 1 and 100),
  smdp_address text check (length(smdp_address) <= 253),
  matching_id text check (length(matching_id) <= 255),
  refusal text check (length(refusal) <= 500),
  answered_at timestamptz,
  -- A lookup found several orders that could be this reference's: left to an operator; it no
  -- longer holds other orders of its bundle back (it is not a rival in claimPost).
  ambiguous_at timestamptz,
  -- Whether customerRef = reference was written on the eSIM (an eSIM of ours only).
  customer_ref_set boolean not null default false,
  refund_requested_at timestamptz,
  refunded_at timestamptz,
  refund_refusal text check (length(refund_refusal) <= 500),
  created_at timestamptz not null default now(),
  check (kind = 'esim' or iccid is not null),
  check (order_reference is null or refusal is null),
  check (refunded_at is null or refund_refusal is null)
);
-- The rivals of a claim: references of one bundle (and eSIM) whose POST is unresolved.
create index esimgo_orders_unresolved on esimgo_orders (item, iccid)
  where requested_at is not null and order_reference is null and refusal is null and ambiguous_at is null;
create index esimgo_orders_iccid on esimgo_orders (iccid) where iccid is not null;
