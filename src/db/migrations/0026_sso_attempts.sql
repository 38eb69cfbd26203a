-- Single sign-on (issue 31): a sign-in with SSO under way. /console/sso/start keeps here what the
-- callback must check (the PKCE verifier, state and nonce) and sets a random attempt id in a
-- short-lived cookie; only the id's SHA-256 is kept. The callback takes the row (delete ...
-- returning): an attempt completes once, and within 10 minutes. The connection the attempt was
-- started for may change meanwhile: the callback reads the current one, by partner.
create table sso_attempts (
  attempt_hash bytea primary key,
  partner_id text not null references partners (partner_id),
  code_verifier text not null check (length(code_verifier) <= 200),
  state text not null check (length(state) <= 200),
  nonce text not null check (length(nonce) <= 200),
  -- The redirect URI sent with the authorization request: the token request must send the same.
  redirect_uri text not null check (length(redirect_uri) <= 2000),
  -- Where it was started from: an address may have only so many under way (people/sign-in-with-sso.ts).
  ip text not null check (length(ip) <= 64),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index sso_attempts_expires_idx on sso_attempts (expires_at);
create index sso_attempts_ip_idx on sso_attempts (ip, expires_at);
