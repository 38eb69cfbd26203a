// A whole deployment for plain scripts (npm run chaos, npm run soak) and for tests alike: one
// PostgreSQL, the carrier simulator process, a real SMTP server and N API service processes,
// each a real child process that can be SIGKILLed and restarted. Unlike world.ts it does not use
// node:test's after(): the caller owns the cluster and calls stop().
//
// Without `databaseUrl` it starts its own embedded PostgreSQL on a free loopback port in a fresh
// temporary directory, migrates it and seeds the default catalog, as `npm start` does; stop()
// stops that PostgreSQL and removes the directory. With `databaseUrl` (e.g. a test file's own
// database cloned from the migrated template) it uses that database as it is.
import type { Kysely } from "kysely";
import type pg from "pg";
import { createKysely, createPool } from "../../src/db/pool.ts";
import type { Database } from "../../src/db/schema.ts";
import { type Es2PlusStock, startEs2PlusSide } from "./es2plus-side.ts";
import { createPartner as createPartnerFixture } from "./fixtures.ts";
import { startOwnPostgres } from "./postgres.ts";
import { type ServiceProcess, startServiceProcess } from "./service.ts";
import { type SimulatorProcess, startSimulatorProcess } from "./simulator.ts";
import type { SmdpProcess } from "./smdp.ts";
import { startSmtpServer, type TestSmtpServer } from "./smtp.ts";
import { type SupplierFakes, startSupplierFakes } from "./supplier-fakes.ts";

export type { Answer } from "./http.ts";
export { request, TransportError } from "./http.ts";
export { freePort } from "./ports.ts";
export type { ServiceProcess };

export const CLUSTER_ADMIN_TOKEN = "cluster-admin-token-0123456789";

export type ClusterOptions = {
  /** How many API processes to start (slots 0..services-1). */
  services: number;
  /** Use this database (already migrated and seeded) instead of starting an embedded PostgreSQL. */
  databaseUrl?: string;
  /** Extra environment for every API process (wins over the defaults below). */
  env?: Record<string, string>;
  /** Extra environment for the simulator process, e.g. { SIMULATOR_SLOW_MS: "2500" }. */
  simulatorEnv?: Record<string, string>;
  /** Profiles from the SM-DP+ simulator over ES2+ (CARRIER_PROFILES=es2plus), stocked for these packages. */
  es2plus?: Es2PlusStock;
  /**
   * Airalo's and eSIM Go's fakes as child processes (test/support/supplier-fakes.ts), the API
   * processes pointed at them by URL and credentials. Off: a supplier's package is served by the
   * sandbox's in-process fake on first use, whose faults the driver cannot reach.
   */
  suppliers?: boolean;
  log?: (message: string) => void;
};

export type Cluster = {
  databaseUrl: string;
  /** A small pool of the driver's own, for audits and waits. */
  pool: pg.Pool;
  db: Kysely<Database>;
  simulator: SimulatorProcess;
  /** The SM-DP+ simulator when profiles come from it, else null. */
  smdp: SmdpProcess | null;
  /** Airalo's and eSIM Go's fakes when the cluster started them (options.suppliers), else null. */
  suppliers: SupplierFakes | null;
  smtp: TestSmtpServer;
  /** The API process in each slot; null while a slot is down (killed and not yet restarted). */
  services: (ServiceProcess | null)[];
  /** The environment every API process gets. */
  env: Record<string, string>;
  /** Process id of the PostgreSQL postmaster when the cluster started its own, else null. */
  postgresPid: () => Promise<number | null>;
  /**
   * When the cluster started its own PostgreSQL: stops it (`fast` or `immediate`) and starts it
   * again on the same port (test/support/postgres.ts, restart), resolving with the performance.now()
   * at which it was back. Null on a database given by `databaseUrl`, which others may be using.
   */
  restartPostgres: ((mode: "fast" | "immediate", down_ms?: number) => Promise<number>) | null;
  /** URLs of the slots that are up right now. */
  liveUrls: () => string[];
  /** Starts (or restarts) the API process of `slot`; `extra` env is for this start only. */
  startService: (slot: number, extra?: Record<string, string>) => Promise<ServiceProcess>;
  /** SIGKILLs the process of `slot` (a crash, no shutdown) and leaves the slot down. */
  killService: (slot: number) => Promise<void>;
  /** Stops everything it started, in reverse order; safe to call twice. */
  stop: () => Promise<void>;
};

const DRIVER_POOL_MAX = 4;

/** Every cluster not yet stopped, so a script can stop them all when it is interrupted or crashes. */
const runningClusters = new Set<() => Promise<void>>();

