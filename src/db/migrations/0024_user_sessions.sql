-- Console sessions belong to a person now (issue 31). Signing in with an API key (partners) or
-- ADMIN_TOKEN (operator) is retired: those sessions end here, and their holders sign in as people.
drop table console_sessions;
create table console_sessions (
  session_hash bytea primary key,
  kind text not null check (kind in ('partner', 'operator')),
  user_id text not null references users (user_id),
  partner_id text references partners (partner_id),
  -- 'signed_in'; or the password accepted and a second factor still owed ('second_factor'); or a
  -- team that requires one and a person who has none yet ('enrol_second_factor'). Such a session
  -- opens only the pages that finish signing in.
  stage text not null default 'signed_in'
    check (stage in ('signed_in', 'second_factor', 'enrol_second_factor')),
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null,
  check ((kind = 'partner') = (partner_id is not null))
);
create index console_sessions_expires_idx on console_sessions (expires_at);
create index console_sessions_user_idx on console_sessions (user_id);
