// The carrier simulator as a separate child process, for tests that need real network faults
// between the API and the carrier: a refused connection when it is stopped, a process killed
// mid-call, a timeout that is a real socket waiting.
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { after } from "node:test";
import type { EsimSignal } from "../../src/carrier/carrier.ts";
import type { FaultSettings } from "../../src/simulators/carrier/faults.ts";
import { request } from "./http.ts";
import { type NodeChild, spawnNode, unref, waitForOutput } from "./processes.ts";

export type { EsimSignal, FaultSettings };

export type SimulatorAudit = {
  counts: { provisionings: number; topups: number; refusals: number; cancellations: number };
  truncated: boolean;
  provisionings: { reference: string; iccid: string; created_at: string }[];
  topups: { reference: string; iccid: string; data_mb: number | null; created_at: string }[];
  refusals: { reference: string; kind: "profile" | "topup"; reason: string; created_at: string }[];
  /** Refunds' cancels: a profile (by the reference that provisioned it) or a top-up's bundle alone. */
  cancellations: { reference: string; iccid: string; kind: "profile" | "bundle"; cancelled_at: string }[];
};

export type SimulatorProfile = {
  reference: string;
  iccid: string;
  smdp_address: string;
  activation_code: string;
  external_package_id: string;
  data_mb_total: number | null;
  validity_days: number;
  start_date: string | null;
  topups: { reference: string; data_mb: number | null; external_package_id: string }[];
};

export type SimulatorProcess = {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  apiKey: string;
  process: ChildProcessWithoutNullStreams;
  pid: number;
  /** SIGTERM and wait for the exit (SIGKILL after 5 s). Idempotent; resolves to the exit code. */
  stop: () => Promise<number | null>;
  /** SIGKILL, like a crash, and wait for the exit. */
  kill: () => Promise<number | null>;
  /** POST /control: change only the given fault settings; returns all of them. */
  control: (settings: Partial<FaultSettings>) => Promise<FaultSettings>;
  audit: (query?: { since?: string; limit?: number }) => Promise<SimulatorAudit>;
  /** GET /profiles/:iccid, or null when the simulator has no such profile. */
  profile: (iccid: string) => Promise<SimulatorProfile | null>;
  /** POST /sandbox/esims/:iccid/simulate on the simulator's control API: the carrier's new state. */
  simulate: (iccid: string, event: { event: string; data_mb?: number }) => Promise<EsimSignal>;
  /** GET /esims/:iccid: the carrier's current state of the eSIM (what the pull sync reads). */
  esimState: (iccid: string) => Promise<EsimSignal>;
  /** Where the simulator pushes its signals (null: nowhere), with the service's callback token. */
  pointCallbacksAt: (url: string | null, token?: string | null) => Promise<FaultSettings>;
  /** The last lines the process wrote (stdout and stderr), for assertion messages. */
  stderr: () => string;
};

export type StartSimulatorProcessOptions = {
  /** The database whose `carrier_sim` schema holds the simulator's state. */
  databaseUrl: string;
  /** Extra environment, e.g. { SIMULATOR_SLOW_MS: "300" }. */
  env?: Record<string, string>;
  /** Defaults to a fresh random key. */
  apiKey?: string;
  /**
   * Register stop() with node:test's after(). Off by default, because after() belongs to the
   * suite or test that is running when it is called. Without it, call stop() yourself; if you
   * forget, the simulator still exits when the test process does (it watches its stdin).
   */
  stopAfterTests?: boolean;
  /** The checkout whose simulator runs (this one by default; the benchmark may name another). */
  cwd?: string;
  /** Copy the process's output to this file. */
  log_file?: string;
};

const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;
const REQUEST_TIMEOUT_MS = 10_000;
const OUTPUT_TAIL_CHARS = 8_000;
const LISTENING = /^carrier simulator listening on (http:\/\/\S+)$/m;

export async function startSimulatorProcess(
  options: StartSimulatorProcessOptions,
): Promise<SimulatorProcess> {
  const apiKey = options.apiKey ?? `sim_${randomBytes(16).toString("hex")}`;
  const running = spawnNode({
    name: "carrier simulator",
    script: "src/simulators/carrier/main.ts",
    env: {
      SIMULATOR_PORT: "0",
      SIMULATOR_HOST: "127.0.0.1",
      SIMULATOR_EXIT_ON_STDIN_CLOSE: "1",
      ...options.env,
      DATABASE_URL: options.databaseUrl,
      CARRIER_API_KEY: apiKey,
    },
    cwd: options.cwd,
    log_file: options.log_file,
    keep_chars: OUTPUT_TAIL_CHARS,
  });
  const url = await waitForOutput(running, LISTENING, START_TIMEOUT_MS);
  // The test process must be free to exit even if nobody stops the simulator; closing our end of
  // its stdin then tells it to shut down.
  unref(running);

  const simulator = handle(url, apiKey, running);
  if (options.stopAfterTests) after(() => simulator.stop());
  return simulator;
}

function handle(url: string, apiKey: string, running: NodeChild): SimulatorProcess {
  const send = (method: string, path: string, body?: object) =>
    simulatorRequest(url, apiKey, method, path, body);
  return {
    url,
    apiKey,
    process: running.process,
    pid: running.pid,
    stderr: running.output,
    stop: () => running.stop(STOP_GRACE_MS),
    kill: running.kill,
    control: (settings) => send("POST", "/control", settings) as Promise<FaultSettings>,
    simulate: (iccid, event) =>
      send("POST", `/sandbox/esims/${encodeURIComponent(iccid)}/simulate`, event) as Promise<EsimSignal>,
    esimState: (iccid) => send("GET", `/esims/${encodeURIComponent(iccid)}`) as Promise<EsimSignal>,
    pointCallbacksAt: (callback_url, callback_token = null) =>
      send("POST", "/control", { callback_url, callback_token }) as Promise<FaultSettings>,
    audit: (query = {}) => {
      const search = new URLSearchParams();
      if (query.since !== undefined) search.set("since", query.since);
      if (query.limit !== undefined) search.set("limit", String(query.limit));
      return send("GET", `/audit?${search}`) as Promise<SimulatorAudit>;
    },
    profile: async (iccid) => {
      const path = `/profiles/${encodeURIComponent(iccid)}`;
      const answer = await request(url, "GET", path, { key: apiKey, timeout_ms: REQUEST_TIMEOUT_MS });
      if (answer.status === 404) return null;
      if (answer.status < 200 || answer.status > 299)
        throw new Error(`GET /profiles/${iccid}: HTTP ${answer.status}`);
      return answer.body as SimulatorProfile;
    },
  };
}

async function simulatorRequest(url: string, apiKey: string, method: string, path: string, body?: object) {
  const answer = await request(url, method, path, { key: apiKey, body, timeout_ms: REQUEST_TIMEOUT_MS });
  if (answer.status < 200 || answer.status > 299) {
    throw new Error(`${method} ${path}: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return answer.body as unknown;
}
