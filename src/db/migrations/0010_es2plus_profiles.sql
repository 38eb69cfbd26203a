-- Issue 15: profiles from an SM-DP+ over GSMA ES2+ (CARRIER_PROFILES=es2plus).
--
-- ES2+ has no idempotency key, so our intent is written before every call: the ICCID we chose
-- from the operator's inventory and the matching ID we generated. After an unknown outcome the
-- adapter asks the SM-DP+ about that same ICCID again, never about a new one (one profile per order).

-- The operator's profile inventory: ICCIDs the SM-DP+ holds for a profile type, per package of
-- ours (imported with `npm run cli -- carrier import-inventory`). `reference` is the order that
-- took it; an ICCID once taken is never handed out again, whatever became of its order.
create table es2plus_inventory (
  iccid text primary key check (iccid ~ '^89[0-9]{17,18}$'),
  external_package_id text not null check (length(external_package_id) between 1 and 200),
  profile_type text not null check (length(profile_type) between 1 and 64),
  reference text unique,
  imported_at timestamptz not null default now(),
  taken_at timestamptz
);
create index es2plus_inventory_free on es2plus_inventory (external_package_id, iccid) where reference is null;

-- One row per order whose profile comes from the SM-DP+: written before DownloadOrder.
--   ordering:  intent stored; DownloadOrder/ConfirmOrder may or may not have happened
--   released:  ConfirmOrder (releaseFlag true) done; the activation code is final
--   refused:   the SM-DP+ or the bundle system said no; nothing is left at the SM-DP+ for it
--   cancelled: cancelled by a refund (CancelOrder)
create table es2plus_profile_orders (
  reference text primary key check (length(reference) between 1 and 200),
  iccid text not null unique references es2plus_inventory (iccid),
  matching_id text not null unique check (matching_id ~ '^[0-9A-Z-]{1,64}$'),
  profile_type text not null,
  smdp_address text,
  state text not null default 'ordering' check (state in ('ordering', 'released', 'refused', 'cancelled')),
  refusal text check (length(refusal) <= 500),
  -- Set before CancelOrder is sent, so a repeated cancel after an unknown outcome can tell
  -- "already cancelled by us" from "downloaded meanwhile".
  cancel_requested_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((state = 'released') = (smdp_address is not null) or state = 'cancelled')
);

-- HandleDownloadProgressInfo as received (for support: eligibility and confirmation failures,
-- downloads that never installed). A repeated notification is the same row and is ignored.
create table smdp_notifications (
  id bigint generated always as identity primary key,
  iccid text not null,
  notification_point_id smallint not null check (notification_point_id between 1 and 5),
  status text not null check (status in ('Executed-Success', 'Executed-WithWarning', 'Failed', 'Expired')),
  subject_code text check (length(subject_code) <= 16),
  reason_code text check (length(reason_code) <= 16),
  message text check (length(message) <= 500),
  occurred_at timestamptz not null,
  received_at timestamptz not null default now(),
  unique (iccid, notification_point_id, status, occurred_at)
);
create index smdp_notifications_iccid on smdp_notifications (iccid, id);
