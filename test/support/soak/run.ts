// The soak engine: a cluster, funded partners, a token-bucket scheduler of flows at the target
// rate, a line every 10 seconds, then the drain and the audit (test/support/audit.ts).
// scripts/soak.ts is its command line.
import { type AuditResult, auditSystem, formatAudit } from "../audit.ts";
import { type Cluster, createPartner, startCluster } from "../cluster.ts";
import { request } from "../http.ts";
import { createRng, type Rng } from "../rng.ts";
import { flows } from "./flows.ts";
import { formatMemory, type MemorySample, sampleMemory } from "./memory.ts";
import { Meter, percentile } from "./meter.ts";
import {
  CREDIT_MINOR,
  DRAIN_TIMEOUT_MS,
  type Flow,
  PARTNERS,
  type Partner,
  SAMPLE_EVERY_MS,
  type SoakOptions,
} from "./options.ts";

export async function setup(cluster: Cluster): Promise<{ partners: Partner[]; packages: string[] }> {
  const url = cluster.liveUrls()[0]!;
  const partners: Partner[] = [];
  for (let i = 0; i < PARTNERS; i++) {
    const created = await createPartner(url, `soak-${i}`, CREDIT_MINOR);
    partners.push({ name: `soak-${i}`, api_key: created.api_key, orders: [], iccids: [] });
  }
  const packages: string[] = [];
  for (const code of ["FR", "DE", "JP", "US"]) {
    const found = await request(url, "GET", `/v1/esim/destination/${code}/packages`, {
      key: partners[0]!.api_key,
    });
    for (const pkg of found.body.data as { package_id: string; data_mb: number | null }[]) {
      if (pkg.data_mb !== null) packages.push(pkg.package_id);
    }
  }
  if (packages.length === 0) throw new Error("discovery found no metered packages");
  return { partners, packages };
}