/**
 * For plain scripts: on Ctrl-C, SIGTERM or an uncaught error, stop every cluster first (the
 * embedded PostgreSQL runs in a session of its own and would otherwise outlive the script).
 */
export function stopClustersOnExit(): void {
  let exiting = false;
  const exit = (why: string, code: number) => {
    if (exiting) return;
    exiting = true;
    console.error(why);
    void Promise.allSettled([...runningClusters].map((stop) => stop())).then(() => process.exit(code));
  };
  process.once("SIGINT", () => exit("interrupted: stopping the cluster", 130));
  process.once("SIGTERM", () => exit("terminated: stopping the cluster", 143));
  process.on("uncaughtException", (error) => exit(`uncaught: ${error.stack ?? error.message}`, 1));
  process.on("unhandledRejection", (error) =>
    exit(`unhandled rejection: ${(error as Error)?.stack ?? error}`, 1),
  );
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const log = options.log ?? (() => undefined);
  const stack: { name: string; close: () => Promise<unknown> }[] = [];
  const stopAll = async () => {
    runningClusters.delete(stopAll);
    for (const item of stack.splice(0).reverse()) {
      await item.close().catch((error: unknown) => log(`stopping ${item.name}: ${(error as Error).message}`));
    }
  };
  runningClusters.add(stopAll);
  try {
    let databaseUrl = options.databaseUrl ?? null;
    let postgresPid = async (): Promise<number | null> => null;
    let restartPostgres: Cluster["restartPostgres"] = null;
    if (databaseUrl === null) {
      const own = await startOwnPostgres({ log });
      stack.push({ name: "PostgreSQL", close: own.stop });
      databaseUrl = own.url;
      postgresPid = own.postmasterPid;
      restartPostgres = own.restart;
      log(`PostgreSQL ready at ${own.url.replace(/:[^:@/]+@/, ":***@")} in ${own.dataDir}`);
    }
    const pool = createPool(databaseUrl, DRIVER_POOL_MAX, "esim-cluster-driver");
    stack.push({ name: "driver pool", close: () => pool.end() });
    const db = createKysely<Database>(pool);

    const simulator = await startSimulatorProcess({ databaseUrl, env: options.simulatorEnv });
    stack.push({ name: "carrier simulator", close: () => simulator.stop() });
    const smtp = await startSmtpServer();
    stack.push({ name: "SMTP server", close: () => smtp.close() });
    const es2plus = options.es2plus ? await startEs2PlusSide(databaseUrl, pool, options.es2plus) : null;
    if (es2plus) stack.push({ name: "SM-DP+ simulator", close: es2plus.stop });
    const suppliers = options.suppliers ? await startSupplierFakes(databaseUrl) : null;
    if (suppliers) stack.push({ name: "supplier fakes", close: suppliers.stop });

    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      CARRIER_URL: simulator.url,
      CARRIER_API_KEY: simulator.apiKey,
      SMTP_URL: smtp.url,
      ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN,
      APP_ENV: "sandbox",
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
      AUTH_FAILURES_PER_MINUTE: "100000",
      // Chaos and soak refund many orders of few partners: the per-partner bound is not what they test.
      REFUNDS_PER_PARTNER_PER_HOUR: "100000",
      ...es2plus?.env,
      ...suppliers?.env,
      ...options.env,
    };
    const services: (ServiceProcess | null)[] = Array.from({ length: options.services }, () => null);
    const killService = async (slot: number) => {
      const running = services[slot];
      services[slot] = null;
      if (running) await running.kill();
    };
    const startService = async (slot: number, extra: Record<string, string> = {}) => {
      await killService(slot);
      const service = await startServiceProcess({ ...env, ...extra });
      services[slot] = service;
      return service;
    };
    stack.push({
      name: "API processes",
      close: async () => {
        for (const service of services.splice(0)) await service?.stop();
      },
    });
    for (let slot = 0; slot < options.services; slot++) await startService(slot);

    return {
      databaseUrl,
      pool,
      db,
      simulator,
      smdp: es2plus?.smdp ?? null,
      suppliers,
      smtp,
      services,
      env,
      postgresPid,
      restartPostgres,
      liveUrls: () => services.filter((s): s is ServiceProcess => s !== null).map((s) => s.url),
      startService,
      killService,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Creates a partner through the operator API and credits it once; returns its id and key. */
export async function createPartner(
  url: string,
  name: string,
  credit_minor: number,
): Promise<{ partner_id: string; api_key: string }> {
  const { partner_id, api_key } = await createPartnerFixture(url, {
    admin_token: CLUSTER_ADMIN_TOKEN,
    name,
    credit_minor,
  });
  return { partner_id, api_key };
}
