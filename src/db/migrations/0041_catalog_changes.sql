-- The catalog change feed (issue 34, contract "Catalog additions"): GET /v1/catalog/changes and the
-- package.* webhook events. Numbered 0041: the numbers between are taken by the other branches of
-- issue 34.
--
-- 1. The change log. A row is one change to what partners see: a package added, updated or
--    removed. partner_id null: a catalog-wide change (an import, a supplier sync, the seed), one
--    row for every partner of this deployment, whatever their number; partner_id set: a change of
--    that partner's prices only (its price list). A partner's feed is the catalog-wide rows and its
--    own, merged by seq; the package itself is not stored but rendered when read, as the partner
--    sees it then (src/catalog/list-catalog-changes.ts says why).
--    Rows are written in the transaction that changes the catalog, after it locks the
--    catalog_version row (every catalog writer bumps it), so seq order is commit order: a reader
--    polling `seq > cursor` never skips a row that commits later with a smaller seq.
--    No foreign key to partners or packages: the log is append-only and never joins for integrity;
--    the writers name existing rows (checked in their transaction).
create table catalog_changes (
  seq bigint generated always as identity primary key,
  change_id text not null unique check (length(change_id) between 1 and 100),
  partner_id text check (length(partner_id) between 1 and 100),
  kind text not null check (kind in ('added', 'updated', 'removed')),
  package_id text not null check (length(package_id) between 1 and 64),
  created_at timestamptz not null default now()
);
-- A partner's feed is two ranges: the catalog-wide rows after the cursor, and its own.
create index catalog_changes_catalog_wide_idx on catalog_changes (seq) where partner_id is null;
create index catalog_changes_partner_idx on catalog_changes (partner_id, seq) where partner_id is not null;

-- 2. The packages offered before the feed existed: one `added` each, so reading the feed from its
--    start gives the whole catalog of today.
insert into catalog_changes (change_id, partner_id, kind, package_id)
select 'chg_' || replace(gen_random_uuid()::text, '-', ''), null, 'added', package_id
from packages where active
order by package_id;

-- 3. How far catalog changes have become package.* events (src/webhooks/fan-out-catalog-changes.ts):
--    pairs (change, partner) in (seq, partner_id) order, up to and including (last_seq,
--    last_partner_id); last_partner_id null: every partner of last_seq is done. One row; a process
--    fanning out locks it (SKIP LOCKED), so two never record the same events. It starts past the
--    rows of step 2: no endpoint existed to hear of them.
create table catalog_change_fanout (
  singleton boolean primary key default true check (singleton),
  last_seq bigint not null check (last_seq >= 0),
  last_partner_id text check (length(last_partner_id) between 1 and 100)
);
insert into catalog_change_fanout (last_seq, last_partner_id)
select coalesce(max(seq), 0), null from catalog_changes;
