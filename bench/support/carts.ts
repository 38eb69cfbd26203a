// Carts for the purchase runs, made by wrk and handed out partners interleaved; submits under
// load; and between scenarios, the jobs one leaves behind worked off before the next starts.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import {
  type Context,
  log,
  PACKAGE_ID,
  PURCHASE_CONCURRENCY,
  type ScenarioResult,
  WRK_THREADS,
} from "./context.ts";
import { runWrk, runWrkUntil, type WrkResult } from "./load.ts";
import { measured } from "./measure.ts";
import { perOk, wrkOptions } from "./runner.ts";
import { type CartLine, writeCartFile } from "./setup.ts";
import { webhookBacklog } from "./webhooks.ts";

/**
 * `count` new carts of `quantity` eSIMs of `package_id` (the carrier's PACKAGE_ID by default), made
 * by wrk (twice as fast as fetch from this process) going round the partners, then read back from
 * the database and written one a line, partners interleaved.
 */
export async function cartFile(
  ctx: Context,
  name: string,
  count: number,
  package_id: string = PACKAGE_ID,
  quantity = 1,
): Promise<{ file: string; carts: CartLine[] }> {
  const started = performance.now();
  const since = (await ctx.pool.query<{ now: Date }>("select now()")).rows[0]!.now;
  const partners_file = path.join(ctx.tmp, "partner-keys.txt");
  await writeFile(partners_file, ctx.partners.map((partner) => `${partner.api_key}\n`).join(""));
  const keys = new Map(ctx.partners.map((partner) => [partner.partner_id, partner.api_key]));
  const fresh = `select partner_id, cart_key from carts c
     where created_at >= $1 and partner_id = any($2::text[])
       and not exists (select 1 from orders o where o.cart_key = c.cart_key)`;
  const params = [since, [...keys.keys()]];
  const made = await runWrkUntil(
    {
      url: ctx.service.url,
      script: "make-carts.lua",
      connections: PURCHASE_CONCURRENCY,
      threads: WRK_THREADS,
      // A cap only: the run is interrupted as soon as the carts are there.
      duration_s: Math.max(30, Math.ceil(count / 50)),
      env: {
        BENCH_PARTNERS: partners_file,
        // A few more than needed: requests in flight when a thread stops itself may be lost.
        BENCH_COUNT: String(count + PURCHASE_CONCURRENCY),
        BENCH_PACKAGE: package_id,
        ...(quantity > 1 ? { BENCH_QUANTITY: String(quantity) } : {}),
      },
    },
    async () =>
      Number(
        (await ctx.pool.query<{ n: string }>(`select count(*) as n from (${fresh}) f`, params)).rows[0]!.n,
      ) >= count,
  );
  if (made.s4xx + made.s5xx + made.sother > 0) throw new Error(`making carts: ${JSON.stringify(made)}`);
  const rows = (
    await ctx.pool.query<{ partner_id: string; cart_key: string }>(
      `${fresh} order by created_at, cart_key`,
      params,
    )
  ).rows;
  if (rows.length < count) throw new Error(`asked for ${count} carts for ${name}, found ${rows.length}`);
  // Round the partners: consecutive lines, and so requests in flight, hold different wallets.
  const by_partner = new Map<string, string[]>();
  for (const row of rows)
    by_partner.set(row.partner_id, [...(by_partner.get(row.partner_id) ?? []), row.cart_key]);
  const carts: CartLine[] = [];
  for (let round = 0; carts.length < rows.length; round++) {
    for (const [partner_id, cart_keys] of by_partner) {
      const cart_key = cart_keys[round];
      if (cart_key !== undefined) carts.push({ api_key: keys.get(partner_id)!, cart_key });
    }
  }
  const file = path.join(ctx.tmp, `${name}.carts`);
  await writeCartFile(file, carts);
  log(`${carts.length} carts for ${name} in ${Math.round(performance.now() - started)} ms`);
  return { file, carts };
}

/**
 * Submits prepared carts under load: a warm-up on its own carts measures the rate, then the
 * measured run gets carts for twice that rate (at most `bound_per_s`), each submitted once.
 * Carts of `quantity` > 1 are group orders, submitted with that many travellers named.
 */
export async function submitRun(
  ctx: Context,
  name: string,
  concurrency: number,
  expected_per_s: number,
  bound_per_s: number,
  package_id: string = PACKAGE_ID,
  quantity = 1,
): Promise<
  Awaited<ReturnType<typeof measured<WrkResult>>> & {
    emails_sent: number;
    emails_queued: number;
    completed: number;
    /** eSIMs of the orders the run made, those in flight when wrk stopped included. */
    esims?: number;
    /**
     * CPU per eSIM of all the run caused: the measured run, then the drain (the requests in flight
     * when wrk stopped, the emails and webhooks queued): what one eSIM costs, whatever an order holds.
     */
    cpu_us_per_esim?: ScenarioResult["cpu_us_per_ok"];
  }
