-- Money after the sale (contract: "Wallet additions"): statements and low-balance alerts.
--
-- 1. A statement lists a wallet's settled (posted) transfers in one total order, and each row's
--    balance_after is the running sum of that order, derived from the transfers every time (no
--    second running total that could drift). posted_seq is that order: taken from a global
--    sequence (nextval locks no row) at the moment a transfer is posted, always while the posting
--    transaction holds the wallet's row lock (src/ledger/transfers.ts). So, per wallet, posted_seq
--    order is commit order, every snapshot sees a prefix of it, and a row's balance_after never
--    changes once it is visible: pages and CSV exports stay consistent while new transfers post.
create sequence ledger_posted_seq;
alter table ledger_transfers add column posted_seq bigint;
update ledger_transfers t set posted_seq = s.n
from (
  select transfer_id, row_number() over (order by resolved_at, created_at, transfer_id) as n
  from ledger_transfers where state = 'posted'
) s
where s.transfer_id = t.transfer_id;
select setval('ledger_posted_seq', coalesce((select max(posted_seq) from ledger_transfers), 0) + 1, false);
alter table ledger_transfers
  add constraint transfer_posted_iff_seq check ((state = 'posted') = (posted_seq is not null));
create unique index ledger_transfers_posted_seq_idx on ledger_transfers (posted_seq);
create index ledger_transfers_debit_posted_idx on ledger_transfers (debit_account_id, posted_seq)
  where posted_seq is not null;
create index ledger_transfers_credit_posted_idx on ledger_transfers (credit_account_id, posted_seq)
  where posted_seq is not null;

-- 2. The low-balance alert: null means off. It lives on the wallet row that every hold already
--    updates, so the hold's own statement returns it and detecting a crossing costs no query.
alter table ledger_accounts
  add column low_balance_threshold_minor bigint check (low_balance_threshold_minor >= 0),
  add constraint threshold_only_on_wallets check (kind = 'partner_wallet' or low_balance_threshold_minor is null);

-- 3. Prices per partner (contract: "Prices per partner"): a discount off the list price and
--    per-package overrides. No row: list prices. A change bumps catalog_version (and notifies
--    catalog_changed) in its transaction, so every process's discovery cache moves on at once.
create table partner_pricing (
  partner_id text primary key references partners (partner_id),
  discount_percent integer not null check (discount_percent between 0 and 90),
  updated_at timestamptz not null default now()
);
create table partner_price_overrides (
  partner_id text not null references partner_pricing (partner_id) on delete cascade,
  package_id text not null references packages (package_id),
  amount_minor bigint not null check (amount_minor > 0),
  primary key (partner_id, package_id)
);
