-- Issue 35 (travellers), items 3 and 4: a partner's brand and notification settings, and the
-- optional notices to travellers (80% of a bundle's data used, 24 hours before it expires).
--
-- partner_branding: what the partner chose (PUT /v1/profile/branding), accent colour included as
--   chosen; the colour renderers get is adjusted for contrast when the brand is loaded
--   (partners/load-brand.ts), so a later change of the rule needs no migration. No row: the
--   service's own brand. The logo is a PNG validated before it is stored (partners/png-logo.ts).
create table partner_branding (
  partner_id text primary key references partners (partner_id),
  display_name text check (length(display_name) between 1 and 100),
  accent_color text not null check (accent_color ~ '^#[0-9a-f]{6}$'),
  logo_png bytea check (octet_length(logo_png) between 1 and 40960),
  support_email text check (length(support_email) between 3 and 254),
  support_url text check (support_url ~ '^https://' and length(support_url) <= 500),
  email_from_name text check (length(email_from_name) between 1 and 100),
  reply_to text check (length(reply_to) between 3 and 254),
  updated_at timestamptz not null default now()
);

-- No row: the contract's defaults (confirmation email on, usage emails off, no top-up URL).
create table partner_notification_settings (
  partner_id text primary key references partners (partner_id),
  confirmation_email boolean not null default true,
  traveller_usage_emails boolean not null default false,
  top_up_url text check (top_up_url ~ '^https://' and length(top_up_url) <= 500),
  updated_at timestamptz not null default now()
);
-- The notice sweep starts from the partners that turned usage emails on (few).
create index partner_notification_settings_usage_idx on partner_notification_settings (partner_id)
  where traveller_usage_emails;

-- A bundle's notices, once each: the sweep sets the mark in the transaction that queues the notice
-- (notifications/queue-traveller-notices.ts), so a bundle is picked once however many sweeps run.
alter table esim_bundles
  add column usage_noticed_at timestamptz,
  add column expiry_noticed_at timestamptz;
create index esim_bundles_expiry_notice_idx on esim_bundles (expires_at)
  where status = 'active' and expiry_noticed_at is null;
create index esim_bundles_usage_notice_idx on esim_bundles (iccid)
  where status = 'active' and usage_noticed_at is null and data_mb is not null;

-- One row per bundle and kind (the unique key: never two, even if a mark above were lost), the
-- outbox of its email and its log at once: queued until sent, failed after its last attempt,
-- skipped when the traveller unsubscribed or the partner turned the notices off before it went out.
create table traveller_notices (
  notice_id text primary key,
  bundle_order_id text not null references esim_bundles (order_id),
  kind text not null check (kind in ('usage_80', 'expires_24h')),
  iccid text not null references esims (iccid),
  partner_id text not null references partners (partner_id),
  -- The eSIM's first order: its traveller (address, first name) is the notice's recipient.
  esim_order_id text not null references orders (order_id),
  package_name text not null check (length(package_name) between 1 and 200),
  data_used_mb bigint not null check (data_used_mb >= 0),
  data_mb integer check (data_mb > 0),
  expires_at timestamptz,
  status text not null default 'queued' check (status in ('queued', 'sent', 'failed', 'skipped')),
  due_at timestamptz not null default now(),
  attempts integer not null default 0 check (attempts >= 0),
  lease_token text,
  last_error text check (length(last_error) <= 500),
  message_id text,
  sent_at timestamptz,
  created_at timestamptz not null default now(),
  unique (bundle_order_id, kind)
);
create index traveller_notices_due_idx on traveller_notices (due_at) where status = 'queued';
create index traveller_notices_iccid_idx on traveller_notices (iccid);

-- The List-Unsubscribe link of an eSIM's notices (RFC 8058): an unguessable token made with its
-- first notice, the same in every later one; unsubscribed_at set by the one-click POST.
create table traveller_notice_subscriptions (
  iccid text primary key references esims (iccid),
  unsubscribe_token text not null unique check (length(unsubscribe_token) between 20 and 100),
  unsubscribed_at timestamptz,
  created_at timestamptz not null default now()
);
