// The role split (issue 37, item 6): the same purchases through one all-role process, then through
// two `ROLE=api` processes and one `ROLE=worker` on the same PostgreSQL, the load spread over both
// API processes (a wrk of half the connections on each, as a round-robin balancer would). Printed
// for each: purchases/s, and the background work's throughput during the run: confirmation emails
// sent and webhook deliveries received per second, and what was still queued at its end.
//
// It replaces the run's service with the split (the all-role process is stopped), so it runs last.
// No target: on the 2-core machine the bench runs on, three processes share the cores that one
// used with PostgreSQL; the figures say what the split costs or gains there, not past it.
import { setTimeout as delay } from "node:timers/promises";
import { cartFile, completedOrders, emailsSent, queuedJobs, quiesce, submitRun } from "../support/carts.ts";
import { type Context, log, PURCHASE_CONCURRENCY } from "../support/context.ts";
import { runWrk, type WrkResult } from "../support/load.ts";
import { measured } from "../support/measure.ts";
import { startService, startWorkerService } from "../support/processes.ts";
import { record, wrkOptions, wrkScenario } from "../support/runner.ts";
import { writeCartFile } from "../support/setup.ts";

type Throughput = { purchases_per_s: number; emails_per_s: number; webhooks_per_s: number | null };
type Run = Awaited<ReturnType<typeof submitRun>>;

export async function roles(ctx: Context): Promise<void> {
  const all = await submitRun(ctx, "roles-all", PURCHASE_CONCURRENCY, 200, Number.POSITIVE_INFINITY);
  const all_result = wrkScenario(
    "purchase, ROLE=all × 1",
    "no target: the role split's baseline",
    PURCHASE_CONCURRENCY,
    all,
    true,
  );
  const baseline = throughputNote(all_result, all);
  record(ctx, all_result);
  await quiesce(ctx);

  await startSplit(ctx);
  const split = await splitRun(ctx, all_result.ok_per_s);
  const split_result = wrkScenario(
    "purchase, ROLE=api × 2 + ROLE=worker × 1",
    "no target: against ROLE=all × 1",
    PURCHASE_CONCURRENCY,
    split,
    true,
  );
  const spread = throughputNote(split_result, split);
  split_result.notes.push("latencies: the slower of the two wrk runs' p50 and p99");
  record(ctx, split_result);
  const ratio = Math.round((100 * spread.purchases_per_s) / Math.max(1, baseline.purchases_per_s)) / 100;
  const rates = (t: Throughput) =>
    `${t.purchases_per_s} purchases/s, ${t.emails_per_s} emails/s, ${t.webhooks_per_s ?? "no"} webhook deliveries/s`;
  const note =
    `role split: ${rates(spread)} with two api processes and one worker; ${rates(baseline)} with one all-role ` +
    `process (purchases × ${ratio}; shared 2-core machine)`;
  ctx.notes.push(note);
  log(note);
}

/** Purchases, emails and webhook deliveries per second of a run; the last two added to its notes. */
function throughputNote(result: ReturnType<typeof wrkScenario>, run: Run): Throughput {
  const emails_per_s = Math.round(run.emails_sent / result.seconds);
  result.notes.push(
    `${emails_per_s} confirmation emails/s sent during the run, ${run.emails_queued} queued at its end`,
  );
  const { before, after } = run.webhooks;
  const webhooks_per_s =
    before === null || after === null
      ? null
      : Math.round((after.received - before.received) / result.seconds);
  if (webhooks_per_s !== null)
    result.notes.push(`${webhooks_per_s} webhook deliveries/s received during the run`);
  return { purchases_per_s: result.ok_per_s, emails_per_s, webhooks_per_s };
}

/** Stops the all-role service; starts two API processes and one worker with its environment. */
async function startSplit(ctx: Context): Promise<void> {
  await ctx.service.stop();
  const cwd = ctx.options.service_dir;
  const api = (n: number) =>
    startService({
      log_dir: ctx.tmp,
      log_name: `service-api-${n}.log`,
      cwd,
      node_flags: [],
      env: { ...ctx.service_env, ROLE: "api" },
    });
  const [first, second] = [await api(1), await api(2)];
  const worker = await startWorkerService({ env: ctx.service_env, log_dir: ctx.tmp, cwd });
  ctx.service = first;
  ctx.more_services = [second, worker];
  log(
    `role split: api ${first.url} (pid ${first.pid}), api ${second.url} (pid ${second.pid}), worker pid ${worker.pid}`,
  );
  // Both API processes count each other (heartbeats every 2 s) before the load starts.
  await delay(4_000);
}

/** Carts for `rate_per_s` (the baseline's, doubled) split between the two API processes, submitted at once. */
async function splitRun(ctx: Context, rate_per_s: number) {
  const { duration_s } = ctx.options;
  const count = Math.ceil((2 * rate_per_s + 100) * duration_s) + 2 * PURCHASE_CONCURRENCY;
  const { carts } = await cartFile(ctx, "roles-split", count);
  const urls = [ctx.service.url, ctx.more_services[0]!.url];
  const files = urls.map((_, half) => `${ctx.tmp}/roles-split-${half}.carts`);
  await Promise.all(
    files.map((file, half) =>
      writeCartFile(
        file,
        carts.filter((_, i) => i % 2 === half),
      ),
    ),
  );
  const emails_before = await emailsSent(ctx);
  const completed_before = await completedOrders(ctx);
  const run = await measured(ctx, "roles-split", async () => {
    const runs = await Promise.all(
      urls.map((url, half) =>
        runWrk({
          ...wrkOptions(ctx, url, {
            script: "submit.lua",
            connections: PURCHASE_CONCURRENCY / 2,
            threads: 1,
          }),
          env: { BENCH_CARTS: files[half]! },
        }),
      ),
    );
    return combined(runs);
  });
  const [sent_after, emails_queued] = await Promise.all([emailsSent(ctx), queuedJobs(ctx)]);
  await delay(1_000);
  const completed = (await completedOrders(ctx)) - completed_before;
  return { ...run, emails_sent: sent_after - emails_before, emails_queued, completed };
}

/** Two wrk runs side by side as one: counts added, the longer duration, the slower latencies. */
function combined(runs: WrkResult[]): WrkResult {
  const [a, b] = runs as [WrkResult, WrkResult];
  const sum = Object.fromEntries(
    Object.keys(a).map((key) => [key, a[key as keyof WrkResult] + b[key as keyof WrkResult]]),
  ) as WrkResult;
  return {
    ...sum,
    duration_us: Math.max(a.duration_us, b.duration_us),
    p50_us: Math.max(a.p50_us, b.p50_us),
    p90_us: Math.max(a.p90_us, b.p90_us),
    p99_us: Math.max(a.p99_us, b.p99_us),
    max_us: Math.max(a.max_us, b.max_us),
    mean_us: (a.mean_us + b.mean_us) / 2,
  };
}
