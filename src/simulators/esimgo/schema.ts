// The fake's own schema, `esimgo_sim`, beside (never inside) the API's tables: it plays another
// company whose records survive a crash of the API or of the fake, so an adapter that lost an
// answer can ask it what it did (GET /orders, GET /esims). Created at start-up, idempotently,
// under a transaction-scoped advisory lock (two processes starting against one empty database
// take turns; transaction-scoped because the sandbox may connect through PgBouncer), as
// carrier_sim does.
import type pg from "pg";
import { inTransaction } from "../../db/pool.ts";

const LOCK_SQL = "select pg_advisory_xact_lock(hashtext('esimgo_sim:schema'))";

const SCHEMA_SQL = `
create schema if not exists esimgo_sim;

-- The serial part of the ICCIDs handed out: no cycle, running out is an error, never a reuse.
create sequence if not exists esimgo_sim.iccid_serial
  as bigint minvalue 1 maxvalue 99999999999 no cycle;

-- The one organisation this fake serves: its prepaid balance (minor units; orders debit it,
-- refunds credit it) and the per-account refund setting ("disabled by default").
create table if not exists esimgo_sim.organisation (
  id integer primary key check (id = 1),
  name text not null,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  balance_cents bigint not null check (balance_cents >= 0),
  refunds_enabled boolean not null default false
);

create table if not exists esimgo_sim.orders (
  reference text primary key,
  assigned boolean not null,
  total_cents bigint not null check (total_cents >= 0),
  currency text not null,
  source_ip text,
  -- [{type, item, quantity, price_cents, allow_reassign}] as ordered.
  lines jsonb not null,
  created_at timestamptz not null default now(),
  -- Orders of more than 5 bundles are processed asynchronously: their eSIMs show from then on.
  ready_at timestamptz not null default now()
);
create index if not exists orders_created_at on esimgo_sim.orders (created_at);

create table if not exists esimgo_sim.esims (
  iccid text primary key,
  matching_id text not null unique,
  smdp_address text not null,
  pin text not null,
  puk text not null,
  -- The only field a client can set (PUT /esims): where a client's own id can live.
  customer_ref text check (length(customer_ref) <= 256),
  profile_status text not null default 'Released'
    check (profile_status in ('Released', 'Downloaded', 'Installed', 'Unavailable')),
  first_installed_at timestamptz,
  first_used_at timestamptz,
  -- Sandbox controls: a bundle ordered for an incompatible eSIM is refused (or reassigned), a
  -- deactivated eSIM answers 410 on its install details.
  incompatible boolean not null default false,
  deactivated_at timestamptz,
  order_reference text not null references esimgo_sim.orders (reference),
  created_at timestamptz not null default now()
);
create index if not exists esims_customer_ref on esimgo_sim.esims (customer_ref);
create index if not exists esims_order on esimgo_sim.esims (order_reference);

-- One bundle assignment per bundle bought with assign: true, on the eSIM it went to.
create table if not exists esimgo_sim.assignments (
  id bigint generated always as identity primary key,
  reference text not null unique,
  order_reference text not null references esimgo_sim.orders (reference),
  line_index integer not null,
  iccid text not null references esimgo_sim.esims (iccid),
  bundle_name text not null,
  description text not null,
  price_cents bigint not null,
  duration_days integer not null check (duration_days > 0),
  initial_bytes bigint not null check (initial_bytes > 0),
  remaining_bytes bigint not null check (remaining_bytes >= 0),
  state text not null default 'queued'
    check (state in ('processing', 'queued', 'active', 'depleted', 'expired', 'revoked', 'lapsed')),
  assigned_at timestamptz not null default now(),
  started_at timestamptz,
  ends_at timestamptz,
  revoked_at timestamptz,
  refunded_cents bigint,
  -- Utilisation thresholds (percent used) already announced by callback.
  alerted_percents integer[] not null default '{}'
);
create index if not exists assignments_iccid on esimgo_sim.assignments (iccid, id);
create index if not exists assignments_order on esimgo_sim.assignments (order_reference, line_index, id);
`;

const ORGANISATION_SQL = `
insert into esimgo_sim.organisation (id, name, currency, balance_cents, refunds_enabled)
values (1, 'Sandbox Organisation', $1, $2, $3)
on conflict (id) do nothing`;

export type InitialOrganisation = { currency: string; balance_cents: number; refunds_enabled: boolean };

/** The organisation's first settings apply only when it is created: later starts keep its records. */
export async function ensureFakeSchema(pool: pg.Pool, organisation: InitialOrganisation): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(LOCK_SQL);
    await client.query(SCHEMA_SQL);
    await client.query(ORGANISATION_SQL, [
      organisation.currency,
      organisation.balance_cents,
      organisation.refunds_enabled,
    ]);
  });
}
