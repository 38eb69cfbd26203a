// The carrier the CLI asks (only `orders settle` does): the service's CARRIER_URL, or in a
// sandbox without one, the simulator started in-process over the same database. The simulator
// keeps all its state in the database (carrier_sim), so this instance knows every reference the
// service's own simulator answered.
import { randomBytes } from "node:crypto";
import type { Carrier } from "../carrier/carrier.ts";
import { composeCarrier } from "../carrier/es2plus/compose.ts";
import { HttpCarrier } from "../carrier/http-carrier.ts";
import { startSimulator } from "../carrier/simulator/server.ts";
import type { Config } from "../config.ts";
import type { Pool } from "../db/pool.ts";

export async function withCarrier<T>(
  config: Config,
  pool: Pool,
  work: (carrier: Carrier) => Promise<T>,
): Promise<T> {
  const timeout_ms = config.carrier_timeout_ms;
  if (config.carrier_url !== null) {
    const api_key = config.carrier_api_key ?? "";
    const bundles = new HttpCarrier({ base_url: config.carrier_url, api_key, timeout_ms });
    return work(composeCarrier(config, pool, bundles));
  }
  const apiKey = randomBytes(24).toString("base64url");
  const simulator = await startSimulator({
    pool,
    port: 0,
    host: "127.0.0.1",
    apiKey,
    latency_ms: 0,
    slow_ms: 15_000,
    log: () => undefined,
  });
  try {
    return await work(new HttpCarrier({ base_url: simulator.url, api_key: apiKey, timeout_ms }));
  } finally {
    await simulator.close();
  }
}
