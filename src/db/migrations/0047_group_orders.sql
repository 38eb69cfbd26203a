-- Issue 34, item 1: group orders. A cart holds `quantity` (1-50) eSIMs of one package; its submit is
-- one order, one hold of quantity x price, and one provisioning per eSIM, each final on its own.
--
-- 1. The quantity, on the cart and on its order. A constant default: no table rewrite, and every
--    order made before is an order of one. The orders' rule is added NOT VALID, not as a domain
--    (as 0038 did for the supplier): no statement here reads the orders table for it.
alter table carts add column quantity integer not null default 1 check (quantity between 1 and 50);
alter table orders add column quantity integer not null default 1;
alter table orders add constraint orders_quantity_check check (quantity between 1 and 50) not valid;

-- A line's position in its group order (0-49): the key of its line and of its traveller's email.
create domain line_position as integer
  constraint line_position_check check (value between 0 and 49);

-- 2. The lines of a group order (quantity > 1; an order of one has none and keeps its one-statement
--    completion). Each is one eSIM with its own carrier reference (`{order_id}-{position}`): the
--    carrier is idempotent by it, so a line asked again, by a retry or the resolver after a crash,
--    gets the same profile, never a second one. A line leaves `pending` once (guarded, like an
--    order); the order completes, charging the completed lines only, when no line is pending.
--    `email`, `first_name`, `last_name`: the line's traveller (the submit's `travellers[i]`), who
--    gets its own confirmation email; null when the submit named none (then one email with every
--    eSIM goes to the order's address).
create table order_lines (
  order_id text not null references orders (order_id),
  position line_position not null,
  reference text not null unique check (length(reference) between 1 and 128),
  status text not null default 'pending' check (status in ('pending', 'completed', 'failed')),
  email text check (length(email) between 3 and 254),
  first_name text check (length(first_name) between 1 and 100),
  last_name text check (length(last_name) between 1 and 100),
  iccid text,
  smdp_address text,
  activation_code text,
  carrier_refusal text check (length(carrier_refusal) <= 500),
  resolved_at timestamptz,
  primary key (order_id, position),
  constraint order_line_traveller_whole check (
    (email is null) = (first_name is null) and (email is null) = (last_name is null)),
  constraint order_line_completed_has_profile check (
    (status = 'completed') = (iccid is not null and smdp_address is not null and activation_code is not null)),
  constraint order_line_resolved_iff_final check ((status = 'pending') = (resolved_at is null))
);

-- 3. Several eSIMs per order: an order's eSIMs are found through this index instead of the unique
--    constraint (search by order id, test/orders.search-plans.test.ts). Each eSIM keeps its one
--    bundle per order: the bundle's key becomes (order, eSIM), and so does the key of a bundle's
--    traveller notices (migration 0043), one of each kind per eSIM of a group.
alter table esims drop constraint esims_order_id_key;
create index esims_order_id_idx on esims (order_id);
alter table traveller_notices drop constraint traveller_notices_bundle_order_id_fkey;
alter table traveller_notices drop constraint traveller_notices_bundle_order_id_kind_key;
alter table esim_bundles drop constraint esim_bundles_pkey, add primary key (order_id, iccid);
alter table traveller_notices add foreign key (bundle_order_id, iccid) references esim_bundles (order_id, iccid);
alter table traveller_notices add unique (bundle_order_id, iccid, kind);

-- 4. One confirmation email per traveller: the outbox and the deliveries are keyed by (order,
--    position), the position of the line whose traveller it goes to. An order of one, and a group
--    without travellers (one email with every eSIM), has the one row of position 0.
--    The outbox is small (a row leaves it when its email is delivered): its column is of the domain.
--    The deliveries are one row per order ever: a plain column, its rule NOT VALID (no rewrite, no
--    scan); their key is rebuilt, which reads the table once (README, "Upgrading": 0047).
alter table email_outbox add column position line_position not null default 0;
alter table email_outbox drop constraint email_outbox_pkey, add primary key (order_id, position);
alter table email_deliveries add column position integer not null default 0;
alter table email_deliveries add constraint email_deliveries_position_check
  check (position between 0 and 49) not valid;
alter table email_deliveries drop constraint email_deliveries_pkey, add primary key (order_id, position);

-- 5. A group's hold covers every line; its posting charges the completed ones: the transfer's
--    amount becomes what was posted and `held_minor` keeps what was held (null when all of it was
--    posted or voided). The wallet's pending debits lose the held amount, its posted debits gain
--    the posted one, in the same statement (ledger.sql.ts resolvePendingPurchase).
alter table ledger_transfers add column held_minor bigint;
-- NOT VALID: every transfer made before reads null, which the rule allows; no scan of the ledger.
alter table ledger_transfers add constraint ledger_transfer_partly_posted check (
  held_minor is null or (kind = 'purchase' and state = 'posted' and held_minor > amount_minor)) not valid;
