// The load generators, each a process of its own: wrk (HTTP, Lua scripts in bench/lua) and
// pgbench (SQL, bench/pgbench). Each runs under `sh`, which prints its own /proc stat after the
// generator exits: the shell's cutime/cstime are then exactly the CPU the generator used.
import { type ChildProcessByStdio, spawn } from "node:child_process";
import path from "node:path";
import type { Readable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { parseStat, TICKS_PER_S } from "./proc.ts";

const LUA_DIR = path.resolve(import.meta.dirname, "..", "lua");
const CHILD_STAT = /^BENCH_CHILD_STAT (.*)$/m;

export type WrkResult = {
  requests: number;
  duration_us: number;
  bytes: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  max_us: number;
  mean_us: number;
  /** Socket errors, as wrk counts them. */
  connect: number;
  read: number;
  write: number;
  timeout: number;
  /** wrk's own count of answers with a status above 399. */
  status: number;
  /** Counted by the Lua script's response() where it has one (submit, top-up); else 0. */
  s2xx: number;
  s4xx: number;
  s5xx: number;
  sother: number;
  s402: number;
  s409: number;
  s503: number;
  exhausted: number;
  /** CPU the wrk process used, in ticks. */
  cpu_ticks: number;
};

export type PgbenchResult = { tps: number; transactions: number; failed: number; cpu_ticks: number };

type Generated = { stdout: string; stderr: string; cpu_ticks: number };

/** Everything a child writes, read once it has exited. */
function collect(child: ChildProcessByStdio<null, Readable, Readable>): { stdout: string; stderr: string } {
  const output = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => {
    output.stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output.stderr += chunk.toString("utf8");
  });
  return output;
}

/** Runs `command args...` under sh and returns its output and the CPU it used. */
async function runMeasured(command: string, args: string[], env: Record<string, string>): Promise<Generated> {
  const script = `"$@"; rc=$?; echo "BENCH_CHILD_STAT $(cat /proc/$$/stat)" >&2; exit $rc`;
  const child = spawn("sh", ["-c", script, "sh", command, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = collect(child);
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const { stdout, stderr } = output;
  const stat = CHILD_STAT.exec(stderr);
  if (code !== 0 || !stat) {
    throw new Error(`${command} ${args.join(" ")} failed (exit ${code}):\n${stdout}\n${stderr}`);
  }
  const parsed = parseStat(stat[1]!);
  return { stdout, stderr: stderr.replace(CHILD_STAT, ""), cpu_ticks: parsed.cutime + parsed.cstime };
}

export type WrkOptions = {
  url: string;
  script: "get.lua" | "get-keys.lua" | "submit.lua" | "topup.lua" | "make-carts.lua" | "search.lua";
  connections: number;
  threads: number;
  duration_s: number;
  env: Record<string, string>;
};

export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  // Far above any latency we expect: a slow answer is measured, not counted as a timeout.
  const run = await runMeasured("wrk", wrkArgs(options, ["--timeout", "60s"]), wrkEnv(options));
  return { ...wrkResult(run), cpu_ticks: run.cpu_ticks };
}

/**
 * Setup runs (making carts): wrk without CPU accounting, interrupted (SIGINT: it stops and
 * reports) as soon as `enough()` says so. A thread that stops itself does not end a wrk run: only
 * the duration or a signal does.
 */
export async function runWrkUntil(options: WrkOptions, enough: () => Promise<boolean>): Promise<WrkResult> {
  const child = spawn("wrk", wrkArgs(options, []), {
    env: { ...process.env, ...wrkEnv(options) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = collect(child);
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  let running = true;
  void exited.then(() => {
    running = false;
  });
  while (running) {
    await delay(200);
    if (running && (await enough())) {
      child.kill("SIGINT");
      break;
    }
  }
  await exited;
  return { ...wrkResult(output), cpu_ticks: 0 };
}

function wrkArgs(options: WrkOptions, extra: string[]): string[] {
  return [
    `-t${options.threads}`,
    `-c${options.connections}`,
    `-d${options.duration_s}s`,
    ...extra,
    "-s",
    path.join(LUA_DIR, options.script),
    options.url,
  ];
}

function wrkEnv(options: WrkOptions): Record<string, string> {
  return { BENCH_LUA_DIR: LUA_DIR, BENCH_THREADS: String(options.threads), ...options.env };
}

/** The summary line the Lua scripts' done() prints. */
function wrkResult(output: { stdout: string; stderr: string }): Omit<WrkResult, "cpu_ticks"> {
  const line = /^BENCH_RESULT (\{.*\})$/m.exec(output.stdout);
  if (!line) throw new Error(`wrk printed no result:\n${output.stdout}\n${output.stderr}`);
  return JSON.parse(line[1]!) as Omit<WrkResult, "cpu_ticks">;
}

export type PgbenchOptions = {
  database_url: string;
  script: string;
  clients: number;
  threads: number;
  duration_s: number;
  /** Instead of running `duration_s`: this many transactions per client, then stop. */
  transactions?: number;
  variables: Record<string, string | number>;
  /** Write a per-transaction log (for latency percentiles) to files starting with this path. */
  log_prefix?: string;
};

export async function runPgbench(options: PgbenchOptions): Promise<PgbenchResult> {
  const args = [
    "--no-vacuum",
    // The service prepares the statements it runs often (src/db/pool.ts): the bare SQL does too.
    "--protocol=prepared",
    `--client=${options.clients}`,
    `--jobs=${options.threads}`,
    options.transactions !== undefined
      ? `--transactions=${options.transactions}`
      : `--time=${options.duration_s}`,
    ...Object.entries(options.variables).map(([name, value]) => `--define=${name}=${value}`),
    ...(options.log_prefix ? ["--log", `--log-prefix=${options.log_prefix}`] : []),
    `--file=${options.script}`,
    options.database_url,
  ];
  const run = await runMeasured("pgbench", args, {});
  const tps = /^tps = ([\d.]+)/m.exec(run.stdout);
  const processed = /number of transactions actually processed: (\d+)/.exec(run.stdout);
  const failed = /number of failed transactions: (\d+)/.exec(run.stdout);
  if (!tps || !processed) throw new Error(`pgbench printed no result:\n${run.stdout}\n${run.stderr}`);
  return {
    tps: Number(tps[1]),
    transactions: Number(processed[1]),
    failed: Number(failed?.[1] ?? 0),
    cpu_ticks: run.cpu_ticks,
  };
}

export function cpuPercent(ticks: number, seconds: number): number {
  return Math.round((100 * ticks) / TICKS_PER_S / seconds);
}
