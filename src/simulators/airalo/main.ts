// `npm run simulator:airalo`: the Airalo fake as a process of its own, so tests and the sandbox
// see real network faults (refused connections, a process killed mid-call) between us and Airalo.
//
// Environment (every default written here):
//   DATABASE_URL                  required; state lives in its `airalo_sim` schema
//   AIRALO_SIM_CLIENT_ID          sandbox-client; the one client_id POST /v2/token accepts
//   AIRALO_SIM_CLIENT_SECRET      sandbox-secret-0000; its client_secret (also signs webhooks)
//   AIRALO_SIM_CONTROL_KEY        the client secret; bearer key of /control
//   AIRALO_SIM_PORT               3200; 0 picks an ephemeral port
//   AIRALO_SIM_HOST               127.0.0.1
//   AIRALO_SIM_TLS_CERT           unset; with AIRALO_SIM_TLS_KEY, PEM files: serve HTTPS
//   AIRALO_SIM_TLS_KEY            unset
//   AIRALO_SIM_TOKEN_TTL_S        31622400 (the docs' expires_in, a year)
//   AIRALO_SIM_WEBHOOK_URL        unset; where webhooks go when nothing is opted in for their type
//   AIRALO_SIM_CREDIT_USD         100000; the partner's Airalo credit at first start
//   AIRALO_SIM_SMDP_ADDRESS       rsp.airalo-sim.test; the eSIMs' `lpa`
//   AIRALO_SIM_LATENCY_MS         0; added to every Airalo call
//   SIMULATOR_EXIT_ON_STDIN_CLOSE unset; "1" makes the process exit when its stdin closes
//
// Prints exactly one line to stdout once listening: `airalo fake listening on <url>`.
import { readFileSync } from "node:fs";
import { createPool } from "../../db/pool.ts";
import { type Env, integer, required, runSimulator, serveUntilStopped } from "../process.ts";
import { startAiralo } from "./server.ts";

const DB_POOL_MAX = 10;

function tls(env: Env): { cert: string; key: string } | null {
  const cert = env.AIRALO_SIM_TLS_CERT?.trim();
  const key = env.AIRALO_SIM_TLS_KEY?.trim();
  if (!cert && !key) return null;
  if (!cert || !key) throw new Error("AIRALO_SIM_TLS_CERT and AIRALO_SIM_TLS_KEY go together");
  return { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") };
}

async function main(env: Env): Promise<void> {
  const client_secret = env.AIRALO_SIM_CLIENT_SECRET?.trim() || "sandbox-secret-0000";
  const options = {
    port: integer(env, "AIRALO_SIM_PORT", 3200, 0, 65535),
    host: env.AIRALO_SIM_HOST?.trim() || "127.0.0.1",
    client_id: env.AIRALO_SIM_CLIENT_ID?.trim() || "sandbox-client",
    client_secret,
    control_key: env.AIRALO_SIM_CONTROL_KEY?.trim() || client_secret,
    token_ttl_s: integer(env, "AIRALO_SIM_TOKEN_TTL_S", 31_622_400, 1, 315_360_000),
    tls: tls(env),
    webhook_url: env.AIRALO_SIM_WEBHOOK_URL?.trim() || null,
    initial_credit_usd: integer(env, "AIRALO_SIM_CREDIT_USD", 100_000, 0, 100_000_000),
    smdp_address: env.AIRALO_SIM_SMDP_ADDRESS?.trim() || "rsp.airalo-sim.test",
    latency_ms: integer(env, "AIRALO_SIM_LATENCY_MS", 0, 0, 600_000),
  };
  const pool = createPool(required(env, "DATABASE_URL"), DB_POOL_MAX, "airalo-fake");
  await serveUntilStopped(env, "airalo fake", pool, () =>
    startAiralo({ ...options, pool, log: (message) => console.error(message) }),
  );
}

await runSimulator("airalo fake", main);
