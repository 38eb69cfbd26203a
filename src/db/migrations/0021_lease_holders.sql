-- A lease names the process holding it (issue 30): a process SIGKILLed mid-order used to leave its
-- orders (and refunds) untouchable until the lease ran out, six carrier timeouts plus a second, and a
-- partner's retry got 409 for up to a minute. Now the holder's heartbeat (api_processes, beaten every
-- 2 s by every process that may hold a lease, src/server/live-processes.ts) says whether it is still
-- there, and a claim may take over a lease whose holder stopped beating (src/shared/liveness.ts).
-- Null: a holder without a heartbeat (the CLI), whose lease only its expiry ends.
-- A domain, as every single-column rule of the tables a purchase writes is since 0015 (their
-- table CHECKs only compare columns).
create domain lease_holder_id as text check (length(value) between 1 and 100);
alter table orders add column lease_holder lease_holder_id;
alter table order_refunds add column lease_holder lease_holder_id;

-- A worker-only process (ROLE=worker) heartbeats too, since it holds leases, but serves no API
-- request: it must not take a share of the per-key rate limit. The previous release inserts
-- without this column: its processes are API processes.
alter table api_processes add column serves_api boolean not null default true;

-- Whether a lease's holder is gone: no heartbeat row, or none within `live_within_s`. PL/pgSQL and
-- VOLATILE on purpose: each of its queries takes a fresh snapshot (PostgreSQL docs, "Function
-- Volatility Categories"), so a claim that waited on the order's row lock and rechecks the row
-- its competitor just wrote reads that competitor's latest heartbeat, never the one in the claim
-- statement's older snapshot, and so never takes a lease from a live process because it looked
-- stale then. A SQL function could be inlined into the statement and lose that.
create function lease_holder_gone(holder text, live_within_s float8) returns boolean
language plpgsql volatile as $$
begin
  return holder is not null and not exists (
    select 1 from api_processes
    where process_id = holder and seen_at >= clock_timestamp() - make_interval(secs => live_within_s));
end
$$;
