// Purchase of a supplier's package (issue 33): the carrier purchase's run (prepared carts, each
// submitted once, 32 connections) with carts of an Airalo or eSIM Go package synced from the
// supplier's fake, a process of its own at latency 0, and its figures set beside the carrier's.
// The figure is our overhead per supplier purchase, not the supplier's speed (bench/README.md).

import { setTimeout as delay } from "node:timers/promises";
import type { Supplier } from "../../src/carrier/supplier-package.ts";
import { parseMarkupPercent, syncSupplierCatalog } from "../../src/catalog/sync-supplier-catalog.ts";
import { loadConfig } from "../../src/config.ts";
import { CLI_ACTOR } from "../../src/shared/actor.ts";
import { openSupplierCatalog } from "../../src/suppliers/supplier-catalogs.ts";
import { MAX_QUIESCE_S, quiesce, submitRun } from "../support/carts.ts";
import { type Context, log, PURCHASE_CONCURRENCY, type ScenarioResult } from "../support/context.ts";
import { record, wrkScenario } from "../support/runner.ts";

/** The markup of the bench's sync: any will do, the price only has to be a partner's to pay. */
const MARKUP_PERCENT = "10";
/** The carrier's package is France, 1 GB, 7 days: the supplier's closest twin is bought. */
const DESTINATION = "FR";

/** What caps the purchases per second before our own CPU does, as the adapter is configured. */
const CAPS: Record<Supplier, string> = {
  airalo:
    "none on purchases: Airalo documents no rate limit for POST /orders (src/carrier/airalo/rate-limit.ts keeps " +
    "buckets for /token, cached in the database, and /packages, /sims/*, /refund, none called per purchase)",
  esimgo:
    "eSIM Go's documented 10 requests a second per IP, kept by the adapter's window per process " +
    "(src/carrier/esimgo/rate-limit.ts), every call counted: a purchase is POST /orders and PUT /esims (its " +
    "customerRef), + GET /esims/assignments when the order's answer holds no eSIM, so at most 5 purchases/s; " +
    "calls wait for room (at most 1 s, then unavailable) and one POST per bundle at a time (place-order.ts), " +
    "so the 32 connections queue: the latency is the queue's, and the CPU per purchase is mostly the waiting " +
    "purchases' polls of the bundle's claim (3 statements every 100 ms each, claimWaitingForRivals) over few purchases",
};

export async function purchaseFromSupplier(
  ctx: Context,
  supplier: Supplier,
  carrier: ScenarioResult | null,
): Promise<void> {
  const package_id = await syncedPackage(ctx, supplier);
  // The sync's package.* events (one per partner and package, every endpoint subscribed) go out
  // first: the service turns the change log into events after the sync, so wait for that, then them.
  await catalogChangesAnnounced(ctx);
  await quiesce(ctx);
  const before = await supplierOrders(ctx, supplier);
  const expected = carrier?.ok_per_s ?? 100;
  const name = `purchase-${supplier}`;
  const run = await submitRun(
    ctx,
    name,
    PURCHASE_CONCURRENCY,
    expected,
    Number.POSITIVE_INFINITY,
    package_id,
  );
  const result = wrkScenario(
    `purchase ${supplier} (service)`,
    "none: beside purchase",
    PURCHASE_CONCURRENCY,
    run,
    true,
  );
  const after = await supplierOrders(ctx, supplier);
  result.notes.push(
    `package ${package_id}; cap: ${CAPS[supplier]}`,
    `${run.completed} orders completed during the measured run for ${run.result.s2xx} answers 200; ` +
      `warm-up and run: ${after.completed - before.completed} ${supplier} orders completed, ` +
      `${after.pending - before.pending} pending (left to the resolver), ${after.at_fake - before.at_fake} ` +
      `orders at the fake`,
    `${run.emails_sent} confirmation emails sent during the run, ${run.emails_queued} still queued at the end`,
  );
  const beside = besideCarrier(result, carrier);
  result.notes.push(beside);
  record(ctx, result);
  ctx.notes.push(`${name}: ${beside}`);
  log(`${name}: ${beside}`);
}

/**
 * The supplier's catalog synced from its fake as `catalog sync <supplier> --destinations FR` does,
 * then its France 1 GB 7-day country package: the one the carts buy.
 */
