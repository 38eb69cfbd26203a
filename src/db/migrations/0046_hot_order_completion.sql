-- A purchase's completing update made HOT (heap-only), undoing most of what the search indexes of
-- 0028 added to every purchase (session 17's note: PostgreSQL CPU per purchase up ~35%).
--
-- PostgreSQL updates a row in place on its page, writing no index entry, only when no column any
-- index reads (key, expression or predicate) changes value and the page has room. The completion
-- (pending -> completed) changed two such columns: `status`, in orders_pending_idx's predicate, and
-- `iccid`, which orders_iccid_idx keys. So each completion wrote a new entry into every one of the
-- orders' indexes (nine since 0028). Now:
--
-- Nothing may insert or end an order while the list is built, the top-ups named and the indexes
-- dropped: an order committed in between would be missing from the list, never resolved. So the
-- table is locked first, for the whole migration (the README's maintenance window: the previous
-- release must be stopped, as it would not keep the list).
lock table orders in access exclusive mode;

-- 1. Pending orders are listed in a table of their own, written by the statements that insert an
--    order and that end its pending state (orders.sql.ts: insert, complete, fail), and read by the
--    resolver's claim, the metrics and the console. The pending set is the orders in flight: a few
--    hundred rows, each inserted once and deleted once. No foreign key: each check would cost the
--    purchase a lookup, and every reader joins orders and checks its status anyway.
create table pending_orders (
  order_id text primary key,
  created_at timestamptz not null
);
insert into pending_orders (order_id, created_at)
select order_id, created_at from orders where status = 'pending';
drop index orders_pending_idx;

-- 2. An ICCID's orders are found without an index on `iccid`, which a completion sets: the order
--    that bought the eSIM through esims (its primary key names it), its top-ups through
--    `topup_iccid`, set when the top-up is inserted and never changed.
alter table orders add column topup_iccid text;
update orders set topup_iccid = iccid where type = 'topup';
create index orders_topup_iccid_idx on orders (topup_iccid) where topup_iccid is not null;
drop index orders_iccid_idx;

-- 3. Room on each page for the completion's new row version (and the lease updates before it):
--    inserts fill pages only to 90%. Applies to the pages written from now on.
alter table orders set (fillfactor = 90);
