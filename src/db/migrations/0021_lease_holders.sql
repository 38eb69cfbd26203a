-- A lease names the process holding it (issue 30): a process SIGKILLed mid-order used to leave its
-- orders (and refunds) untouchable until the lease ran out, six carrier timeouts plus a second, and a
-- partner's retry got 409 for up to a minute. Now the holder's heartbeat (api_processes, beaten every
-- 2 s by every process that may hold a lease, src/server/live-processes.ts) says whether it is still
-- there, and a claim may take over a lease whose holder stopped beating (src/shared/liveness.ts).
-- Null: a holder without a heartbeat (the CLI), whose lease only its expiry ends.
--
-- The holder's process id (live-processes.ts: host, pid, a random suffix) is at most 100 characters:
-- a domain, as 0015 made the single-column rules of the tables a purchase writes (a table CHECK on
-- `orders` is compiled again at every write of the table). Created without its rule, so adding the
-- columns reads no table (a table CHECK added with a column, or a domain with a rule, makes ALTER
-- TABLE read or rewrite the whole table under its ACCESS EXCLUSIVE lock, every purchase waiting);
-- the rule is then added NOT VALID: every value written from now on is checked, and the rows already
-- there, null in the new columns, are not read for it.
create domain process_id_text as text;
alter table orders add column lease_holder process_id_text;
alter table order_refunds add column lease_holder process_id_text;
alter domain process_id_text add constraint process_id_text_length check (length(value) <= 100) not valid;

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
