-- The second factor's short-lived state (issue 31), kept server-side and tied to the console session
-- that asked for it (a session's end takes it along):
-- - WebAuthn challenges: one per session and ceremony (registering a passkey, signing in with one),
--   valid 5 minutes and used once (deleted by the statement that reads it for verification).
-- - A TOTP seed being enrolled: made when the person asks to set up an authenticator app, shown
--   (QR code and text) until they confirm it with a first code; only then copied onto users.
create table webauthn_challenges (
  session_hash bytea not null references console_sessions (session_hash) on delete cascade,
  ceremony text not null check (ceremony in ('registration', 'authentication')),
  challenge text not null check (length(challenge) <= 200),
  expires_at timestamptz not null,
  primary key (session_hash, ceremony)
);

create table totp_enrolments (
  session_hash bytea primary key references console_sessions (session_hash) on delete cascade,
  user_id text not null references users (user_id),
  secret_sealed bytea not null,
  expires_at timestamptz not null
);
