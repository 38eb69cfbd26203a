-- The single-column CHECKs of the tables a purchase writes, as domains (issue 14). Same rules,
-- cheaper to enforce:
-- - PostgreSQL keeps a table's CHECKs as node text and parses and compiles all of them again at
--   every execution of every INSERT or UPDATE of the table, prepared or not (ExecRelCheck:
--   stringToNode, then ExecPrepareExpr). `orders` carried 13 (10 KB of node text) and a purchase
--   writes it twice; in a `perf` profile of a purchase run that was 12% of PostgreSQL's CPU.
-- - A domain's constraint is parsed once per backend and kept (typcache), and it is checked only
--   where a value is assigned to the column: an UPDATE that sets `status` checks `status`, not the
--   other twelve.
-- A NULL passes a domain's CHECK as it passed the column's; NOT NULL stays on the columns. The
-- checks that compare two columns (wallet_available_not_negative, resolved_iff_final, ...) stay
-- table CHECKs under their names. So does esims' ICCID format: it is the primary key esim_bundles
-- references, whose type change would rebuild that foreign key for 475 bytes of text.
-- Clients are sent a domain's base type (the row description carries it), so rows read the same.
-- But a statement a process prepared before this migration, returning one of these columns, fails
-- (0A000 "cached plan must not change result type"; this release's src/db/pool.ts then runs it
-- unnamed, earlier ones may not): stop the previous release's processes while this runs (CHANGELOG).
--
-- How, without rewriting the tables: each domain is created without its constraint, the columns
-- move to it (a domain with no constraint over the column's own type needs no rewrite; the indexes
-- on them are kept, but for the nine partial ones that read a changed column, which are rebuilt),
-- the old CHECKs are dropped, and only then the domain gets its constraint, which PostgreSQL
-- validates by reading every table that has a column of that domain. The type change drops the
-- columns' statistics: the tables that had some are analysed again at the end.

create domain minor_amount as bigint;        -- an amount of money moved, in minor units: > 0
create domain minor_balance as bigint;       -- a running total of money, in minor units: >= 0
create domain currency_code as text;         -- ISO 4217, upper case
create domain account_kind as text;
create domain transfer_kind as text;
create domain transfer_state as text;
create domain reference_text as text;        -- a transfer's reference, a partner's client_reference
create domain order_type as text;
create domain order_status as text;
create domain esim_status as text;
create domain bundle_status as text;
create domain delivery_status as text;
create domain data_mb as integer;            -- a package's data, when not unlimited (null)
create domain validity_days as integer;
create domain attempt_count as integer;
create domain error_text as text;            -- a carrier's or a receiver's words, kept for the operator
create domain bundle_position as bigint;
create domain data_used_mb as bigint;
create domain bundle_name as text;
create domain event_type as text;
create domain dedup_key as text;
create domain http_status as integer;

alter table ledger_accounts
  alter column kind type account_kind,
  alter column currency type currency_code,
  alter column posted_credits_minor type minor_balance,
  alter column posted_debits_minor type minor_balance,
  alter column pending_debits_minor type minor_balance,
  alter column low_balance_threshold_minor type minor_balance,
  drop constraint ledger_accounts_kind_check,
  drop constraint ledger_accounts_currency_check,
  drop constraint ledger_accounts_posted_credits_minor_check,
  drop constraint ledger_accounts_posted_debits_minor_check,
  drop constraint ledger_accounts_pending_debits_minor_check,
  drop constraint ledger_accounts_low_balance_threshold_minor_check;

alter table ledger_transfers
  alter column amount_minor type minor_amount,
  alter column kind type transfer_kind,
  alter column state type transfer_state,
  alter column reference type reference_text,
  drop constraint ledger_transfers_amount_minor_check,
  drop constraint ledger_transfers_kind_check,
  drop constraint ledger_transfers_state_check,
  drop constraint ledger_transfers_reference_check;

alter table orders
  alter column type type order_type,
  alter column status type order_status,
  alter column total_minor type minor_amount,
  alter column client_reference type reference_text,
  alter column data_mb type data_mb,
  alter column validity_days type validity_days,
  alter column carrier_refusal type error_text,
  alter column resolve_attempts type attempt_count,
  drop constraint orders_type_check,
  drop constraint orders_status_check,
  drop constraint orders_total_minor_check,
  drop constraint orders_client_reference_check,
  drop constraint orders_data_mb_check,
  drop constraint orders_validity_days_check,
  drop constraint orders_carrier_refusal_check,
  drop constraint orders_resolve_attempts_check;

