-- 1. The product terms a cart was priced at travel with the cart and the order. A catalog import
--    may change a package in place; what the carrier is asked to provision must stay what the
--    partner reserved and paid for, however late the order is driven (a retry, the resolver).
alter table carts
  add column external_package_id text,
  add column data_mb integer check (data_mb > 0),
  add column validity_days integer check (validity_days between 1 and 3650);
update carts c
set external_package_id = p.external_package_id, data_mb = p.data_mb, validity_days = p.validity_days
from packages p where p.package_id = c.package_id;
alter table carts
  alter column external_package_id set not null,
  alter column validity_days set not null;

alter table orders
  add column data_mb integer check (data_mb > 0),
  add column validity_days integer check (validity_days between 1 and 3650);
update orders o set data_mb = p.data_mb, validity_days = p.validity_days
from packages p where p.package_id = o.package_id;
alter table orders alter column validity_days set not null;

-- 2. A lease is held by whoever took it: only its holder may give it up early, so a request whose
--    carrier call outlived its lease cannot release the lease a retry has taken since.
alter table orders add column lease_token text;
