// `npm run simulator:esimgo`: the eSIM Go fake as a process of its own, so tests see real network
// faults (a dropped connection, a process killed mid-call) between our adapter and the platform.
//
// Environment (every default written here):
//   DATABASE_URL                  required; state lives in its `esimgo_sim` schema
//   ESIMGO_SIM_API_KEY            "esimgo-sandbox-key"; the X-API-Key every call must carry (8+ characters)
//   ESIMGO_SIM_PORT               3300; 0 picks an ephemeral port
//   ESIMGO_SIM_HOST               127.0.0.1
//   ESIMGO_SIM_LATENCY_MS         0; added to every API call
//   ESIMGO_SIM_RATE_LIMIT         10; requests per second per client address
//   ESIMGO_SIM_ASYNC_MS           5000; how long an order of more than 5 bundles stays "processing"
//   ESIMGO_SIM_BALANCE            1000.00; the organisation's balance when first created
//   ESIMGO_SIM_CURRENCY           USD; likewise
//   ESIMGO_SIM_REFUNDS_ENABLED    0; "1" enables refunds on the account when first created
//   ESIMGO_SIM_CALLBACK_URL       unset; where V3 usage callbacks are POSTed
//   ESIMGO_SIM_SIGNATURE_ENCODING base64; or hex (X-Signature-SHA256's encoding)
//   SIMULATOR_EXIT_ON_STDIN_CLOSE unset; "1" makes the process exit when its stdin closes
//
// Prints exactly one line to stdout once listening: `esimgo simulator listening on <url>`.

import { createPool } from "../../db/pool.ts";
import { type Env, integer, runSimulator, serveUntilStopped } from "../process.ts";
import { startEsimGoSimulator } from "./server.ts";
import { DEFAULT_SIGNATURE_ENCODING } from "./unconfirmed.ts";

const DB_POOL_MAX = 10;
const NAME = "esimgo simulator";

function money(env: Env, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d{1,9}(\.\d{1,2})?$/.test(raw))
    throw new Error(`${name}: expected an amount like 1000.00, got "${raw}"`);
  return Math.round(Number(raw) * 100);
}

function encoding(env: Env): "base64" | "hex" {
  const raw = env.ESIMGO_SIM_SIGNATURE_ENCODING?.trim() || DEFAULT_SIGNATURE_ENCODING;
  if (raw !== "base64" && raw !== "hex")
    throw new Error(`ESIMGO_SIM_SIGNATURE_ENCODING: base64 or hex, got "${raw}"`);
  return raw;
}

async function main(env: Env): Promise<void> {
  if (!env.DATABASE_URL?.trim()) throw new Error("DATABASE_URL is required");
  const pool = createPool(env.DATABASE_URL.trim(), DB_POOL_MAX, "esimgo-simulator");
  await serveUntilStopped(env, NAME, pool, () =>
    startEsimGoSimulator({
      pool,
      apiKey: env.ESIMGO_SIM_API_KEY?.trim() || "esimgo-sandbox-key",
      port: integer(env, "ESIMGO_SIM_PORT", 3300, 0, 65535),
      host: env.ESIMGO_SIM_HOST?.trim() || "127.0.0.1",
      latency_ms: integer(env, "ESIMGO_SIM_LATENCY_MS", 0, 0, 600_000),
      rate_limit_per_second: integer(env, "ESIMGO_SIM_RATE_LIMIT", 10, 1, 100_000),
      async_ms: integer(env, "ESIMGO_SIM_ASYNC_MS", 5_000, 0, 3_600_000),
      initial_balance_cents: money(env, "ESIMGO_SIM_BALANCE", 100_000),
      currency: env.ESIMGO_SIM_CURRENCY?.trim() || "USD",
      refunds_enabled: env.ESIMGO_SIM_REFUNDS_ENABLED?.trim() === "1",
      callback_url: env.ESIMGO_SIM_CALLBACK_URL?.trim() || null,
      signature_encoding: encoding(env),
      log: (message) => console.error(message),
    }),
  );
}

await runSimulator(NAME, main);
