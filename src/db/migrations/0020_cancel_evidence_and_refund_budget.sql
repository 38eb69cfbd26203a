-- Issue 30 (trust under faults): refunds of ES2+ profiles.
--
-- 1. CancelOrder's "8.2.1/3.5 invalid transition" means "already cancelled" or "downloaded": ES2+
--    v2 does not say which. When our own earlier CancelOrder's answer was lost and no download
--    notification has arrived, a repeated CancelOrder's 3.5 proves nothing: the refund is held
--    (never credited on that answer) from this moment until a download notification refuses it
--    or an operator settles it (`npm run cli -- refunds settle`). Null: no such ambiguity.
alter table es2plus_profile_orders add column cancel_ambiguous_at timestamptz;
create index es2plus_profile_orders_ambiguous on es2plus_profile_orders (cancel_ambiguous_at)
  where cancel_ambiguous_at is not null;

-- 2. Refunds per partner per hour are bounded (REFUNDS_PER_PARTNER_PER_HOUR): counted over the
--    partner's refund intents of the last hour.
create index order_refunds_partner_created on order_refunds (partner_id, created_at);
