-- The whole first schema. Forward-only: a later change is a new numbered file, never an edit here.
-- Identifiers are prefixed random strings made by the application (src/ids.ts).

create table partners (
  partner_id text primary key,
  name text not null check (length(name) between 1 and 200),
  created_at timestamptz not null default now()
);

-- Keys are stored only as a SHA-256 hash; the full key is shown once, when issued.
create table api_keys (
  key_id text primary key,
  partner_id text not null references partners (partner_id),
  key_hash bytea not null unique,
  -- The first characters of the key ("sand_Ab12"), so an operator can tell keys apart.
  key_hint text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz,
  last_used_at timestamptz
);
create index api_keys_partner_idx on api_keys (partner_id);

-- Double-entry ledger. Money moves only as transfers between accounts, in integer minor units.
-- Only partner wallets keep running totals, because only they need a balance check under
-- concurrency; the operator accounts' balances are derived from transfers so that no single
-- row is updated by every purchase of every partner.
create table ledger_accounts (
  account_id text primary key,
  kind text not null check (kind in ('partner_wallet', 'operator_funding', 'operator_revenue')),
  partner_id text unique references partners (partner_id),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  posted_credits_minor bigint not null default 0 check (posted_credits_minor >= 0),
  posted_debits_minor bigint not null default 0 check (posted_debits_minor >= 0),
  pending_debits_minor bigint not null default 0 check (pending_debits_minor >= 0),
  created_at timestamptz not null default now(),
  constraint wallet_has_partner check ((kind = 'partner_wallet') = (partner_id is not null)),
  -- The rule the whole service rests on: a wallet's available balance never goes below zero,
  -- whatever the application does and however many purchases race.
  constraint wallet_available_not_negative check (
    kind <> 'partner_wallet' or posted_credits_minor - posted_debits_minor - pending_debits_minor >= 0
  )
);
create unique index ledger_operator_account_idx on ledger_accounts (kind, currency) where partner_id is null;

create table ledger_transfers (
  transfer_id text primary key,
  debit_account_id text not null references ledger_accounts (account_id),
  credit_account_id text not null references ledger_accounts (account_id),
  amount_minor bigint not null check (amount_minor > 0),
  currency text not null,
  kind text not null check (kind in ('wallet_credit', 'purchase')),
  state text not null check (state in ('pending', 'posted', 'voided')),
  -- wallet_credit: the operator's reference (bank transfer id); purchase: the order id.
  reference text not null check (length(reference) between 1 and 128),
  created_at timestamptz not null default now(),
  resolved_at timestamptz,
  constraint transfer_between_two_accounts check (debit_account_id <> credit_account_id),
  constraint transfer_resolved_iff_final check ((state = 'pending') = (resolved_at is null))
);
-- An operator credit reference credits a wallet once; an order has exactly one transfer.
create unique index ledger_transfers_credit_reference_idx on ledger_transfers (credit_account_id, reference)
  where kind = 'wallet_credit';
create unique index ledger_transfers_order_idx on ledger_transfers (reference) where kind = 'purchase';
create index ledger_transfers_debit_idx on ledger_transfers (debit_account_id, created_at);
create index ledger_transfers_credit_idx on ledger_transfers (credit_account_id, created_at);

-- Catalog.
create table destinations (
  destination_code text primary key check (destination_code ~ '^[A-Z]{2}$'),
  name text not null
);

create table packages (
  package_id text primary key check (length(package_id) between 1 and 64),
  external_package_id text not null unique check (length(external_package_id) between 1 and 128),
  name text not null check (length(name) between 1 and 200),
  -- null: unlimited data.
  data_mb integer check (data_mb > 0),
  validity_days integer not null check (validity_days between 1 and 3650),
  wholesale_minor bigint not null check (wholesale_minor > 0),
  retail_minor bigint not null check (retail_minor > 0),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  -- 'country' covers one destination; 'regional' and 'global' cover several.
  coverage text not null check (coverage in ('country', 'regional', 'global')),
  region text,
  -- An import never deletes a package a cart or order may reference; it retires it.
  active boolean not null default true,
  updated_at timestamptz not null default now()
);

create table package_destinations (
  package_id text not null references packages (package_id),
  destination_code text not null references destinations (destination_code),
  primary key (destination_code, package_id)
);
create index package_destinations_package_idx on package_destinations (package_id);

