// The carrier a process talks to, started from its configuration: the HTTP carrier at CARRIER_URL
// or (sandbox) the built-in carrier simulator in-process, and with CARRIER_PROFILES=es2plus the
// SM-DP+ at ES2PLUS_URL or (sandbox without ES2PLUS_*) the built-in SM-DP+ simulator over mutual
// TLS. The service (src/main.ts) and the CLI (src/cli/carrier.ts) both start theirs here.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { Carrier } from "../carrier/carrier.ts";
import { HttpCarrier } from "../carrier/carrier-api/http-carrier.ts";
import { composeCarrier } from "../carrier/es2plus/compose.ts";
import { Es2PlusCarrier } from "../carrier/es2plus/es2plus-carrier.ts";
import { Es2PlusClient } from "../carrier/es2plus/es2plus-client.ts";
import { ES2PLUS_PATHS } from "../carrier/es2plus/messages.ts";
import type { Config } from "../config.ts";
import { startSimulator } from "../simulators/carrier/server.ts";
import { startSandboxSmdp } from "./sandbox-smdp.ts";

export type StartedCarrier = {
  carrier: Carrier;
  /** The built-in simulators learn the service's base URL once it listens (null: nothing built in). */
  pointCallbacksAt: ((base_url: string) => void) | null;
  /** What was started here, to close in reverse order. */
  closers: { name: string; close: () => Promise<unknown> }[];
};

export async function startCarrier(
  config: Config,
  pool: pg.Pool,
  log: (m: string) => void,
): Promise<StartedCarrier> {
  const closers: StartedCarrier["closers"] = [];
  const points: ((base_url: string) => void)[] = [];
  let bundles: HttpCarrier;
  if (config.carrier_url === null) {
    const apiKey = randomBytes(24).toString("base64url");
    const simulator = await startSimulator({
      pool,
      port: 0,
      host: "127.0.0.1",
      apiKey,
      latency_ms: 0,
      slow_ms: 15_000,
      log,
    });
    closers.push({ name: "carrier simulator", close: simulator.close });
    log(`sandbox carrier simulator started at ${simulator.url}`);
    points.push((base) => simulator.setCallback(`${base}/carrier/callbacks`, config.carrier_callback_token));
    bundles = new HttpCarrier({
      base_url: simulator.url,
      api_key: apiKey,
      timeout_ms: config.carrier_timeout_ms,
    });
  } else {
    const api_key = config.carrier_api_key ?? "";
    bundles = new HttpCarrier({
      base_url: config.carrier_url,
      api_key,
      timeout_ms: config.carrier_timeout_ms,
    });
  }
  if (config.carrier_profiles !== "es2plus" || config.es2plus !== null) {
    return { carrier: composeCarrier(config, pool, bundles), pointCallbacksAt: pointer(points), closers };
  }
  // config.ts allows ES2+ without its settings only in a sandbox with the built-in carrier.
  const smdp = await startSandboxSmdp(pool, config.data_dir, log);
  closers.push({ name: "SM-DP+ simulator", close: smdp.close });
  log(`sandbox SM-DP+ simulator started at ${smdp.url}`);
  const client = new Es2PlusClient({
    base_url: smdp.url,
    requester_id: smdp.requester_id,
    ...smdp.client,
    timeout_ms: config.carrier_timeout_ms,
  });
  closers.push({ name: "ES2+ client", close: async () => client.close() });
  points.push((base) =>
    smdp.setCallback(`${base}${ES2PLUS_PATHS.handleDownloadProgressInfo}`, config.es2plus_callback_token),
  );
  const deps = { pool, client, smdp_address: smdp.smdp_address, restock: smdp.restock };
  const carrier = new Es2PlusCarrier(deps, bundles, config.carrier_timeout_ms);
  return { carrier, pointCallbacksAt: pointer(points), closers };
}

function pointer(points: ((base_url: string) => void)[]): StartedCarrier["pointCallbacksAt"] {
  if (points.length === 0) return null;
  return (base_url) => {
    for (const point of points) point(base_url);
  };
}