async function syncedPackage(ctx: Context, supplier: Supplier): Promise<string> {
  const config = loadConfig(ctx.service_env);
  const opened = await openSupplierCatalog(config, ctx.pool, supplier, log);
  try {
    const report = await syncSupplierCatalog(ctx.pool, {
      supplier,
      markup_basis_points: parseMarkupPercent(MARKUP_PERCENT)!,
      destination_codes: [DESTINATION],
      currency: config.currency,
      actor: CLI_ACTOR,
      list: opened.list,
    });
    log(`${supplier} catalog synced from its fake: ${report.added.length} packages added`);
  } finally {
    await opened.close();
  }
  const found = await ctx.pool.query<{ package_id: string }>(
    `select p.package_id from packages p
     where p.supplier = $1 and p.active and not p.top_up_only and p.coverage = 'country'
       and p.validity_days = 7 and p.data_mb between 1000 and 1024
       and exists (select 1 from package_destinations d
                   where d.package_id = p.package_id and d.destination_code = $2)
     order by p.package_id limit 1`,
    [supplier, DESTINATION],
  );
  const package_id = found.rows[0]?.package_id;
  if (package_id === undefined)
    throw new Error(`${supplier}'s fake sells no ${DESTINATION} 1 GB 7-day package`);
  return package_id;
}

/** Waits (at most MAX_QUIESCE_S) until the service has made events of every catalog change. */
async function catalogChangesAnnounced(ctx: Context): Promise<void> {
  const started = performance.now();
  for (;;) {
    const result = await ctx.pool.query<{ done: boolean }>(
      `select f.last_partner_id is null and f.last_seq >= coalesce((select max(seq) from catalog_changes), 0) as done
       from catalog_change_fanout f`,
    );
    if (result.rows[0]?.done !== false) break;
    if (performance.now() - started > MAX_QUIESCE_S * 1000) {
      ctx.notes.push(`catalog changes still not announced after ${MAX_QUIESCE_S} s`);
      break;
    }
    await delay(250);
  }
  log(`catalog changes announced as events in ${Math.round(performance.now() - started)} ms`);
}

/**
 * Our orders of the supplier by state, and the orders its fake recorded (its own schema, in the
 * bench's database): one order at the fake per order of ours that reached it, none twice.
 */
async function supplierOrders(
  ctx: Context,
  supplier: Supplier,
): Promise<{ completed: number; pending: number; at_fake: number }> {
  const table = supplier === "airalo" ? "airalo_sim.orders" : "esimgo_sim.orders";
  const result = await ctx.pool.query<{ completed: string; pending: string; at_fake: string }>(
    `select count(*) filter (where status = 'completed') as completed,
            count(*) filter (where status = 'pending') as pending,
            (select count(*) from ${table}) as at_fake
     from orders where supplier = $1`,
    [supplier],
  );
  const row = result.rows[0]!;
  return { completed: Number(row.completed), pending: Number(row.pending), at_fake: Number(row.at_fake) };
}

/** purchases/s and CPU per purchase of the service, PostgreSQL and the fake, as ratios to the carrier's. */
function besideCarrier(result: ScenarioResult, carrier: ScenarioResult | null): string {
  const own = result.cpu_us_per_ok;
  const figures =
    `${result.ok_per_s} purchases/s, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms; CPU per purchase: ` +
    `service ${own.service} µs, PostgreSQL ${own.postgres} µs, fake ${own.simulator} µs`;
  if (carrier === null)
    return `${figures} (the carrier's purchase not measured in this run: add --only purchase)`;
  const theirs = carrier.cpu_us_per_ok;
  const times = (part: number, whole: number) =>
    whole > 0 ? (Math.round((100 * part) / whole) / 100).toString() : "-";
  return (
    `${figures}; beside the carrier's ${carrier.ok_per_s}/s (${times(result.ok_per_s, carrier.ok_per_s)}x), ` +
    `p50 ${carrier.p50_ms} ms, p99 ${carrier.p99_ms} ms, service ${theirs.service} µs ` +
    `(${times(own.service, theirs.service)}x), PostgreSQL ${theirs.postgres} µs ` +
    `(${times(own.postgres, theirs.postgres)}x), simulator ${theirs.simulator} µs`
  );
}
