-- Review of issue 32: a partner's resends to an address other than the order's are capped per
-- rolling 24 hours (RESENDS_TO_OTHER_ADDRESSES_PER_PARTNER_PER_DAY), so a partner with many completed
-- orders cannot use the resend route as a relay for mail to arbitrary addresses from the operator's
-- domain. The count runs under a per-partner lock on every such resend: the partial index holds only
-- those resends, so it reads at most the cap's rows of the window, whatever the partner's volume.
--
-- A new column with a constant default (no table rewrite) and one index: a process still on the
-- previous release inserts `false` (not counted) until it is replaced, so stop it first to keep the
-- cap exact across the deploy.
alter table email_resends add column to_other_address boolean not null default false;
-- The resends already made: the address compared as the route compares it (case aside).
update email_resends r set to_other_address = lower(r.recipient) <> lower(o.email)
from orders o where o.order_id = r.order_id;
create index email_resends_other_address_idx on email_resends (partner_id, created_at)
  where to_other_address;
