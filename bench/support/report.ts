// The report: bench/results/latest.json and latest.md, and the table printed at the end.
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type Context, log, type Ratio, RESULTS_DIR, type ScenarioResult } from "./context.ts";
import { loadAverage } from "./proc.ts";

export function version(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
      .split("\n")[0]!
      .trim();
  } catch (error) {
    // wrk -v prints its version and exits 1.
    const output = String((error as { stdout?: unknown }).stdout ?? "")
      .split("\n")[0]!
      .trim();
    return output || `unknown (${(error as Error).message.split("\n")[0]})`;
  }
}

export function markdown(report: any): string {
  const rows = (report.scenarios as ScenarioResult[]).map(
    (r) =>
      `| ${r.name} | ${r.concurrency} | ${r.requests_per_s} | ${r.ok_per_s} | ${r.p50_ms ?? "–"} | ${r.p99_ms ?? "–"} | ` +
      `${r.non_2xx} | ${r.socket_errors} | ${r.cpu_percent.load_generator}% | ${r.cpu_percent.service}% | ` +
      `${r.cpu_percent.postgres}% | ${r.cpu_percent.simulator}% | ${r.cpu_percent.others}% | ` +
      `${r.cpu_us_per_ok.service} | ${r.cpu_us_per_ok.postgres} | ${r.notes.join("; ")} |`,
  );
  const ratios = (report.ratios as Ratio[]).map(
    (r) => `| ${r.name} | ${r.value} | ≥ ${r.target} | ${r.met ? "met" : "**missed**"} | ${r.explain} |`,
  );
  return [
    `# Benchmark results (${report.date})`,
    "",
    `Machine: ${report.machine.cores} cores (${report.machine.cpu}), ${report.machine.memory_gib} GiB; ` +
      `Node ${report.versions.node}, PostgreSQL ${report.versions.postgres}, ${report.versions.wrk}, ${report.versions.pgbench}. ` +
      `Load average at start: ${report.load_average_at_start.join(", ")}. ` +
      `${report.options.duration_s} s per scenario after a ${report.options.warmup_s} s warm-up${report.options.profile ? ", service profiled (figures lower than without)" : ""}.`,
    "",
    "CPU columns are percent of one core during the measured run (200% = the whole machine); `others` is",
    "everything on the machine that is not this run's processes (other people's work). `µs/ok` is CPU time",
    "per 2xx answer (pgbench: per transaction): it varies much less with the machine's load than the rates do.",
    "",
    "| Scenario | Conc. | req/s | ok/s | p50 ms | p99 ms | non-2xx | socket errors | load gen CPU | service CPU | PostgreSQL CPU | simulator CPU | others CPU | service µs/ok | PostgreSQL µs/ok | notes |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ...rows,
    "",
    "| Ratio | value | target | | limit |",
    "| --- | ---: | ---: | --- | --- |",
    ...ratios,
    "",
    ...(report.notes as string[]).map((note) => `- ${note}`),
    "",
  ].join("\n");
}

/** Writes latest.json and latest.md and prints the table; the service is stopped first. */
export async function writeReport(
  ctx: Context,
  run: { started_ms: number; load_average_at_start: [number, number, number] },
): Promise<void> {
  const { options } = ctx;
  const pg_version = (await ctx.pool.query<{ server_version: string }>("show server_version")).rows[0]!
    .server_version;
  await ctx.service.stop();
  const report = {
    date: new Date().toISOString(),
    machine: {
      cores: os.availableParallelism(),
      cpu: os.cpus()[0]?.model ?? "unknown",
      memory_gib: Math.round(os.totalmem() / 2 ** 30),
    },
    versions: {
      node: process.version,
      postgres: pg_version,
      wrk: version("wrk", ["-v"]).replace(/ Copyright.*/, ""),
      pgbench: version("pgbench", ["--version"]),
    },
    options: { ...options, only: [...options.only] },
    load_average_at_start: run.load_average_at_start,
    load_average_at_end: loadAverage(),
    total_seconds: Math.round((performance.now() - run.started_ms) / 1000),
    scenarios: ctx.results,
    ratios: ctx.ratios,
    notes: ctx.notes,
    profiles: options.profile ? path.relative(process.cwd(), ctx.profile_dir) : null,
  };
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, "latest.json"), `${JSON.stringify(report, null, 2)}\n`);
  const table = markdown(report);
  await writeFile(path.join(RESULTS_DIR, "latest.md"), table);
  console.log(`\n${table}`);
  log(`done in ${report.total_seconds} s; results in bench/results/latest.{json,md}`);
}
