-- A refund under way used to be invisible on the Order: it read `completed` for as long as the
-- refund waited (on an unknown carrier answer, or on a top-up of the eSIM still pending at the
-- carrier), though the carrier may already have cancelled the profile. `refund_requested_at` is set
-- when a refund's intent is written, cleared when the carrier refuses it, and kept once refunded
-- (src/refunds/). On the order row, written under the order's row lock in the transactions that
-- write the intent, so every rendering of the Order reads it from the row alone (render-order.ts).
-- A nullable column without a default rewrites nothing.
alter table orders add column refund_requested_at timestamptz;
