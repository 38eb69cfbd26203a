// The carrier a process talks to, started from its configuration: the HTTP carrier at CARRIER_URL
// or (sandbox) the built-in carrier simulator in-process, and with CARRIER_PROFILES=es2plus the
// SM-DP+ at ES2PLUS_URL or (sandbox without ES2PLUS_*) the built-in SM-DP+ simulator over mutual
// TLS; beside it the wholesale suppliers, Airalo and eSIM Go, each at its URL with its credentials
// or (sandbox, URL unset) its built-in fake in-process (supplier-endpoints.ts). All behind one
// router (src/carrier/route-by-supplier.ts) that sends each order's calls to its supplier. A
// supplier without its credentials (production) is simply not configured: its packages are refused
// before any order, top-up or refund is created (503, nothing charged), orders already sent to it
// stay pending until it is configured again, and the carrier's are served as ever. The service (src/main.ts) and
// the CLI (src/cli/carrier.ts) both start theirs here.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { AiraloCarrier } from "../carrier/airalo/airalo-carrier.ts";
import type { Carrier, PackageSupplier } from "../carrier/carrier.ts";
import { HttpCarrier } from "../carrier/carrier-api/http-carrier.ts";
import { composeCarrier } from "../carrier/es2plus/compose.ts";
import { Es2PlusCarrier } from "../carrier/es2plus/es2plus-carrier.ts";
import { Es2PlusClient } from "../carrier/es2plus/es2plus-client.ts";
import { ES2PLUS_PATHS } from "../carrier/es2plus/messages.ts";
import { EsimGoCarrier } from "../carrier/esimgo/esimgo-carrier.ts";
import { type NotConfiguredReasons, SupplierRouter } from "../carrier/route-by-supplier.ts";
import type { Config } from "../config.ts";
import { startSimulator } from "../simulators/carrier/server.ts";
import { startSandboxSmdp } from "./sandbox-smdp.ts";
import { StartOnFirstUse } from "./start-on-first-use.ts";
import { openAiraloEndpoint, openEsimGoEndpoint, SupplierNotConfigured } from "./supplier-endpoints.ts";

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
  const own = await startOwnCarrier(config, pool, log);
  try {
    const why: NotConfiguredReasons = {};
    const airalo = await startAiraloCarrier(config, pool, log, own.closers, why);
    const esimgo = await startEsimGoCarrier(config, pool, log, own.closers, why);
    const carrier = new SupplierRouter({ carrier: own.carrier, airalo, esimgo }, why, log);
    return { ...own, carrier };
  } catch (error) {
    for (const closer of [...own.closers].reverse()) await closer.close().catch(() => undefined);
    throw error;
  }
}

type Closers = StartedCarrier["closers"];

/**
 * A sandbox supplier without a URL is its built-in fake, started at its first use
 * (start-on-first-use.ts). The adapter's operation_ms depends on its timeout only: read from one
 * built at a placeholder address, which sends nothing.
 */
function onFirstUse(
  name: string,
  supplier: PackageSupplier,
  build: (endpoint: string) => Carrier,
  open: () => Promise<{ carrier: Carrier; close: () => Promise<void> }>,
  closers: Closers,
): Carrier {
  const lazy = new StartOnFirstUse(name, supplier, build("http://127.0.0.1:9").operation_ms, open);
  closers.push({ name, close: () => lazy.close() });
  return lazy;
}

/** Airalo's adapter, or null (the reason kept for its refusals) when it is not configured. */
async function startAiraloCarrier(
  config: Config,
  pool: pg.Pool,
  log: (m: string) => void,
  closers: Closers,
  why: NotConfiguredReasons,
): Promise<Carrier | null> {
  const timeout_ms = config.supplier_timeout_ms;
  const in_flight_ms = config.supplier_in_flight_ms;
  const open = async () => {
    const { close, ...endpoint } = await openAiraloEndpoint(config, pool, log);
    return { carrier: new AiraloCarrier({ pool, timeout_ms, in_flight_ms, ...endpoint }), close };
  };
  if (config.airalo_api_url === null && config.app_env === "sandbox") {
    const placeholder = (base_url: string) =>
      new AiraloCarrier({ pool, timeout_ms, base_url, client_id: "-", client_secret: "-" });
    return onFirstUse("Airalo simulation", "airalo", placeholder, open, closers);
  }
  try {
    const { carrier, close } = await open();
    closers.push({ name: "Airalo", close });
    return carrier;
  } catch (error) {
    if (!(error instanceof SupplierNotConfigured)) throw error;
    why.airalo = error.message;
    log(`Airalo is not configured: ${error.message}; its packages are refused at purchase`);
    return null;
  }
}

/** eSIM Go's adapter, or null (the reason kept for its refusals) when it is not configured. */
async function startEsimGoCarrier(
  config: Config,
  pool: pg.Pool,
  log: (m: string) => void,
  closers: Closers,
  why: NotConfiguredReasons,
): Promise<Carrier | null> {
  const timeout_ms = config.supplier_timeout_ms;
  const in_flight_ms = config.supplier_in_flight_ms;
  const open = async () => {
    const { close, ...endpoint } = await openEsimGoEndpoint(config, pool, log);
    return { carrier: new EsimGoCarrier({ pool, timeout_ms, in_flight_ms, ...endpoint }), close };
  };
  if (config.esimgo_api_url === null && config.app_env === "sandbox") {
    const placeholder = (base_url: string) => new EsimGoCarrier({ pool, timeout_ms, base_url, api_key: "-" });
    return onFirstUse("eSIM Go simulation", "esimgo", placeholder, open, closers);
  }
  try {
    const { carrier, close } = await open();
    closers.push({ name: "eSIM Go", close });
    return carrier;
  } catch (error) {
    if (!(error instanceof SupplierNotConfigured)) throw error;
    why.esimgo = error.message;
    log(`eSIM Go is not configured: ${error.message}; its packages are refused at purchase`);
    return null;
  }
}

/** The carrier protocol's (and ES2+'s) side, as before suppliers. */
async function startOwnCarrier(
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
