// The purchase's limit: its minimal SQL (bench/pgbench/purchase.sql) run by pgbench against the
// same PostgreSQL, in the same transactions, one partner and wallet per client. Then, with the
// webhooks on, references with no target of their own: all a purchase records today
// (purchase-full.sql) when the purchase is measured, all a top-up records (topup-full.sql) when
// the top-up is.
import { execFileSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import {
  type Context,
  ms,
  PACKAGE_ID,
  PGBENCH_MAX_TPS,
  PURCHASE_CONCURRENCY,
  type ScenarioResult,
  WRK_THREADS,
} from "../support/context.ts";
import { runPgbench } from "../support/load.ts";
import { measured } from "../support/measure.ts";
import { perOk, record } from "../support/runner.ts";

export async function operatorAccount(ctx: Context, kind: string): Promise<string> {
  const result = await ctx.pool.query<{ account_id: string }>(
    "select account_id from ledger_accounts where kind = $1 and partner_id is null and currency = 'USD'",
    [kind],
  );
  if (!result.rows[0]) throw new Error(`no ${kind} account`);
  return result.rows[0].account_id;
}

/**
 * purchase.sql's tx/s; after it, purchase-full.sql and topup-full.sql are run and recorded as
 * `full` asks.
 */
export async function pgbenchPurchase(
  ctx: Context,
  full: { purchase: boolean; topup: boolean },
): Promise<number> {
  const { duration_s, warmup_s } = ctx.options;
  const pkg = (
    await ctx.pool.query<{
      wholesale_minor: number;
      external_package_id: string;
      data_mb: number;
      validity_days: number;
    }>(
      "select wholesale_minor, external_package_id, data_mb, validity_days from packages where package_id = $1",
      [PACKAGE_ID],
    )
  ).rows[0]!;
  const price = pkg.wholesale_minor;
  const warm_carts = Math.ceil((PGBENCH_MAX_TPS * warmup_s) / PURCHASE_CONCURRENCY);
  const carts_per_client = warm_carts + Math.ceil((PGBENCH_MAX_TPS * duration_s) / PURCHASE_CONCURRENCY);
  execFileSync(
    "psql",
    [
      "--quiet",
      "--no-psqlrc",
      "-v",
      "ON_ERROR_STOP=1",
      "-v",
      `clients=${PURCHASE_CONCURRENCY}`,
      "-v",
      `carts_per_client=${carts_per_client}`,
      "-v",
      `price=${price}`,
      "-v",
      `funding=${await operatorAccount(ctx, "operator_funding")}`,
      "-v",
      `external=${pkg.external_package_id}`,
      "-v",
      `data_mb=${pkg.data_mb}`,
      "-v",
      `validity_days=${pkg.validity_days}`,
      "-f",
      path.join(import.meta.dirname, "..", "pgbench", "setup.sql"),
      ctx.database_url,
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  // Whether the tree under test lists pending orders (migration 0046): the full scripts write
  // what it writes, and still run against a tree before it.
  const listed = (await ctx.pool.query("select to_regclass('pending_orders') is not null as listed")).rows[0]
    ?.listed
    ? 1
    : 0;
  const variables = {
    listed,
    price,
    external: pkg.external_package_id,
    data_mb: pkg.data_mb,
    validity_days: pkg.validity_days,
    revenue: await operatorAccount(ctx, "operator_revenue"),
  };
  const tps = await runScript(ctx, "purchase SQL (pgbench)", "purchase.sql", variables, warm_carts);
  if (full.purchase) await runScript(ctx, FULL_SQL_RESULT, "purchase-full.sql", variables, warm_carts);
  if (full.topup) await topUpReference(ctx, variables, warm_carts);
  if (full.purchase || full.topup) {
    // Their queue rows (email outbox, undispatched events, due and leased deliveries) are all dead
    // by now, first in the indexes the service's sweeps read oldest first: gone before the purchase.
    await ctx.pool.query("vacuum email_outbox, events, webhook_deliveries");
  }
  return tps;
}

/**
 * topup-full.sql, after one purchase-full.sql transaction per client has bought the eSIM it tops
 * up (cart 900001 of each client, setup.sql). Those eSIMs are deleted, as far as the service's pull
 * sync can tell, before the run: the script makes them due at every top-up, and the pulls would be
 * the service's work, charged to the reference's PostgreSQL, during it and in the next scenarios.
 */
async function topUpReference(
  ctx: Context,
  variables: Record<string, string | number>,
  warm_carts: number,
): Promise<void> {
  await runPgbench({
    database_url: ctx.database_url,
    script: path.join(import.meta.dirname, "..", "pgbench", "purchase-full.sql"),
    clients: PURCHASE_CONCURRENCY,
    threads: WRK_THREADS,
    duration_s: 0,
    transactions: 1,
    // purchase-full.sql numbers its carts 500000 + n, n counted from this plus one.
    variables: { ...variables, n: 400_000 },
  });
  await ctx.pool.query(
    "update esims set status = 'deleted', next_sync_at = null where starts_with(partner_id, 'ptr_pgb_')",
  );
  await runScript(ctx, FULL_TOPUP_SQL_RESULT, "topup-full.sql", variables, warm_carts);
}

/**
 * A measured scenario against the reference recorded as `reference` in this run, as a note: its
 * rate and PostgreSQL CPU per answer, each as the scenario's ÷ the reference's. Null when the
 * reference did not run.
 */
export function againstReference(
  ctx: Context,
  result: ScenarioResult,
  reference: string,
  what: string,
): string | null {
  const full = ctx.results.find((r) => r.name === reference);
  if (full === undefined || full.ok_per_s <= 0 || result.cpu_us_per_ok.postgres <= 0) return null;
  const rate = (result.ok_per_s / full.ok_per_s).toFixed(2);
  const cpu = (result.cpu_us_per_ok.postgres / full.cpu_us_per_ok.postgres).toFixed(2);
  return `against all ${what} records (pgbench): ${rate} of its rate, ${cpu} times its PostgreSQL CPU per tx`;
}

/** The result names of the references' runs, which purchase.ts and topup.ts read their figures from. */
export const FULL_SQL_RESULT = "purchase SQL, all it records (pgbench)";
export const FULL_TOPUP_SQL_RESULT = "top-up SQL, all it records (pgbench)";

/** One script under pgbench: warm-up, then the measured run, recorded as `name`; its tx/s. */
async function runScript(
  ctx: Context,
  name: string,
  script: string,
  variables: Record<string, string | number>,
  warm_carts: number,
): Promise<number> {
  const { duration_s, warmup_s } = ctx.options;
  const base = {
    database_url: ctx.database_url,
    script: path.join(import.meta.dirname, "..", "pgbench", script),
    clients: PURCHASE_CONCURRENCY,
    threads: WRK_THREADS,
  };
  if (warmup_s > 0) await runPgbench({ ...base, duration_s: warmup_s, variables: { ...variables, n: 0 } });
  const log_prefix = path.join(ctx.tmp, `pgbench-log-${script}`);
  const label = { "purchase.sql": "pgbench", "purchase-full.sql": "pgbench-full" }[script] ?? "pgbench-topup";
  const run = await measured(ctx, label, () =>
    runPgbench({ ...base, duration_s, variables: { ...variables, n: warm_carts }, log_prefix }),
  );
  const latencies = await pgbenchLatencies(ctx.tmp, `pgbench-log-${script}`);
  const result: ScenarioResult = {
    name,
    target: "",
    generator: "pgbench",
    concurrency: PURCHASE_CONCURRENCY,
    seconds: Math.round(run.seconds * 10) / 10,
    requests: run.result.transactions,
    requests_per_s: Math.round(run.result.tps),
    ok_per_s: Math.round(run.result.tps),
    p50_ms: latencies.p50_ms,
    p99_ms: latencies.p99_ms,
    non_2xx: run.result.failed,
    socket_errors: 0,
    notes: [
      "non-2xx = failed transactions",
      ...(run.statements !== null
        ? [
            `${Math.round((10 * run.statements) / Math.max(1, run.result.transactions)) / 10} SQL statements per transaction`,
          ]
        : []),
    ],
    cpu_percent: run.cpu,
    cpu_us_per_ok: perOk(run.ticks, run.result.transactions),
    busiest_others: run.busiest,
    load_average_before: run.load,
  };
  record(ctx, result);
  return run.result.tps;
}

/** Percentiles from pgbench's per-transaction logs (field 3 is the latency in microseconds). */
export async function pgbenchLatencies(
  dir: string,
  prefix: string,
): Promise<{ p50_ms: number | null; p99_ms: number | null }> {
  const latencies: number[] = [];
  for (const name of await readdir(dir)) {
    if (!name.startsWith(prefix)) continue;
    for (const line of (await readFile(path.join(dir, name), "utf8")).split("\n")) {
      const fields = line.split(" ");
      if (fields.length >= 3) latencies.push(Number(fields[2]));
    }
  }
  if (latencies.length === 0) return { p50_ms: null, p99_ms: null };
  latencies.sort((a, b) => a - b);
  const at = (p: number) =>
    ms(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!);
  return { p50_ms: at(50), p99_ms: at(99) };
}
