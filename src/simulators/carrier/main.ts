// `npm run simulator`: the sandbox carrier as a process of its own, so that tests and chaos runs
// see real network faults (refused connections, a process killed mid-call) between API and carrier.
//
// Environment (every default written here):
//   DATABASE_URL          required; state lives in its `carrier_sim` schema
//   CARRIER_API_KEY       required; the bearer token every call must carry (8+ characters)
//   SIMULATOR_PORT        3100; 0 picks an ephemeral port
//   SIMULATOR_HOST        127.0.0.1
//   SIMULATOR_LATENCY_MS  0; added to every carrier call
//   SIMULATOR_SLOW_MS     15000; how long slow@carrier.test and timeout_share calls sleep
//   SIMULATOR_CALLBACK_URL    unset; where eSIM signals are pushed (the service's /carrier/callbacks)
//   SIMULATOR_CALLBACK_TOKEN  unset; the bearer token sent with them (the service's CARRIER_CALLBACK_TOKEN)
//   SIMULATOR_TICK_MS     1000; how often bundles whose validity ran out are ended and signalled
//   SIMULATOR_EXIT_ON_STDIN_CLOSE  unset; "1" makes the process exit when its stdin closes,
//                         so a simulator spawned by a test never outlives the test process
//
// Prints exactly one line to stdout once listening: `carrier simulator listening on <url>`.
import { createPool } from "../../db/pool.ts";
import { type Env, integer, required, runSimulator, serveUntilStopped } from "../process.ts";
import { startSimulator } from "./server.ts";

const DB_POOL_MAX = 10;

async function main(env: Env): Promise<void> {
  const pool = createPool(required(env, "DATABASE_URL"), DB_POOL_MAX, "carrier-simulator");
  await serveUntilStopped(env, "carrier simulator", pool, () =>
    startSimulator({
      pool,
      apiKey: required(env, "CARRIER_API_KEY"),
      port: integer(env, "SIMULATOR_PORT", 3100, 0, 65535),
      host: env.SIMULATOR_HOST?.trim() || "127.0.0.1",
      latency_ms: integer(env, "SIMULATOR_LATENCY_MS", 0, 0, 600_000),
      slow_ms: integer(env, "SIMULATOR_SLOW_MS", 15_000, 0, 600_000),
      log: (message) => console.error(message),
      callback_url: env.SIMULATOR_CALLBACK_URL?.trim() || null,
      callback_token: env.SIMULATOR_CALLBACK_TOKEN?.trim() || null,
      tick_ms: integer(env, "SIMULATOR_TICK_MS", 1_000, 10, 3_600_000),
    }),
  );
}

await runSimulator("carrier simulator", main);
