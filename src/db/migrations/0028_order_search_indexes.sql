-- The support search (issue 32: GET /v1/profile/orders and /v1/esims `q`, the operator's
-- /admin/partners/{partner_id}/orders), each kind of `q` bounded by one index at a million orders
-- (test/orders.search.test.ts shows the plans; bench/scenarios/search.ts measures them).
--
-- Every index here is one more entry written per order on the purchase path, and again when a
-- completion moves the row (status is in orders_pending_idx's predicate, so completions are not HOT
-- updates anyway). So: three new indexes, one replaced, no index for what an existing one serves.
-- - An order id: the primary key. An eSIM's ICCID or order id on /v1/esims: the esims keys.
-- - Dates and status: conditions on rows read through the partner's newest-first index
--   orders_partner_page_idx, or through the search's index; no index of their own (a date index
--   would cost every purchase to serve a filter that a search narrows anyway).
-- Plain CREATE INDEX: migrate.ts runs each file in one transaction, where CONCURRENTLY is refused.
-- Case folds by ICU's root locale ("und-x-icu"), whatever the database's LC_CTYPE (with the C locale,
-- lower() folds ASCII only: MÜLLER would not find Müller); src/db/prefix-match.ts `folded` is the
-- same expression, so the planner matches it. PostgreSQL built with ICU, as every package is.

-- 1. A traveller's email, whole and case-insensitive (folded on both sides), newest first: a
--    traveller has a few orders, and seq makes the page's order and the cursor an index range.
create index orders_partner_email_idx on orders (partner_id, lower(email collate "und-x-icu"), seq desc);

-- 2. The start of a last name, case-insensitive. text_pattern_ops compares bytes, so a range
--    [prefix, next prefix) is an index range under any collation (src/db/prefix-match.ts).
create index orders_partner_last_name_idx on orders (partner_id, lower(last_name collate "und-x-icu") text_pattern_ops);

-- 3. The start of a client reference, case-insensitive, replacing the exact-match index of 0001:
--    text_pattern_ops also has equality, so the API's exact `client_reference` filter runs as
--    folded(client_reference) = folded($1) and client_reference = $1 on this one, its pages still in
--    seq order. One index for both filters: the purchase path pays for no more than before.
create index orders_partner_reference_lower_idx
  on orders (partner_id, lower(client_reference collate "und-x-icu") text_pattern_ops, seq desc)
  where client_reference is not null;
drop index orders_partner_reference_idx;

-- 4. An ICCID: an eSIM's orders (the one that bought it, its top-ups) carry it. A handful of rows
--    per ICCID and one partner's ICCIDs only, so the ICCID alone leads; null until an eSIM order
--    completes, so pending and failed new-eSIM orders are left out of the index.
create index orders_iccid_idx on orders (iccid) where iccid is not null;