export async function drain(cluster: Cluster): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const state = await cluster.pool.query<{ busy: number }>(`
      select ((select count(*) from orders where status = 'pending')
            + (select count(*) from email_outbox))::int as busy`);
    if (state.rows[0]!.busy === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

type Scheduled = { elapsed_s: number; first: MemorySample; last: MemorySample };

/**
 * The scheduler: a token bucket filled at `rate` requests per second; the next flow starts once
 * the bucket holds its request count. Every 5 ms, until the end; nothing else loops. Every
 * SAMPLE_EVERY_MS a line: the window's throughput, errors and latency, and memory.
 */
async function schedule(
  options: SoakOptions,
  cluster: Cluster,
  meter: Meter,
  mix: Flow[],
): Promise<Scheduled> {
  const rng = createRng(options.seed, "soak");
  const weight = mix.reduce((sum, flow) => sum + flow.weight, 0);
  const pickFlow = () => {
    let roll = rng.next() * weight;
    for (const flow of mix) {
      roll -= flow.weight;
      if (roll < 0) return flow;
    }
    return mix[0]!;
  };
  const first = await sampleMemory(cluster);
  options.log(`  t=0s memory: ${formatMemory(first)}`);
  const started = Date.now();
  const end = started + options.duration_s * 1000;
  const inFlight = new Set<Promise<void>>();
  let tokens = 0;
  let last = started;
  let next_sample = started + SAMPLE_EVERY_MS;
  let window_started = started;
  let last_memory = first;
  let flow = pickFlow();
  while (Date.now() < end) {
    const now = Date.now();
    tokens = Math.min(tokens + ((now - last) / 1000) * options.rate, options.rate);
    last = now;
    while (tokens >= flow.requests) {
      tokens -= flow.requests;
      if (inFlight.size >= options.max_in_flight) meter.skipped += flow.requests;
      else start(flow, rng, meter, inFlight);
      flow = pickFlow();
    }
    if (now >= next_sample) {
      last_memory = await sampleMemory(cluster);
      options.log(
        `${windowLine(meter, now - started, now - window_started, inFlight.size)} | ${formatMemory(last_memory)}`,
      );
      meter.window = [];
      meter.windowErrors = 0;
      window_started = now;
      next_sample += SAMPLE_EVERY_MS;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.allSettled([...inFlight]);
  return { elapsed_s: (Date.now() - started) / 1000, first, last: last_memory };
}

function start(flow: Flow, rng: Rng, meter: Meter, inFlight: Set<Promise<void>>): void {
  const running: Promise<void> = flow
    .run(rng)
    .catch((error: unknown) => {
      const key = `driver error: ${(error as Error).message}`;
      meter.errors.set(key, (meter.errors.get(key) ?? 0) + 1);
    })
    .finally(() => inFlight.delete(running));
  inFlight.add(running);
}

function windowLine(meter: Meter, at_ms: number, window_ms: number, in_flight: number): string {
  const seconds = window_ms / 1000;
  return (
    `  t=${Math.round(at_ms / 1000)}s ${meter.window.length} requests (${(meter.window.length / seconds).toFixed(1)}/s), ` +
    `${meter.windowErrors} errors, p50 ${percentile(meter.window, 50).toFixed(1)} ms, p99 ${percentile(meter.window, 99).toFixed(1)} ms, ` +
    `in flight ${in_flight}`
  );
}

function summary(options: SoakOptions, meter: Meter, scheduled: Scheduled, audit: AuditResult): string[] {
  const { elapsed_s } = scheduled;
  const errorCount = [...meter.errors.values()].reduce((sum, n) => sum + n, 0);
  const passed = audit.breaches.length === 0 && errorCount === 0;
  return [
    `soak summary (seed ${options.seed})`,
    `  ${meter.total} requests in ${elapsed_s.toFixed(1)} s: ${(meter.total / elapsed_s).toFixed(1)} requests/s ` +
      `(target ${options.rate}; ${meter.skipped} skipped at the in-flight cap)`,
    `  statuses: ${[...meter.statuses].map(([k, v]) => `${k}: ${v}`).join(", ")}`,
    `  errors: ${errorCount}${errorCount > 0 ? ` (${[...meter.errors].map(([k, v]) => `${k}: ${v}`).join(", ")})` : ""}`,
    `  latency overall: p50 ${percentile(meter.all, 50).toFixed(1)} ms, p99 ${percentile(meter.all, 99).toFixed(1)} ms`,
    ...[...meter.byKind].map(
      ([kind, values]) =>
        `    ${kind.padEnd(13)} ${String(values.length).padStart(6)} requests, p50 ${percentile(values, 50).toFixed(1)} ms, ` +
        `p99 ${percentile(values, 99).toFixed(1)} ms`,
    ),
    `  memory at start: ${formatMemory(scheduled.first)}`,
    `  memory at end:   ${formatMemory(scheduled.last)}`,
    formatAudit(audit),
    passed ? "SOAK PASSED" : "SOAK FAILED",
  ];
}

/** Runs the soak and logs as it goes; true when the audit found no breach and no request failed. */
export async function runSoak(options: SoakOptions): Promise<boolean> {
  options.log(
    `soak: ${options.duration_s} s at ${options.rate} requests/s (at most ${options.max_in_flight} in flight), ` +
      `carrier latency ${options.carrier_latency_ms} ms, seed ${options.seed}`,
  );
  const cluster = await startCluster({
    services: 2,
    env: { LOG_LEVEL: "info", CARRIER_TIMEOUT_MS: "5000", RESOLVE_AFTER_MS: "10000" },
    simulatorEnv: { SIMULATOR_LATENCY_MS: String(options.carrier_latency_ms) },
    log: (message) => options.log(`  ${message}`),
  });
  try {
    const { partners, packages } = await setup(cluster);
    const meter = new Meter();
    const scheduled = await schedule(options, cluster, meter, flows(meter, cluster, partners, packages));
    await drain(cluster);
    const audit = await auditSystem({ pool: cluster.pool, simulator: cluster.simulator, smtp: cluster.smtp });
    const lines = summary(options, meter, scheduled, audit);
    options.log(lines.join("\n"));
    return lines[lines.length - 1] === "SOAK PASSED";
  } finally {
    await cluster.stop();
  }
}