alter table esims
  alter column status type esim_status,
  alter column sync_failures type attempt_count,
  alter column last_sync_error type error_text,
  drop constraint esims_status_check,
  drop constraint esims_sync_failures_check,
  drop constraint esims_last_sync_error_check;

alter table esim_bundles
  alter column position type bundle_position,
  alter column name type bundle_name,
  alter column data_mb type data_mb,
  alter column validity_days type validity_days,
  alter column data_used_mb type data_used_mb,
  alter column status type bundle_status,
  drop constraint esim_bundles_position_check,
  drop constraint esim_bundles_name_check,
  drop constraint esim_bundles_data_mb_check,
  drop constraint esim_bundles_validity_days_check,
  drop constraint esim_bundles_data_used_mb_check,
  drop constraint esim_bundles_status_check;

alter table events
  alter column type type event_type,
  alter column dedup_key type dedup_key,
  drop constraint events_type_check,
  drop constraint events_dedup_key_check;

alter table webhook_deliveries
  alter column status type delivery_status,
  alter column attempts type attempt_count,
  alter column last_response_status type http_status,
  alter column last_error type error_text,
  drop constraint webhook_deliveries_status_check,
  drop constraint webhook_deliveries_attempts_check,
  drop constraint webhook_deliveries_last_response_status_check,
  drop constraint webhook_deliveries_last_error_check;

alter table email_outbox
  alter column attempts type attempt_count,
  alter column last_error type error_text,
  drop constraint email_outbox_attempts_check,
  drop constraint email_outbox_last_error_check;

-- The rules, as they were (migrations 0001, 0002, 0003, 0005, 0006, 0007, 0008, 0009).
alter domain minor_amount add constraint minor_amount_positive check (value > 0);
alter domain minor_balance add constraint minor_balance_not_negative check (value >= 0);
alter domain currency_code add constraint currency_code_iso_4217 check (value ~ '^[A-Z]{3}$');
alter domain account_kind add constraint account_kind_known
  check (value in ('partner_wallet', 'operator_funding', 'operator_revenue'));
alter domain transfer_kind add constraint transfer_kind_known check (value in ('wallet_credit', 'purchase', 'refund'));
alter domain transfer_state add constraint transfer_state_known check (value in ('pending', 'posted', 'voided'));
alter domain reference_text add constraint reference_text_length check (length(value) between 1 and 128);
alter domain order_type add constraint order_type_known check (value in ('esim', 'topup'));
alter domain order_status add constraint order_status_known
  check (value in ('pending', 'completed', 'failed', 'refunded'));
alter domain esim_status add constraint esim_status_known
  check (value in ('released', 'installed', 'active', 'depleted', 'expired', 'deleted', 'cancelled'));
alter domain bundle_status add constraint bundle_status_known
  check (value in ('queued', 'active', 'depleted', 'expired', 'cancelled'));
alter domain delivery_status add constraint delivery_status_known check (value in ('pending', 'succeeded', 'failed'));
alter domain data_mb add constraint data_mb_positive check (value > 0);
alter domain validity_days add constraint validity_days_range check (value between 1 and 3650);
alter domain attempt_count add constraint attempt_count_not_negative check (value >= 0);
alter domain error_text add constraint error_text_length check (length(value) <= 500);
alter domain bundle_position add constraint bundle_position_not_negative check (value >= 0);
alter domain data_used_mb add constraint data_used_mb_not_negative check (value >= 0);
alter domain bundle_name add constraint bundle_name_length check (length(value) between 1 and 200);
alter domain event_type add constraint event_type_format check (value ~ '^[a-z_]+\.[a-z_]+$');
alter domain dedup_key add constraint dedup_key_length check (length(value) between 1 and 200);
alter domain http_status add constraint http_status_range check (value between 100 and 999);

-- Statistics again for the tables that had them (reltuples > 0: analysed, vacuumed or indexed
-- since they had rows, such as by the index rebuilds above). A new database's empty tables stay
-- never-analysed, which the planner reads as "size unknown" rather than "empty": plans made before
-- the first rows arrive stay the ones it made before.
do $$
declare
  t text;
begin
  foreach t in array array['ledger_accounts', 'ledger_transfers', 'orders', 'esims', 'esim_bundles', 'events',
                           'webhook_deliveries', 'email_outbox'] loop
    if (select reltuples from pg_class where oid = t::regclass) > 0 then
      execute format('analyze %I', t);
    end if;
  end loop;
end $$;