-- Bumped by every catalog change; part of every catalog ETag and the cache key of every process.
create table catalog_version (
  singleton boolean primary key default true check (singleton),
  version bigint not null
);
insert into catalog_version (version) values (1);

-- Carts: a reservation of one package at the price of the moment, for a limited time.
create table carts (
  cart_key text primary key,
  partner_id text not null references partners (partner_id),
  package_id text not null references packages (package_id),
  start_date date,
  total_minor bigint not null check (total_minor > 0),
  currency text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index carts_partner_idx on carts (partner_id, created_at);

-- Orders: new eSIMs (type esim, one per cart) and top-ups (type topup).
create table orders (
  order_id text primary key,
  -- Insertion order: the keyset for newest-first pages that stay stable as new orders arrive.
  seq bigint generated always as identity unique,
  partner_id text not null references partners (partner_id),
  type text not null check (type in ('esim', 'topup')),
  status text not null check (status in ('pending', 'completed', 'failed')),
  cart_key text unique references carts (cart_key),
  package_id text not null references packages (package_id),
  external_package_id text not null,
  start_date date,
  total_minor bigint not null check (total_minor > 0),
  currency text not null,
  client_reference text check (length(client_reference) between 1 and 128),
  -- End-user details, needed for the confirmation email and for support; never logged.
  email text not null,
  phone text not null,
  first_name text not null,
  last_name text not null,
  -- For a top-up, the eSIM topped up; for a new eSIM, the one provisioned (null until completed).
  iccid text,
  failure_code text,
  failure_detail text,
  -- While a pending order is being driven (its carrier call in flight), nobody else drives it.
  -- A request that dies leaves the lease to expire; then a retry or the resolver takes over.
  lease_until timestamptz,
  created_at timestamptz not null default now(),
  resolved_at timestamptz,
  constraint esim_order_has_cart check ((type = 'esim') = (cart_key is not null)),
  constraint topup_order_has_iccid check (type <> 'topup' or iccid is not null),
  constraint completed_esim_has_iccid check (type <> 'esim' or status <> 'completed' or iccid is not null),
  constraint resolved_iff_final check ((status = 'pending') = (resolved_at is null))
);
create index orders_partner_page_idx on orders (partner_id, seq desc);
create index orders_partner_reference_idx on orders (partner_id, client_reference, seq desc)
  where client_reference is not null;
create index orders_pending_idx on orders (created_at) where status = 'pending';

-- eSIM profiles provisioned for partners.
create table esims (
  iccid text primary key check (iccid ~ '^89[0-9]{17,18}$'),
  partner_id text not null references partners (partner_id),
  order_id text not null unique references orders (order_id),
  package_id text not null references packages (package_id),
  smdp_address text not null,
  activation_code text not null,
  created_at timestamptz not null default now()
);
create index esims_partner_idx on esims (partner_id);

-- What an order bought: one row per item (one today: a cart holds one package).
create table purchases (
  order_id text not null references orders (order_id),
  position integer not null check (position >= 0),
  package_id text not null references packages (package_id),
  iccid text not null,
  smdp_address text not null,
  activation_code text not null,
  start_date date,
  primary key (order_id, position)
);

-- Idempotency keys of POST /orders/submit-topup (IETF draft "The Idempotency-Key HTTP Header Field").
create table idempotency_keys (
  partner_id text not null references partners (partner_id),
  idempotency_key text not null check (length(idempotency_key) between 1 and 255),
  -- SHA-256 of method, path and canonical body: the same key with another request is refused.
  fingerprint bytea not null,
  state text not null check (state in ('running', 'completed')),
  order_id text references orders (order_id),
  -- The request id of the first attempt: a stored failure replays with it, byte for byte.
  request_id text not null,
  response_status integer,
  response_body text,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (partner_id, idempotency_key),
  constraint completed_has_response check ((state = 'completed') = (response_status is not null and response_body is not null))
);
create index idempotency_keys_expiry_idx on idempotency_keys (expires_at);
create index idempotency_keys_order_idx on idempotency_keys (order_id) where order_id is not null;

-- Confirmation emails actually delivered: one row per order, written by the mail job after the
-- SMTP server accepted the message, so a retried job never sends a delivered message again.
create table email_deliveries (
  order_id text primary key references orders (order_id),
  message_id text not null,
  recipient text not null,
  delivered_at timestamptz not null default now()
);
