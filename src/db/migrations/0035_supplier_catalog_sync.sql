-- Issue 33: each catalog package names its supplier, and the catalog sync (src/catalog/
-- sync-supplier-catalog.ts) remembers what it needs: the supplier's net price per package (the
-- wholesale price is derived from it) and, per supplier, the last sync's parameters and outcome,
-- which the periodic repetition re-runs (contract, "Suppliers (operator side)").

-- Who sells the package: our carrier protocol and ES2+ ('carrier'), Airalo or eSIM Go. The
-- operator's to see; no partner answer reads it.
alter table packages
  add column supplier text not null default 'carrier'
    check (supplier in ('carrier', 'airalo', 'esimgo')),
  -- What the supplier charges us, in its currency's minor units, as of the last sync; null for
  -- packages not synced (the carrier's, imported from a file).
  add column supplier_net_minor bigint check (supplier_net_minor between 1 and 1000000000),
  add column supplier_currency text check (supplier_currency ~ '^[A-Z]{3}$'),
  -- A supplier package sold only onto an existing eSIM (Airalo's `type: topup` packages).
  add column top_up_only boolean not null default false,
  add check ((supplier_net_minor is null) = (supplier_currency is null)),
  add check (supplier <> 'carrier' or supplier_net_minor is null);

create index packages_supplier_active on packages (supplier) where active;

-- The last sync per supplier: re-run every SUPPLIER_SYNC_MINUTES with the same parameters.
-- markup_basis_points: the markup in hundredths of a percent (12.5 % = 1250), an integer so the
-- price arithmetic never meets a float.
create table supplier_catalog_syncs (
  supplier text primary key check (supplier in ('airalo', 'esimgo')),
  markup_basis_points integer not null check (markup_basis_points between 0 and 100000),
  destination_codes text[] not null default '{}' check (cardinality(destination_codes) <= 300),
  last_run_at timestamptz not null default now(),
  -- 'ok' or the refusal's text (a currency mismatch, the supplier unreachable).
  last_outcome text not null check (length(last_outcome) between 1 and 1000),
  added integer not null default 0 check (added >= 0),
  changed integer not null default 0 check (changed >= 0),
  removed integer not null default 0 check (removed >= 0)
);
