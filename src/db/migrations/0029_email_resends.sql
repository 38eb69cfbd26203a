-- Issue 32: resending an order's confirmation email, the email log and the order's timeline.
--
-- 1. A resend is its own row, the outbox and the log in one: inserted by the request's transaction
--    (so a 202 means it is queued in the database), claimed by the email sweep with SKIP LOCKED under
--    a lease as email_outbox rows are (due_at pushed past the send), and marked sent (sent_at,
--    message_id) by one statement after the relay accepts it. A refused or failed attempt keeps its
--    last_error and comes due again with backoff until `attempts` reaches the limit
--    (CONFIRMATION_EMAIL_MAX_ATTEMPTS, 25). The row stays: it is the log of what was resent, to
--    whom and when. The first confirmation keeps its own path (email_outbox, email_deliveries): the
--    statement that completes an order is unchanged.
create table email_resends (
  email_id text primary key check (email_id ~ '^eml_[A-Za-z0-9_-]{16,64}$'),
  order_id text not null references orders (order_id),
  partner_id text not null references partners (partner_id),
  recipient text not null check (length(recipient) between 3 and 254),
  -- The partner's Idempotency-Key, if any: a retried request answers the same email_id.
  idempotency_key text check (length(idempotency_key) between 1 and 255),
  created_at timestamptz not null default now(),
  due_at timestamptz not null default now(),
  attempts attempt_count not null default 0,
  lease_token text,
  last_error error_text,
  message_id text,
  sent_at timestamptz,
  constraint sent_has_message_id check ((sent_at is null) = (message_id is null))
);
-- The log of one order, and the count of its resends in the last 24 hours (the limit).
create index email_resends_order_idx on email_resends (order_id, created_at);
-- Only the resends not sent yet: the sweep's claim reads a handful of rows.
create index email_resends_due_idx on email_resends (due_at) where sent_at is null;
create unique index email_resends_key_idx on email_resends (partner_id, idempotency_key)
  where idempotency_key is not null;

-- 2. The timeline of one order (GET /v1/orders/{orderID}/events): its order.* events (data is the
--    Order: `orderID`) and its eSIM's esim.* events (data is the Esim: `iccid`). Partial, so each
--    index holds only the events of its family; events are purged after 30 days
--    (purge_old_events), so both stay as small as the events table.
create index events_order_timeline_idx on events ((data ->> 'orderID'), seq) where type like 'order.%';
create index events_esim_timeline_idx on events ((data ->> 'iccid'), seq) where type like 'esim.%';
