// `npm run chaos`: purchases and top-ups under fire. Two API processes and the carrier simulator
// run as child processes against one PostgreSQL (test/support/cluster.ts). Client loops drive a
// stream of purchases (cart + submit), top-ups (Idempotency-Key) and reads with the retries a
// careful partner makes: same cart_key, same key and body, a short client timeout now and then
// (the client gives up mid-request and asks again), duplicate submits racing on both processes.
// Meanwhile a killer SIGKILLs a random API process at random moments and restarts it (sometimes
// armed with a CRASH_AT point, so it dies again at the worst moment of a purchase), and the
// carrier's faults (latency, refusals, timeouts, 503s, outages) change every few seconds, and
// PostgreSQL itself is restarted (-m fast, then -m immediate) under the stream. A quarter of the
// purchases are group orders (2-5 eSIMs with travellers), audited line by line.
// Afterwards: faults cleared, the resolver drains every pending order, and the audit
// (test/support/audit.ts) plus the client's own observations must agree. Exit 1 on any breach.
//
//   npm run chaos                          ~2-3 minutes: 120 s of stream, 12 kills
//   npm run chaos -- --seed 1234           the same decisions again (timing still varies)
//   npm run chaos -- --duration 30 --kills 4 --operations 200 --clients 4
//
// Options (defaults): --seed (random, printed), --duration 120 (seconds of stream at most),
// --operations 100000 (logical operations at most; the stream ends at whichever limit comes
// first), --kills 12 (SIGKILLs of an API process, spread over the stream), --postgres-restarts 2
// (PostgreSQL stopped and started again under the stream, alternately -m fast and -m immediate;
// each prints its recovery time), --clients 6
// (concurrent client loops), --drain-timeout 120 (seconds for pending orders and emails to
// settle), --no-crash-points (never restart a process with CRASH_AT), --profiles es2plus (profiles
// from the SM-DP+ simulator over ES2+ with mutual TLS, the production path; its faults change with
// the carrier's and the audit checks released profiles = completed orders) or http,
// --suppliers all (a third of purchases each on the carrier's, Airalo's and eSIM Go's packages,
// synced at setup from the suppliers' fakes, which run as child processes with faults of their own;
// the audit checks each supplier's records against our orders) or carrier (= --no-suppliers).
//
// The engine is test/support/chaos/ (run.ts); this file reads the options and prints the report.
import { parseArgs } from "node:util";
import { CHAOS_DEFAULTS, type ChaosOptions } from "../test/support/chaos/options.ts";
import { formatChaosReport, runChaos } from "../test/support/chaos/run.ts";
import { stopClustersOnExit } from "../test/support/cluster.ts";

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`--${name}: expected a whole number, got ${raw}`);
  return value;
}

function profilesOption(raw: string | undefined): ChaosOptions["profiles"] {
  if (raw === undefined) return CHAOS_DEFAULTS.profiles;
  if (raw !== "http" && raw !== "es2plus") throw new Error(`--profiles: http or es2plus, got ${raw}`);
  return raw;
}

/** `--suppliers carrier` (or `--no-suppliers`): the carrier's packages only; `all`: the default. */
function suppliersOption(raw: string | undefined, none: boolean): boolean {
  if (none) return false;
  if (raw === undefined || raw === "all") return CHAOS_DEFAULTS.suppliers;
  if (raw === "carrier") return false;
  throw new Error(`--suppliers: all or carrier, got ${raw}`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seed: { type: "string" },
      duration: { type: "string" },
      operations: { type: "string" },
      kills: { type: "string" },
      "postgres-restarts": { type: "string" },
      clients: { type: "string" },
      "drain-timeout": { type: "string" },
      "no-crash-points": { type: "boolean" },
      profiles: { type: "string" },
      suppliers: { type: "string" },
      "no-suppliers": { type: "boolean" },
    },
  });
  const options: ChaosOptions = {
    seed: positive("seed", values.seed, Math.floor(Math.random() * 2 ** 31)),
    duration_s: positive("duration", values.duration, CHAOS_DEFAULTS.duration_s),
    operations: positive("operations", values.operations, CHAOS_DEFAULTS.operations),
    kills: positive("kills", values.kills, CHAOS_DEFAULTS.kills),
    postgres_restarts: positive(
      "postgres-restarts",
      values["postgres-restarts"],
      CHAOS_DEFAULTS.postgres_restarts,
    ),
    clients: Math.max(1, positive("clients", values.clients, CHAOS_DEFAULTS.clients)),
    drain_timeout_s: positive("drain-timeout", values["drain-timeout"], CHAOS_DEFAULTS.drain_timeout_s),
    crash_points: values["no-crash-points"] !== true,
    profiles: profilesOption(values.profiles),
    suppliers: suppliersOption(values.suppliers, values["no-suppliers"] === true),
    log: (line) => console.log(line),
  };
  const report = await runChaos(options);
  console.log(formatChaosReport(report));
  return report.passed ? 0 : 1;
}

if (import.meta.main) {
  stopClustersOnExit();
  process.exitCode = await main();
}
