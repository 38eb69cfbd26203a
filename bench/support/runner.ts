// The shared runner of the scenarios: a wrk run warmed up and measured, its result recorded,
// printed, and set against its physical limit as a ratio.

import {
  type Context,
  type CpuShares,
  log,
  ms,
  READ_CONNECTIONS,
  type ScenarioResult,
  WRK_THREADS,
} from "./context.ts";
import { runWrk, type WrkOptions, type WrkResult } from "./load.ts";
import { measured } from "./measure.ts";
import { TICKS_PER_S } from "./proc.ts";
import { webhookNote } from "./webhooks.ts";

export function wrkScenario(
  name: string,
  target: string,
  concurrency: number,
  run: Awaited<ReturnType<typeof measured<WrkResult>>>,
  counted_by_script: boolean,
): ScenarioResult {
  const r = run.result;
  const seconds = r.duration_us / 1e6;
  const socket_errors = r.connect + r.read + r.write + r.timeout;
  // Scripts with response() count each class; the others rely on wrk's count of status > 399.
  const non_2xx = counted_by_script ? r.s4xx + r.s5xx + r.sother : r.status;
  const ok = counted_by_script ? r.s2xx : r.requests - r.status;
  const notes: string[] = [];
  if (r.exhausted > 0) notes.push(`carts ran out (${r.exhausted} threads stopped early): rerun`);
  if (r.s402 > 0) notes.push(`${r.s402} × 402`);
  if (r.s409 > 0) notes.push(`${r.s409} × 409`);
  if (r.s503 > 0) notes.push(`${r.s503} × 503`);
  const webhooks = webhookNote(run.webhooks.before, run.webhooks.after);
  if (webhooks !== null) notes.push(webhooks);
  if (run.statements !== null && ok > 0)
    notes.push(`${Math.round((10 * run.statements) / ok) / 10} SQL statements per ok`);
  return {
    name,
    target,
    generator: "wrk",
    concurrency,
    seconds: Math.round(seconds * 10) / 10,
    requests: r.requests,
    requests_per_s: Math.round(r.requests / seconds),
    ok_per_s: Math.round(ok / seconds),
    p50_ms: ms(r.p50_us),
    p99_ms: ms(r.p99_us),
    non_2xx,
    socket_errors,
    notes,
    cpu_percent: run.cpu,
    cpu_us_per_ok: perOk(run.ticks, ok),
    busiest_others: run.busiest,
    load_average_before: run.load,
  };
}

export function perOk(ticks: Omit<CpuShares, "others">, ok: number): ScenarioResult["cpu_us_per_ok"] {
  const us = (value: number) => (ok > 0 ? Math.round((value * 1e6) / TICKS_PER_S / ok) : 0);
  return {
    // The service or the bare server: only one of them is under load in a run.
    service: us(ticks.service + ticks.bare_server),
    postgres: us(ticks.postgres),
    simulator: us(ticks.simulator),
    load_generator: us(ticks.load_generator),
  };
}

export function printScenario(result: ScenarioResult): void {
  const c = result.cpu_percent;
  log(
    `${result.name}: ${result.ok_per_s}/s ok (${result.requests_per_s} req/s), p50 ${result.p50_ms} ms, ` +
      `p99 ${result.p99_ms} ms, non-2xx ${result.non_2xx}, socket errors ${result.socket_errors}; CPU % of a core: ` +
      `load generator ${c.load_generator}, service ${c.service}, simulator ${c.simulator}, bare ${c.bare_server}, ` +
      `webhook receiver ${c.webhook_receiver}, mail relay ${c.mail_relay}, ` +
      `postgres ${c.postgres}, others ${c.others}${result.busiest_others.length ? ` (${result.busiest_others.join(", ")})` : ""}` +
      `; CPU per ok: service ${result.cpu_us_per_ok.service} µs, postgres ${result.cpu_us_per_ok.postgres} µs` +
      `${result.notes.length ? `; ${result.notes.join("; ")}` : ""}`,
  );
}

export function ratio(ctx: Context, name: string, value: number, target: number, explain: string): void {
  const rounded = Math.round(value * 100) / 100;
  ctx.ratios.push({ name, value: rounded, target, met: rounded >= target, explain });
  log(`ratio ${name}: ${rounded} (target >= ${target}: ${rounded >= target ? "met" : "MISSED"})`);
}

export function wrkOptions(ctx: Context, url: string, overrides: Partial<WrkOptions>): WrkOptions {
  return {
    url,
    script: "get.lua",
    connections: READ_CONNECTIONS,
    threads: WRK_THREADS,
    duration_s: ctx.options.duration_s,
    env: {},
    ...overrides,
  };
}

export async function warmUp(options: WrkOptions, warmup_s: number): Promise<WrkResult | null> {
  if (warmup_s <= 0) return null;
  return runWrk({ ...options, duration_s: warmup_s });
}

/** A ratio to a physical limit; `value` null when the limit was not measured in this run (--only). */
export type Limit = { name: string; value: number | null; target: number; explain: string };

/** `part / whole`, or null when the whole was not measured. */
export function ratioOf(part: number, whole: number | null): number | null {
  return whole === null ? null : part / whole;
}

/** The block every scenario ends with: the result recorded and printed, then its ratio to its limit. */
export function record(ctx: Context, result: ScenarioResult, limit: Limit | null = null): void {
  ctx.results.push(result);
  printScenario(result);
  if (limit !== null && limit.value !== null)
    ratio(ctx, limit.name, limit.value, limit.target, limit.explain);
}

export type WrkRun = {
  /** The measured run's label (profile and statement file names). */
  label: string;
  name: string;
  target: string;
  concurrency: number;
  options: WrkOptions;
  /** The warm-up's options when they differ from the measured run's. */
  warmup?: WrkOptions;
  /** The Lua script counts each status class (submit, top-up); else wrk's count of status > 399. */
  counted_by_script: boolean;
  /** The warm-up's length when not the run's --warmup (0: none, the process is warm already). */
  warmup_s?: number;
};

/** Warms up, then measures one wrk run; the result is not recorded yet (notes may follow). */
export async function measureWrk(ctx: Context, run: WrkRun): Promise<ScenarioResult> {
  await warmUp(run.warmup ?? run.options, run.warmup_s ?? ctx.options.warmup_s);
  const measuredRun = await measured(ctx, run.label, () => runWrk(run.options));
  return wrkScenario(run.name, run.target, run.concurrency, measuredRun, run.counted_by_script);
}
