-- People (issue 31): users with roles for partners and the operator, their sign-in secrets and
-- second factors, one-time links, single sign-on, API key scopes, and the audit log. Every
-- secret is stored as a hash (passwords: scrypt; tokens and recovery codes: SHA-256) or sealed
-- with the service's secret box (a TOTP seed, an SSO client secret: both must be read back).

-- A person. Partner users belong to one partner; operator users to none. An email is one person
-- per realm (sign-in asks for an email, not a partner), compared case-insensitively.
create table users (
  user_id text primary key,
  realm text not null check (realm in ('partner', 'operator')),
  partner_id text references partners (partner_id),
  email text not null check (length(email) <= 254),
  name text not null default '' check (length(name) <= 200),
  role text not null,
  status text not null default 'invited' check (status in ('invited', 'active', 'disabled')),
  -- scrypt, in the self-describing form `scrypt$N$r$p$salt$hash` (people/passwords.ts); null
  -- until an invitation is accepted, or for a person who signs in only with SSO.
  password_hash text,
  -- TOTP (RFC 6238): the seed, sealed; the last time step accepted, so a code is never taken twice.
  totp_secret_sealed bytea,
  totp_last_step bigint,
  created_at timestamptz not null default now(),
  last_sign_in_at timestamptz,
  check ((realm = 'partner') = (partner_id is not null)),
  check (
    (realm = 'partner' and role in ('owner', 'admin', 'developer', 'support', 'finance', 'viewer'))
    or (realm = 'operator' and role in ('admin', 'finance', 'support', 'viewer'))
  )
);
create unique index users_email_idx on users (realm, lower(email));
create index users_partner_idx on users (partner_id, created_at, user_id) where partner_id is not null;

-- One-time links: an invitation (72 h) or a password reset (1 h). Only the token's SHA-256 is kept;
-- used_at set in the transaction that uses it, so a link works once.
create table user_tokens (
  token_hash bytea primary key,
  user_id text not null references users (user_id),
  kind text not null check (kind in ('invitation', 'password_reset')),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index user_tokens_user_idx on user_tokens (user_id);

-- Ten per enrolment, shown once; each used once.
create table recovery_codes (
  user_id text not null references users (user_id),
  code_hash bytea not null,
  used_at timestamptz,
  primary key (user_id, code_hash)
);

-- WebAuthn credentials (passkeys): the public key and the signature counter the authenticator last reported.
create table passkeys (
  credential_id text primary key,
  user_id text not null references users (user_id),
  public_key bytea not null,
  counter bigint not null default 0,
  transports text[] not null default '{}',
  name text not null default '' check (length(name) <= 100),
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create index passkeys_user_idx on passkeys (user_id);

-- Single sign-on (OpenID Connect), one provider per partner, set by an owner.
create table sso_connections (
  partner_id text primary key references partners (partner_id),
  issuer text not null,
  client_id text not null,
  client_secret_sealed bytea not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- The email domains a provider vouches for: a domain belongs to one partner at most, or sign-in
-- with SSO could not tell whose team a new person joins.
create table sso_domains (
  domain text primary key check (domain = lower(domain)),
  partner_id text not null references sso_connections (partner_id) on delete cascade
);

alter table partners add column require_two_factor boolean not null default false;

-- Failed sign-ins, for the throttle (never before 5 in 15 minutes). A row is written before the
-- password is checked (a reservation, deleted when the password was right), so parallel attempts
-- cannot all pass one count. subject: an account, an account from one address, or an address.
create table sign_in_failures (
  failure_id bigint generated always as identity primary key,
  subject text not null check (length(subject) <= 300),
  failed_at timestamptz not null default now()
);
create index sign_in_failures_idx on sign_in_failures (subject, failed_at);
create index sign_in_failures_age_idx on sign_in_failures (failed_at);

-- API keys gain a name, a scope and an address allowlist.
alter table api_keys add column name text not null default '' check (length(name) <= 100);
alter table api_keys add column scope text not null default 'full' check (scope in ('full', 'read_only'));
alter table api_keys add column allowed_ips cidr[] not null default '{}';

-- The audit log: one row per change, written in the transaction that makes it. partner_id says
-- whose log it is in (null: the operator's own, such as an operator user invited).
create table audit_log (
  audit_seq bigint generated always as identity primary key,
  audit_id text not null unique,
  created_at timestamptz not null default now(),
  partner_id text references partners (partner_id),
  actor_type text not null check (actor_type in ('user', 'api_key', 'operator', 'system')),
  actor_id text,
  actor_email text,
  action text not null,
  target_type text not null,
  target_id text,
  ip text,
  details jsonb not null default '{}'
);
create index audit_log_partner_idx on audit_log (partner_id, audit_seq);
create index audit_log_created_idx on audit_log (created_at);
