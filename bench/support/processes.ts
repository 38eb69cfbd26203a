// The processes a benchmark run starts: the carrier simulator and the service (started as the
// tests start them, test/support/service.ts and simulator.ts) and the bare server. Each is a real
// process of the same Node binary as the harness, with its output in a log file under the run's
// temporary directory.
import path from "node:path";
import { spawnNode, waitForOutput } from "../../test/support/processes.ts";
import { startServiceProcess } from "../../test/support/service.ts";
import { startSimulatorProcess } from "../../test/support/simulator.ts";

export { freePort } from "../../test/support/ports.ts";

import { freePort } from "../../test/support/ports.ts";

const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

export type Running = {
  name: string;
  pid: number;
  url: string;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process has exited. */
  stop: () => Promise<void>;
};

export async function startSimulator(options: {
  database_url: string;
  api_key: string;
  log_dir: string;
  cwd: string;
}): Promise<Running> {
  const simulator = await startSimulatorProcess({
    databaseUrl: options.database_url,
    apiKey: options.api_key,
    cwd: options.cwd,
    log_file: path.join(options.log_dir, "simulator.log"),
    // If the harness dies, the simulator follows it (it watches its stdin).
    env: { SIMULATOR_LATENCY_MS: "0" },
  });
  return {
    name: "simulator",
    pid: simulator.pid,
    url: simulator.url,
    stop: async () => {
      await simulator.stop();
    },
  };
}

export async function startService(options: {
  env: Record<string, string>;
  log_dir: string;
  node_flags: string[];
  cwd: string;
  /** The log file's name under log_dir (service.log by default). */
  log_name?: string;
}): Promise<Running> {
  const port = await freePort();
  // LOG_LEVEL=warn hides the "listening" line: with a fixed port readiness is /readyz.
  const service = await startServiceProcess(
    { ...options.env, PORT: String(port), HOST: "127.0.0.1" },
    {
      cwd: options.cwd,
      node_flags: options.node_flags,
      log_file: path.join(options.log_dir, options.log_name ?? "service.log"),
      stop_grace_ms: STOP_GRACE_MS,
    },
  );
  return { name: "service", pid: service.pid, url: service.url, stop: service.stop };
}

/** A `ROLE=worker` service process: no HTTP, ready once it says so (its one info line). */
export async function startWorkerService(options: {
  env: Record<string, string>;
  log_dir: string;
  cwd: string;
}): Promise<Running> {
  const worker = spawnNode({
    name: "worker",
    script: "src/main.ts",
    env: { ...options.env, ROLE: "worker", LOG_LEVEL: "info" },
    cwd: options.cwd,
    log_file: path.join(options.log_dir, "worker.log"),
    keep_chars: 8_000,
  });
  await waitForOutput(worker, /"msg":"eSIM ordering (worker) running"/, START_TIMEOUT_MS);
  return {
    name: "worker",
    pid: worker.pid,
    url: "",
    stop: async () => {
      await worker.stop(STOP_GRACE_MS);
    },
  };
}

export async function startBareServer(options: {
  body_file: string;
  log_dir: string;
  node_flags: string[];
}): Promise<Running> {
  const bare = spawnNode({
    name: "bare server",
    script: "bench/bare-server.ts",
    env: { BARE_BODY_FILE: options.body_file, PORT: "0", HOST: "127.0.0.1" },
    node_flags: options.node_flags,
    log_file: path.join(options.log_dir, "bare-server.log"),
    keep_chars: 8_000,
  });
  const port = await waitForOutput(bare, /listening on (\d+)/, START_TIMEOUT_MS);
  return {
    name: "bare-server",
    pid: bare.pid,
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      await bare.stop(STOP_GRACE_MS);
    },
  };
}

/** The webhook receiver (bench/webhook-receiver.ts): answers every delivery 204 and counts them. */
export function startWebhookReceiver(options: { log_dir: string }): Promise<Running> {
  return startListener("webhook-receiver", "http", options.log_dir);
}

/** The mail relay (bench/mail-relay.ts): a real SMTP server accepting every message. */
export function startMailRelay(options: { log_dir: string }): Promise<Running> {
  return startListener("mail-relay", "smtp", options.log_dir);
}

/** A helper process `bench/<name>.ts` on loopback that prints `listening on <port>` when ready. */
async function startListener(name: string, scheme: string, log_dir: string): Promise<Running> {
  const child = spawnNode({
    name: name.replace("-", " "),
    script: `bench/${name}.ts`,
    env: { PORT: "0", HOST: "127.0.0.1" },
    node_flags: [],
    log_file: path.join(log_dir, `${name}.log`),
    keep_chars: 8_000,
  });
  const port = await waitForOutput(child, /listening on (\d+)/, START_TIMEOUT_MS);
  return {
    name,
    pid: child.pid,
    url: `${scheme}://127.0.0.1:${port}`,
    stop: async () => {
      await child.stop(STOP_GRACE_MS);
    },
  };
}

/** The credentials the harness gives the supplier fakes and the service (loopback only). */
export const FAKE_AIRALO = { client_id: "bench-airalo", client_secret: "bench-airalo-secret-0123456789" };
export const FAKE_ESIMGO_KEY = "bench-esimgo-key-0123456789";
/** The fakes' starting money, far above what any run spends (their defaults run out in seconds). */
const FAKE_CREDIT = "10000000";
/**
 * The eSIM Go fake's own limit per client address, above anything: the adapter's documented 10 a
 * second (src/carrier/esimgo/rate-limit.ts) is the one the bench measures with, as in production.
 */
const FAKE_ESIMGO_RATE_LIMIT = "100000";

/**
 * A supplier's fake (src/simulators/airalo, esimgo) as a process of its own, as the carrier
 * simulator is: its CPU is its own in the figures, not the service's. Latency 0.
 */
export async function startSupplierFake(options: {
  supplier: "airalo" | "esimgo";
  database_url: string;
  log_dir: string;
  cwd: string;
}): Promise<Running> {
  const { supplier } = options;
  const env: Record<string, string> =
    supplier === "airalo"
      ? {
          AIRALO_SIM_CLIENT_ID: FAKE_AIRALO.client_id,
          AIRALO_SIM_CLIENT_SECRET: FAKE_AIRALO.client_secret,
          AIRALO_SIM_PORT: "0",
          AIRALO_SIM_LATENCY_MS: "0",
          AIRALO_SIM_CREDIT_USD: FAKE_CREDIT,
        }
      : {
          ESIMGO_SIM_API_KEY: FAKE_ESIMGO_KEY,
          ESIMGO_SIM_PORT: "0",
          ESIMGO_SIM_LATENCY_MS: "0",
          ESIMGO_SIM_RATE_LIMIT: FAKE_ESIMGO_RATE_LIMIT,
          ESIMGO_SIM_BALANCE: FAKE_CREDIT,
        };
  const child = spawnNode({
    name: `${supplier} fake`,
    script: `src/simulators/${supplier}/main.ts`,
    env: { ...env, DATABASE_URL: options.database_url, SIMULATOR_EXIT_ON_STDIN_CLOSE: "1" },
    node_flags: [],
    cwd: options.cwd,
    log_file: path.join(options.log_dir, `${supplier}-fake.log`),
    keep_chars: 8_000,
  });
  const url = await waitForOutput(child, /listening on (http:\/\/\S+)/, START_TIMEOUT_MS);
  return {
    name: `${supplier}-fake`,
    pid: child.pid,
    url,
    stop: async () => {
      await child.stop(STOP_GRACE_MS);
    },
  };
}
