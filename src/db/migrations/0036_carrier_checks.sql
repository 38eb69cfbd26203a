-- Orders failed without the carrier's word (issue 32 review): the resolver's last look that could
-- not ask the carrier, an operator's `failed` settle while the carrier was unreachable or had no
-- record yet (a call of a dead process may still land), or a cancel the carrier did not confirm.
-- The hold is voided at once; if the carrier did make something, the eSIM would be free and nothing
-- would say so. The follow-up (orders/check-failed-at-carrier.ts) looks each one up again once
-- carrier_check_after has passed and cancels what the carrier made.
--
-- carrier_check_after: when the follow-up looks next; null once nothing is owed.
-- carrier_check: the last word: due (not looked at yet), nothing_made, cancelled, refused (the
--   carrier made it and will not cancel it: the operator's to reconcile), unavailable (never
--   answered within the follow-up's attempts: the operator's to reconcile).
-- As every single-column rule on the tables a purchase writes (migration 0015), a domain.
create domain carrier_check_word as text
  constraint carrier_check_word_check
    check (value in ('due', 'nothing_made', 'cancelled', 'refused', 'unavailable'));

alter table orders
  add column carrier_check_after timestamptz,
  add column carrier_check carrier_check_word,
  add column carrier_check_attempts attempt_count not null default 0;

-- The follow-up's claim reads the first index; the metric esim_orders_carrier_unreconciled counts the
-- second (both stay as small as the orders owed or left for the operator).
create index orders_carrier_check_due_idx on orders (carrier_check_after) where carrier_check_after is not null;
create index orders_carrier_unreconciled_idx on orders (order_id)
  where carrier_check in ('due', 'refused', 'unavailable');
