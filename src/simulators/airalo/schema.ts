// The fake's own schema, `airalo_sim`, beside (never inside) the API's tables: it plays another
// company whose records survive a crash of the API or of the fake, so an adapter can recover a
// lost answer by asking "what did you do?" (GET /v2/orders?filter[description]=...).
// Created at start-up (the fake is a service of its own), idempotently, under a transaction
// advisory lock so two processes starting against one empty database take turns; the lock is the
// transaction's, not the session's, so it also works through PgBouncer in transaction mode.
import type pg from "pg";
import { inTransaction } from "../../db/pool.ts";

const LOCK_SQL = "select pg_advisory_xact_lock(hashtext('airalo_sim:schema'))";

const SCHEMA_SQL = `
create schema if not exists airalo_sim;

-- The serial part of the ICCIDs (8 digits between the issuer prefix and the Luhn digit).
-- No cycle: running out is an error, never a reused ICCID.
create sequence if not exists airalo_sim.iccid_serial as bigint minvalue 1 maxvalue 99999999 no cycle;

-- The partner company's Airalo credit, in USD cents (error 11 when an order costs more).
create table if not exists airalo_sim.account (
  id integer primary key check (id = 1),
  credit_cents bigint not null
);

-- Orders of eSIMs and top-ups. Ids start high so they look like Airalo's and never like ours.
create table if not exists airalo_sim.orders (
  id bigint generated always as identity (start with 583700) primary key,
  type text not null check (type in ('sim', 'topup')),
  package_id text not null,
  quantity integer not null check (quantity between 1 and 50),
  description text,
  price_cents bigint not null,
  net_price_cents bigint not null,
  status text not null default 'completed'
    check (status in ('completed', 'failed', 'refunded', 'partially_refunded')),
  -- The eSIM a top-up was for (null for SIM orders).
  topup_iccid text,
  -- Set for orders placed through POST /v2/orders-async.
  request_id text unique,
  brand_settings_name text,
  created_at timestamptz not null default now()
);
create index if not exists orders_created on airalo_sim.orders (created_at, id);

create table if not exists airalo_sim.sims (
  id bigint generated always as identity (start with 709000) primary key,
  order_id bigint not null references airalo_sim.orders (id),
  iccid text not null unique,
  lpa text not null,
  matching_id text not null unique,
  package_id text not null,
  -- What the device did (set through /control): MB used, first use, recycling, refund.
  used_mb bigint not null default 0 check (used_mb >= 0),
  activated_at timestamptz,
  recycled_at timestamptz,
  refunded_at timestamptz,
  created_at timestamptz not null default now()
);
create index if not exists sims_order on airalo_sim.sims (order_id);

-- Refund requests (POST /v2/refund): pending until a test reviews them through /control.
create table if not exists airalo_sim.refunds (
  id bigint generated always as identity (start with 12345) primary key,
  iccids text[] not null,
  reason text not null,
  notes text,
  email text,
  status text not null default 'pending' check (status in ('pending', 'approved', 'rejected')),
  credited_cents bigint not null default 0,
  reviewed_at timestamptz,
  created_at timestamptz not null default now()
);

-- Webhook opt-ins (POST /v2/notifications/opt-in): one URL per type.
create table if not exists airalo_sim.notifications (
  type text primary key check (type in ('async_orders', 'webhook_low_data', 'webhook_credit_limit')),
  webhook_url text not null,
  levels integer[],
  created_at timestamptz not null default now()
);
`;

export async function ensureAiraloSchema(pool: pg.Pool, initial_credit_cents: number): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(LOCK_SQL);
    await client.query(SCHEMA_SQL);
    await client.query(
      "insert into airalo_sim.account (id, credit_cents) values (1, $1::bigint) on conflict (id) do nothing",
      [initial_credit_cents],
    );
  });
}
