// `npm run soak`: a steady mixed load against two API processes for a while, watching for what
// only time shows: memory that grows, latency that creeps, errors that appear after thousands of
// requests. Discovery GETs, carts and submits, order listings and reads, wallet reads and top-ups
// (Idempotency-Key) at a target request rate, all to 127.0.0.1. Every 10 seconds it prints one
// line: throughput, errors, p50/p99 latency of the window, and the memory of every process (API
// processes and the simulator: RSS; PostgreSQL: the sum of PSS over its processes, so shared
// buffers are counted once). At the end the same audit as the chaos run (test/support/audit.ts).
//
//   npm run soak                               5 minutes at 40 requests/s
//   npm run soak -- --duration 60 --rate 80
//
// Options (defaults): --duration 300 (seconds), --rate 40 (target requests/s), --max-in-flight 64
// (requests in flight at most; past it the scheduler skips and counts the shortfall),
// --carrier-latency 50 (ms added by the simulator to every carrier call), --seed (random, printed).
// Exit 1 when the audit finds a breach or any request failed (the load is all valid requests to
// funded wallets on a healthy carrier, so every error is a defect).
import { readdir, readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { auditSystem, formatAudit } from "../test/support/audit.ts";
import {
  type Answer,
  type Cluster,
  createPartner,
  request,
  startCluster,
  stopClustersOnExit,
  TransportError,
} from "../test/support/cluster.ts";
import { createRng, type Rng } from "./chaos.ts";

type SoakOptions = {
  duration_s: number;
  rate: number;
  max_in_flight: number;
  carrier_latency_ms: number;
  seed: number;
};

const PARTNERS = 8;
const CREDIT_MINOR = 1_000_000_000;
const SAMPLE_EVERY_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const DRAIN_TIMEOUT_MS = 60_000;
/** Bounds on what one partner remembers, so a long soak keeps a flat memory of its own. */
const MAX_REMEMBERED = 200;
const DESTINATIONS = ["FR", "DE", "ES", "IT", "JP", "US", "GB", "TH", "BR", "AU"];
const END_USER = { email: "soak@example.com", phone: "+14155550123", first_name: "Soak", last_name: "Test" };

type Partner = { name: string; api_key: string; orders: string[]; iccids: string[] };

type Flow = { name: string; weight: number; requests: number; run: (rng: Rng) => Promise<void> };

class Meter {
  /** Latencies (ms) and outcomes of the current window and of the whole run. */
  window: number[] = [];
  all: number[] = [];
  byKind = new Map<string, number[]>();
  statuses = new Map<string, number>();
  errors = new Map<string, number>();
  windowErrors = 0;
  skipped = 0;
  total = 0;

  record(kind: string, latency_ms: number, outcome: string, error: boolean): void {
    this.total += 1;
    this.window.push(latency_ms);
    this.all.push(latency_ms);
    const list = this.byKind.get(kind) ?? [];
    list.push(latency_ms);
    this.byKind.set(kind, list);
    this.statuses.set(outcome, (this.statuses.get(outcome) ?? 0) + 1);
    if (error) {
      this.windowErrors += 1;
      const key = `${kind} ${outcome}`;
      this.errors.set(key, (this.errors.get(key) ?? 0) + 1);
    }
  }
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One call, timed and counted; expected statuses are the only non-errors. */
async function timed(
  meter: Meter,
  cluster: Cluster,
  rng: Rng,
  kind: string,
  expect: number,
  method: string,
  path: string,
  options: { key: string; body?: unknown; headers?: Record<string, string> },
): Promise<Answer | null> {
  const urls = cluster.liveUrls();
  const url = rng.pick(urls);
  const started = performance.now();
  try {
    const answer = await request(url, method, path, { ...options, timeout_ms: REQUEST_TIMEOUT_MS });
    meter.record(kind, performance.now() - started, String(answer.status), answer.status !== expect);
    return answer;
  } catch (error) {
    if (!(error instanceof TransportError)) throw error;
    meter.record(kind, performance.now() - started, error.kind, true);
    return null;
  }
}

function remember(list: string[], value: string): void {
  list.push(value);
  if (list.length > MAX_REMEMBERED) list.splice(0, list.length - MAX_REMEMBERED);
}

function flows(meter: Meter, cluster: Cluster, partners: Partner[], packages: string[]): Flow[] {
  const partner = (rng: Rng) => rng.pick(partners);
  const purchase = async (rng: Rng) => {
    const p = partner(rng);
    const cart = await timed(meter, cluster, rng, "cart", 201, "POST", "/v1/orders/cart", {
      key: p.api_key,
      body: { package_id: rng.pick(packages) },
    });
    if (cart?.status !== 201) return;
    const order = await timed(meter, cluster, rng, "submit", 200, "POST", "/v1/orders/submit", {
      key: p.api_key,
      body: { cart_key: cart.body.cart_key, ...END_USER },
    });
    if (order?.status !== 200) return;
    remember(p.orders, order.body.orderID);
    remember(p.iccids, order.body.purchases[0].iccid);
  };
  return [
    {
      name: "discovery",
      weight: 35,
      requests: 1,
      run: async (rng) => {
        const code = rng.pick(DESTINATIONS);
        await timed(meter, cluster, rng, "discovery", 200, "GET", `/v1/esim/destination/${code}/packages`, {
          key: partner(rng).api_key,
        });
      },
    },
    {
      name: "wallet",
      weight: 15,
      requests: 1,
      run: async (rng) => {
        await timed(meter, cluster, rng, "wallet", 200, "GET", "/v1/profile/wallet", {
          key: partner(rng).api_key,
        });
      },
    },
    {
      name: "list orders",
      weight: 12,
      requests: 1,
      run: async (rng) => {
        await timed(meter, cluster, rng, "list", 200, "GET", "/v1/profile/orders?limit=20", {
          key: partner(rng).api_key,
        });
      },
    },
    {
      name: "get order",
      weight: 8,
      requests: 1,
      run: async (rng) => {
        const p = partner(rng);
        // Nothing bought yet: buy instead, so the request rate holds from the first second.
        if (p.orders.length === 0) return purchase(rng);
        await timed(meter, cluster, rng, "order", 200, "GET", `/v1/orders/${rng.pick(p.orders)}`, {
          key: p.api_key,
        });
      },
    },
    {
      name: "purchase",
      weight: 20,
      requests: 2,
      run: purchase,
    },
    {
      name: "top-up",
      weight: 10,
      requests: 2,
      run: async (rng) => {
        const p = partner(rng);
        if (p.iccids.length === 0) return purchase(rng);
        const iccid = rng.pick(p.iccids);
        const offer = await timed(
          meter,
          cluster,
          rng,
          "topup offer",
          200,
          "GET",
          `/v1/orders/available-topups/${iccid}`,
          {
            key: p.api_key,
          },
        );
        const rows = offer?.body.data as { package_id: string; external_package_id: string }[] | undefined;
        if (!rows || rows.length === 0) return;
        const row = rng.pick(rows);
        const order = await timed(
          meter,
          cluster,
          rng,
          "topup submit",
          200,
          "POST",
          "/v1/orders/submit-topup",
          {
            key: p.api_key,
            headers: { "idempotency-key": `soak-${Date.now()}-${rng.int(0, 1e9)}` },
            body: {
              iccid,
              package_id: row.package_id,
              external_package_id: row.external_package_id,
              ...END_USER,
            },
          },
        );
        if (order?.status === 200) remember(p.orders, order.body.orderID);
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Memory: RSS from /proc/<pid>/status; PostgreSQL's many processes share their buffers, so its
// figure is the sum of PSS (proportional set size) over the postmaster and its children.

async function rssMb(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => null);
  const kb = status ? /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] : undefined;
  return kb === undefined ? null : Number(kb) / 1024;
}

async function postgresPssMb(postmaster: number | null): Promise<{ mb: number; processes: number } | null> {
  if (postmaster === null) return null;
  const pids = [postmaster];
  for (const entry of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => null);
    // Field 4 (ppid) comes after the command, which is in parentheses and may hold spaces.
    const ppid = stat ? Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) : Number.NaN;
    if (ppid === postmaster) pids.push(Number(entry));
  }
  let kb = 0;
  for (const pid of pids) {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => null);
    kb += Number((rollup ? /^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] : undefined) ?? 0);
  }
  return { mb: kb / 1024, processes: pids.length };
}

