-- Issue 33: purchases, top-ups, lookups, usage and refunds go to the package's supplier. A cart
-- keeps the supplier with the other terms of its package (migration 0002), and an order copies it
-- from the cart or the top-up's package at creation: every call about an order goes to the
-- supplier its own row names (src/carrier/route-by-supplier.ts), never to the catalog's word of
-- the moment, and a retry can never switch supplier.
--
-- Big tables: a constant default is metadata only (PostgreSQL 11+: no rewrite), and the rule is
-- added NOT VALID, so no statement here reads the orders table under its ACCESS EXCLUSIVE lock.
-- Every row that exists now reads the default 'carrier', which the rule allows, so validating
-- would only re-read the table; rows written from now on are checked as usual. Not a domain:
-- adding a column of a domain with constraints rewrites the table (PostgreSQL 14 to 17).
alter table orders add column supplier text not null default 'carrier';
alter table orders add constraint orders_supplier_check
  check (supplier in ('carrier', 'airalo', 'esimgo')) not valid;

-- Orders made before this release were all sent to the carrier, whatever their package: 'carrier'
-- is what they were, so their later lookups and refunds go where they were made.

alter table carts add column supplier text not null default 'carrier';
alter table carts add constraint carts_supplier_check
  check (supplier in ('carrier', 'airalo', 'esimgo')) not valid;

-- A cart made before this release names a package whose supplier never changes (a file import
-- refuses to move a package, a sync only touches its own supplier's): the package says what the
-- cart reserved. Carts are few (purged after expiry), so this update is short.
update carts c set supplier = p.supplier
from packages p
where p.package_id = c.package_id and p.supplier <> 'carrier';

-- The order's supplier is fixed for its life: it decides where every call about the order goes,
-- and calls of one order at two suppliers could make two profiles.
create function orders_supplier_is_fixed() returns trigger language plpgsql as $$
begin
  raise exception 'order % keeps its supplier % (asked to change it to %)',
    old.order_id, old.supplier, new.supplier;
end
$$;

create trigger orders_supplier_is_fixed
  before update of supplier on orders
  for each row when (old.supplier is distinct from new.supplier)
  execute function orders_supplier_is_fixed();
