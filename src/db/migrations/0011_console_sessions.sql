-- The web console's sessions (issue 17). A partner signs in with an API key, the operator with
-- ADMIN_TOKEN; either gets a random session id in an HttpOnly cookie. Only the id's SHA-256 is
-- stored, so a leaked table holds no usable session. A session ends at expires_at (absolute, set at
-- sign-in) or after the idle time since last_seen_at, whichever comes first; sign-out deletes it.
-- A partner session names the key it signed in with: revoking that key ends the session too. An
-- operator session keeps a hash of the ADMIN_TOKEN it signed in with: rotating the token ends it.
create table console_sessions (
  session_hash bytea primary key,
  kind text not null check (kind in ('partner', 'operator')),
  partner_id text references partners (partner_id),
  key_id text references api_keys (key_id),
  operator_token_hash bytea,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null,
  check ((kind = 'partner') = (partner_id is not null and key_id is not null)),
  check ((kind = 'operator') = (operator_token_hash is not null))
);
create index console_sessions_expires_idx on console_sessions (expires_at);