type MemorySample = {
  api: (number | null)[];
  simulator: number | null;
  postgres: { mb: number; processes: number } | null;
};

async function sampleMemory(cluster: Cluster): Promise<MemorySample> {
  return {
    api: await Promise.all(cluster.services.map((s) => rssMb(s?.process.pid))),
    simulator: await rssMb(cluster.simulator.process.pid),
    postgres: await postgresPssMb(await cluster.postgresPid()),
  };
}

function formatMemory(memory: MemorySample): string {
  const mb = (value: number | null) => (value === null ? "n/a" : `${value.toFixed(0)} MB`);
  return (
    memory.api.map((value, i) => `api${i} ${mb(value)}`).join(", ") +
    `, simulator ${mb(memory.simulator)}, postgres ${memory.postgres ? `${mb(memory.postgres.mb)} PSS in ${memory.postgres.processes} processes` : "n/a"}`
  );
}

// ---------------------------------------------------------------------------------------------

async function setup(cluster: Cluster): Promise<{ partners: Partner[]; packages: string[] }> {
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

async function drain(cluster: Cluster): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const state = await cluster.pool.query<{ busy: number }>(`
      select ((select count(*) from orders where status = 'pending')
            + (select count(*) from graphile_worker.jobs where task_identifier = 'send_confirmation_email'))::int as busy`);
    if (state.rows[0]!.busy === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function soak(options: SoakOptions): Promise<number> {
  console.log(
    `soak: ${options.duration_s} s at ${options.rate} requests/s (at most ${options.max_in_flight} in flight), ` +
      `carrier latency ${options.carrier_latency_ms} ms, seed ${options.seed}`,
  );
  const cluster = await startCluster({
    services: 2,
    env: { LOG_LEVEL: "info", CARRIER_TIMEOUT_MS: "5000", RESOLVE_AFTER_MS: "10000" },
    simulatorEnv: { SIMULATOR_LATENCY_MS: String(options.carrier_latency_ms) },
    log: (message) => console.log(`  ${message}`),
  });
  try {
    const { partners, packages } = await setup(cluster);
    const meter = new Meter();
    const rng = createRng(options.seed, "soak");
    const mix = flows(meter, cluster, partners, packages);
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
    console.log(`  t=0s memory: ${formatMemory(first)}`);
    const started = Date.now();
    const end = started + options.duration_s * 1000;
    const inFlight = new Set<Promise<void>>();
    let tokens = 0;
    let last = started;
    let next_sample = started + SAMPLE_EVERY_MS;
    let window_started = started;
    let last_memory = first;
    let flow = pickFlow();
    // The scheduler: a token bucket filled at `rate` requests per second; the next flow starts
    // once the bucket holds its request count. Every 5 ms, until the end; nothing else loops.
    while (Date.now() < end) {
      const now = Date.now();
      tokens = Math.min(tokens + ((now - last) / 1000) * options.rate, options.rate);
      last = now;
      while (tokens >= flow.requests) {
        tokens -= flow.requests;
        if (inFlight.size >= options.max_in_flight) {
          meter.skipped += flow.requests;
        } else {
          const running: Promise<void> = flow
            .run(rng)
            .catch((error: unknown) => {
              const key = `driver error: ${(error as Error).message}`;
              meter.errors.set(key, (meter.errors.get(key) ?? 0) + 1);
            })
            .finally(() => inFlight.delete(running));
          inFlight.add(running);
        }
        flow = pickFlow();
      }
      if (now >= next_sample) {
        last_memory = await sampleMemory(cluster);
        const seconds = (now - window_started) / 1000;
        console.log(
          `  t=${Math.round((now - started) / 1000)}s ${meter.window.length} requests (${(meter.window.length / seconds).toFixed(1)}/s), ` +
            `${meter.windowErrors} errors, p50 ${percentile(meter.window, 50).toFixed(1)} ms, p99 ${percentile(meter.window, 99).toFixed(1)} ms, ` +
            `in flight ${inFlight.size} | ${formatMemory(last_memory)}`,
        );
        meter.window = [];
        meter.windowErrors = 0;
        window_started = now;
        next_sample += SAMPLE_EVERY_MS;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.allSettled([...inFlight]);
    const elapsed_s = (Date.now() - started) / 1000;
    await drain(cluster);
    const audit = await auditSystem({ pool: cluster.pool, simulator: cluster.simulator, smtp: cluster.smtp });

    const errorCount = [...meter.errors.values()].reduce((sum, n) => sum + n, 0);
    const lines = [
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
      `  memory at start: ${formatMemory(first)}`,
      `  memory at end:   ${formatMemory(last_memory)}`,
      formatAudit(audit),
    ];
    const passed = audit.breaches.length === 0 && errorCount === 0;
    lines.push(passed ? "SOAK PASSED" : "SOAK FAILED");
    console.log(lines.join("\n"));
    return passed ? 0 : 1;
  } finally {
    await cluster.stop();
  }
}

function whole(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`--${name}: expected a whole number >= ${min}, got ${raw}`);
  return value;
}

if (import.meta.main) {
  stopClustersOnExit();
  const { values } = parseArgs({
    options: {
      duration: { type: "string" },
      rate: { type: "string" },
      "max-in-flight": { type: "string" },
      "carrier-latency": { type: "string" },
      seed: { type: "string" },
    },
  });
  process.exitCode = await soak({
    duration_s: whole("duration", values.duration, 300, 1),
    rate: whole("rate", values.rate, 40, 1),
    max_in_flight: whole("max-in-flight", values["max-in-flight"], 64, 1),
    carrier_latency_ms: whole("carrier-latency", values["carrier-latency"], 50, 0),
    seed: whole("seed", values.seed, Math.floor(Math.random() * 2 ** 31), 0),
  });
}
