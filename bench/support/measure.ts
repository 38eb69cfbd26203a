// Measuring: CPU of every process of ours and of the machine, around one load generator run;
// with --profile, the service's CPU profile and PostgreSQL's statements during it.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { profileMarkdown } from "../cpu-profile-top.ts";
import type { Context, CpuShares } from "./context.ts";
import { cpuPercent } from "./load.ts";
import {
  busiestOthers,
  childrenOf,
  clusterTicks,
  loadAverage,
  machineBusyTicks,
  processTicks,
  selfTicks,
  snapshotProcesses,
} from "./proc.ts";
import { type WebhookCounts, webhookCounts } from "./webhooks.ts";

export async function measured<T extends { cpu_ticks: number }>(
  ctx: Context,
  label: string,
  run: () => Promise<T>,
): Promise<{
  result: T;
  seconds: number;
  cpu: CpuShares;
  ticks: Omit<CpuShares, "others">;
  busiest: string[];
  load: [number, number, number];
  /** With --profile: the statements PostgreSQL ran during the run. */
  statements: number | null;
  /** Webhook deliveries and backlog before and after the run; null with --no-webhooks. */
  webhooks: { before: WebhookCounts | null; after: WebhookCounts | null };
}> {
  const load = loadAverage();
  const services = () => [ctx.service, ...ctx.more_services];
  const pids = () => [
    ...services().map((service) => service.pid),
    ctx.simulator.pid,
    ctx.supplier_fakes.airalo?.pid,
    ctx.supplier_fakes.esimgo?.pid,
    ctx.bare?.pid,
    ctx.webhook_receiver?.pid,
    ctx.mail_relay?.pid,
  ];
  const sample = () => ({
    at: performance.now(),
    service: services().reduce((ticks, service) => ticks + processTicks(service.pid), 0),
    // The carrier simulator and the supplier fakes: only the one a scenario buys from is busy.
    simulator:
      processTicks(ctx.simulator.pid) +
      processTicks(ctx.supplier_fakes.airalo?.pid) +
      processTicks(ctx.supplier_fakes.esimgo?.pid),
    bare: processTicks(ctx.bare?.pid),
    webhook_receiver: processTicks(ctx.webhook_receiver?.pid),
    mail_relay: processTicks(ctx.mail_relay?.pid),
    postgres: clusterTicks(ctx.postmaster_pid),
    harness: selfTicks(),
    machine: machineBusyTicks(),
    processes: snapshotProcesses(),
  });
  // The bare server and pgbench runs leave the service idle: nothing to profile there.
  const profiling = ctx.inspector !== null && label !== "discovery-bare" && !label.startsWith("pgbench");
  if (ctx.inspector !== null) await ctx.pool.query("select pg_stat_statements_reset()");
  if (profiling) await ctx.inspector!.start();
  const webhooks_before = await webhookCounts(ctx);
  const before = sample();
  const result = await run();
  const after = sample();
  const webhooks_after = await webhookCounts(ctx);
  if (profiling) await saveProfile(ctx, label, await ctx.inspector!.stop());
  const statements = ctx.inspector !== null ? await saveStatements(ctx, label) : null;
  const seconds = (after.at - before.at) / 1000;
  const used = {
    load_generator: result.cpu_ticks,
    service: after.service - before.service,
    simulator: after.simulator - before.simulator,
    bare_server: after.bare - before.bare,
    webhook_receiver: after.webhook_receiver - before.webhook_receiver,
    mail_relay: after.mail_relay - before.mail_relay,
    postgres: after.postgres - before.postgres,
    harness: after.harness - before.harness,
  };
  const ours = Object.values(used).reduce((total, ticks) => total + ticks, 0);
  const cpu = Object.fromEntries(
    Object.entries({ ...used, others: Math.max(0, after.machine - before.machine - ours) }).map(
      ([name, ticks]) => [name, cpuPercent(ticks, seconds)],
    ),
  ) as CpuShares;
  const mine = new Set<number>([process.pid, ...pids().filter((pid): pid is number => pid !== undefined)]);
  if (ctx.postmaster_pid !== undefined) {
    mine.add(ctx.postmaster_pid);
    for (const pid of childrenOf(ctx.postmaster_pid)) mine.add(pid);
  }
  const busiest = busiestOthers(before.processes, after.processes, mine, seconds);
  const webhooks = { before: webhooks_before, after: webhooks_after };
  return { result, seconds, cpu, ticks: used, busiest, load, statements, webhooks };
}

export async function saveProfile(ctx: Context, label: string, profile: object): Promise<void> {
  await mkdir(ctx.profile_dir, { recursive: true });
  const base = path.join(ctx.profile_dir, label.replace(/[^a-z0-9]+/gi, "-").toLowerCase());
  await writeFile(`${base}.cpuprofile`, JSON.stringify(profile));
  const summary = profileMarkdown(`${base}.cpuprofile`, 30);
  await writeFile(`${base}.md`, `# Service CPU profile: ${label}\n\n${summary}\n`);
  console.log(`\nService CPU profile during ${label}:\n${summary}\n`);
}

/** The statements PostgreSQL ran during a measured run (pg_stat_statements), by calls. */
export async function saveStatements(ctx: Context, label: string): Promise<number> {
  const rows = (
    await ctx.pool.query<{ calls: string; total_ms: number; query: string }>(
      `select calls, total_exec_time as total_ms, regexp_replace(query, '\\s+', ' ', 'g') as query
       from pg_stat_statements where query not like '%pg_stat_statements%' order by calls desc`,
    )
  ).rows;
  const total = rows.reduce((sum, row) => sum + Number(row.calls), 0);
  const lines = [
    `# Statements during ${label}: ${total} in all`,
    "",
    "| calls | exec ms | statement |",
    "| ---: | ---: | --- |",
    ...rows
      .slice(0, 40)
      .map((row) => `| ${row.calls} | ${Math.round(row.total_ms)} | \`${row.query.slice(0, 160)}\` |`),
  ];
  await mkdir(ctx.profile_dir, { recursive: true });
  const base = path.join(ctx.profile_dir, label.replace(/[^a-z0-9]+/gi, "-").toLowerCase());
  await writeFile(`${base}-statements.md`, `${lines.join("\n")}\n`);
  return total;
}