> {
  const { warmup_s, duration_s } = ctx.options;
  const base = wrkOptions(ctx, ctx.service.url, { script: "submit.lua", connections: concurrency });
  const travellers: Record<string, string> = quantity > 1 ? { BENCH_TRAVELLERS: String(quantity) } : {};
  let rate = expected_per_s;
  if (warmup_s > 0) {
    const warm = await cartFile(
      ctx,
      `${name}-warmup`,
      Math.ceil(Math.min(bound_per_s, expected_per_s) * warmup_s) + 2 * concurrency,
      package_id,
      quantity,
    );
    const result = await runWrk({
      ...base,
      duration_s: warmup_s,
      env: { BENCH_CARTS: warm.file, ...travellers },
    });
    rate = result.s2xx / (result.duration_us / 1e6);
    log(`${name} warm-up: ${Math.round(rate)}/s${result.exhausted > 0 ? " (its carts ran out)" : ""}`);
    // Carts that ran out during the warm-up make its rate a floor, not an estimate.
    if (result.exhausted > 0) rate = Math.max(rate, expected_per_s) * 1.5;
  }
  const count = Math.ceil(Math.min(bound_per_s, 2 * rate + 100) * duration_s) + 2 * concurrency;
  const { file } = await cartFile(ctx, name, count, package_id, quantity);
  // The warm-up's emails and webhooks out first: the run's CPU and its drain's are its own work.
  await quiesce(ctx);
  const emails_before = await emailsSent(ctx);
  const completed_before = await completedOrders(ctx);
  const started = (await ctx.pool.query<{ now: Date }>("select now()")).rows[0]!.now;
  const run = await measured(ctx, name, () => runWrk({ ...base, env: { BENCH_CARTS: file, ...travellers } }));
  // Both email figures the moment wrk stops: the backlog read after the drain would be empty.
  const [sent_after, emails_queued] = await Promise.all([emailsSent(ctx), queuedJobs(ctx)]);
  const emails_sent = sent_after - emails_before;
  // Requests still in flight when wrk stops complete a moment later, then what they queued goes out.
  const drain = await measured(ctx, `${name}-drain`, async () => {
    await ordersSettled(ctx, started);
    await quiesce(ctx);
    return { cpu_ticks: 0 };
  });
  const completed = (await completedOrders(ctx)) - completed_before;
  const esims = await esimsSince(ctx, started);
  const ticks = Object.fromEntries(
    Object.entries(run.ticks).map(([part, used]) => [
      part,
      used + drain.ticks[part as keyof typeof run.ticks],
    ]),
  ) as typeof run.ticks;
  return { ...run, emails_sent, emails_queued, completed, esims, cpu_us_per_esim: perOk(ticks, esims) };
}

/** Waits (at most MAX_QUIESCE_S) until no order made since `since` is pending: wrk's last requests answered. */
async function ordersSettled(ctx: Context, since: Date): Promise<void> {
  // A request read just before wrk stopped has its order row within milliseconds.
  await delay(500);
  const started = performance.now();
  for (;;) {
    const result = await ctx.pool.query<{ n: string }>(
      "select count(*) as n from orders where status = 'pending' and created_at >= $1",
      [since],
    );
    if (Number(result.rows[0]!.n) === 0) return;
    if (performance.now() - started > MAX_QUIESCE_S * 1000) {
      ctx.notes.push(`orders still pending ${MAX_QUIESCE_S} s after a run`);
      return;
    }
    await delay(100);
  }
}

async function esimsSince(ctx: Context, since: Date): Promise<number> {
  const result = await ctx.pool.query<{ n: string }>(
    "select count(*) as n from esims where created_at >= $1",
    [since],
  );
  return Number(result.rows[0]!.n);
}

// ---------------------------------------------------------------------------------------------
// Between scenarios: the jobs one leaves behind (confirmation emails) are worked off before the
// next starts, so each measures its own work. Within a run they are part of its cost.

export const MAX_QUIESCE_S = 45;

export async function emailsSent(ctx: Context): Promise<number> {
  return Number(
    (await ctx.pool.query<{ n: string }>("select count(*) as n from email_deliveries")).rows[0]!.n,
  );
}

/**
 * Confirmation emails waiting: rows of the email outbox (migration 0007), or, for a `--service-dir`
 * tree from before it, the graphile-worker jobs that were due then.
 */
export async function queuedJobs(ctx: Context): Promise<number> {
  const outbox = await ctx.pool.query<{ found: boolean }>(
    "select to_regclass('email_outbox') is not null as found",
  );
  const result = await ctx.pool.query<{ n: string }>(
    outbox.rows[0]!.found
      ? "select count(*) as n from email_outbox"
      : "select count(*) as n from graphile_worker.jobs where run_at <= now() and task_identifier <> 'resolve_pending_order'",
  );
  return Number(result.rows[0]!.n);
}

/**
 * Waits (at most MAX_QUIESCE_S) for the queued confirmation emails and the webhook backlog
 * (events not dispatched, deliveries pending) a scenario left, and notes how fast they went.
 */
export async function quiesce(ctx: Context): Promise<void> {
  // Side by side: each counts its backlog at the same moment, and the wait is the longer of the two.
  await Promise.all([
    drain(ctx, "queued confirmation emails sent", () => queuedJobs(ctx)),
    drain(ctx, "pending webhook events and deliveries out", () => webhookBacklog(ctx)),
  ]);
}

async function drain(ctx: Context, what: string, count: () => Promise<number>): Promise<void> {
  const started = performance.now();
  const initial = await count();
  if (initial === 0) return;
  while ((await count()) > 0) {
    if (performance.now() - started > MAX_QUIESCE_S * 1000) {
      ctx.notes.push(`${what}: some still waiting after ${MAX_QUIESCE_S} s between scenarios`);
      break;
    }
    await delay(250);
  }
  const waited_ms = performance.now() - started;
  const message =
    `${initial} ${what} in ${Math.round(waited_ms)} ms ` +
    `(${Math.round(initial / (waited_ms / 1000))}/s) before the next scenario`;
  ctx.notes.push(message);
  log(message);
}

export async function completedOrders(ctx: Context): Promise<number> {
  const result = await ctx.pool.query<{ count: string }>(
    "select count(*) from orders where status = 'completed' and partner_id not like 'ptr_pgb_%'",
  );
  return Number(result.rows[0]!.count);
}
