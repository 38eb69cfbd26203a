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
//
// The engine is test/support/soak/ (run.ts); this file reads the options.
import { parseArgs } from "node:util";
import { stopClustersOnExit } from "../test/support/cluster.ts";
import { runSoak } from "../test/support/soak/run.ts";

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
  const passed = await runSoak({
    duration_s: whole("duration", values.duration, 300, 1),
    rate: whole("rate", values.rate, 40, 1),
    max_in_flight: whole("max-in-flight", values["max-in-flight"], 64, 1),
    carrier_latency_ms: whole("carrier-latency", values["carrier-latency"], 50, 0),
    seed: whole("seed", values.seed, Math.floor(Math.random() * 2 ** 31), 0),
    log: (line) => console.log(line),
  });
  process.exitCode = passed ? 0 : 1;
}
