-- Issue 14: background work as rows claimed with FOR UPDATE SKIP LOCKED, not one job per order.
--
-- 1. A pending order is its own outbox. next_resolve_at is when the resolver sweep may next look
--    at it (set at insert to RESOLVE_AFTER_MS on; pushed forward with capped backoff each time a
--    sweep claims it), resolve_attempts how many times it did. The sweep reads pending orders
--    through orders_pending_idx: the pending set is the orders in flight, a few hundred at most.
alter table orders
  add column next_resolve_at timestamptz not null default now(),
  add column resolve_attempts integer not null default 0 check (resolve_attempts >= 0);

-- 2. The confirmation email of a completed new-eSIM order: one row, inserted by the statement that
--    completes the order, deleted when the delivery is recorded (email_deliveries). A sweep claims
--    due rows by pushing due_at past the time a send may take (the claim is the lease), so a dead
--    sender's row comes due again by itself. attempts counts claims; past the limit the row stays,
--    with last_error, for an operator to see (as a failed job did).
create table email_outbox (
  order_id text primary key references orders (order_id),
  due_at timestamptz not null default now(),
  attempts integer not null default 0 check (attempts >= 0),
  lease_token text,
  last_error text check (length(last_error) <= 500)
);
create index email_outbox_due_idx on email_outbox (due_at);

-- 3. Work the graphile-worker jobs of the previous release still held: their emails become outbox
--    rows, and their resolver jobs are covered by next_resolve_at (every pending order is due now).
do $$
begin
  if to_regclass('graphile_worker._private_jobs') is not null then
    insert into email_outbox (order_id)
    select distinct j.payload ->> 'order_id'
    from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id
    join orders o on o.order_id = j.payload ->> 'order_id'
    where t.identifier = 'send_confirmation_email'
      and not exists (select 1 from email_deliveries d where d.order_id = o.order_id)
    on conflict (order_id) do nothing;
    delete from graphile_worker._private_jobs j
    using graphile_worker._private_tasks t
    where t.id = j.task_id and t.identifier in ('send_confirmation_email', 'resolve_pending_order')
      and j.locked_at is null;
  end if;
end
$$;

-- 4. The API processes alive now, one row each, refreshed by a heartbeat every few seconds
--    (server/live-processes.ts). A key's rate limit is split between them: each process allows its
--    share, so N processes together allow the configured rate, with no row touched per request.
create table api_processes (
  process_id text primary key check (length(process_id) <= 100),
  started_at timestamptz not null default now(),
  seen_at timestamptz not null default now()
);
