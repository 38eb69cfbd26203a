-- purge_expired_carts deletes a lapsed cart a day after its expiry, but the contract says a
-- submit of an expired cart answers 410 cart_expired: after the purge its key would answer 404
-- cart_not_found, as if it had never been issued. The purge leaves this tombstone instead, a few
-- dozen bytes per cart, kept 90 days (then the key is unknown, like any key that old).
create table expired_carts (
  cart_key text primary key,
  partner_id text not null references partners (partner_id),
  expired_at timestamptz not null,
  purged_at timestamptz not null default now()
);
create index expired_carts_purged_idx on expired_carts (purged_at);
