// The carrier simulator as a separate child process, for tests that need real network faults
// between the API and the carrier: a refused connection when it is stopped, a process killed
// mid-call, a timeout that is a real socket waiting.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import { after } from "node:test";
import type { FaultSettings } from "../../src/carrier/simulator/faults.ts";

export type { FaultSettings };

export type SimulatorAudit = {
  counts: { provisionings: number; topups: number; refusals: number };
  truncated: boolean;
  provisionings: { reference: string; iccid: string; created_at: string }[];
  topups: { reference: string; iccid: string; data_mb: number | null; created_at: string }[];
  refusals: { reference: string; kind: "profile" | "topup"; reason: string; created_at: string }[];
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
  /** SIGTERM and wait for the exit (SIGKILL after 5 s). Idempotent; resolves to the exit code. */
  stop: () => Promise<number | null>;
  /** SIGKILL, like a crash, and wait for the exit. */
  kill: () => Promise<number | null>;
  /** POST /control: change only the given fault settings; returns all of them. */
  control: (settings: Partial<FaultSettings>) => Promise<FaultSettings>;
  audit: (query?: { since?: string; limit?: number }) => Promise<SimulatorAudit>;
  /** GET /profiles/:iccid, or null when the simulator has no such profile. */
  profile: (iccid: string) => Promise<SimulatorProfile | null>;
  /** The last lines the process wrote to stderr, for assertion messages. */
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
};

const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;
const REQUEST_TIMEOUT_MS = 10_000;
const STDERR_TAIL_CHARS = 8_000;
const LISTENING = /^carrier simulator listening on (http:\/\/\S+)$/;

export async function startSimulatorProcess(
  options: StartSimulatorProcessOptions,
): Promise<SimulatorProcess> {
  const apiKey = options.apiKey ?? `sim_${randomBytes(16).toString("hex")}`;
  const child = spawn(process.execPath, ["src/carrier/simulator/main.ts"], {
    env: {
      ...process.env,
      SIMULATOR_PORT: "0",
      SIMULATOR_HOST: "127.0.0.1",
      SIMULATOR_EXIT_ON_STDIN_CLOSE: "1",
      ...options.env,
      DATABASE_URL: options.databaseUrl,
      CARRIER_API_KEY: apiKey,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await waitForListening(child, exited, () => stderr);
  // The test process must be free to exit even if nobody stops the simulator; closing our end of
  // its stdin then tells it to shut down.
  unrefChild(child);

  const simulator = handle({ url, apiKey, child, exited, stderr: () => stderr });
  if (options.stopAfterTests) after(() => simulator.stop());
  return simulator;
}

async function waitForListening(
  child: ChildProcessWithoutNullStreams,
  exited: Promise<number | null>,
  stderr: () => string,
): Promise<string> {
  const lines = createInterface({ input: child.stdout });
  const listening = new Promise<string>((resolve) => {
    lines.on("line", (line) => {
      const match = LISTENING.exec(line.trim());
      if (match) resolve(match[1]!);
    });
  });
  const failed = exited.then((code) => {
    throw new Error(`carrier simulator exited with code ${code} before listening:\n${stderr()}`);
  });
  const timer = AbortSignal.timeout(START_TIMEOUT_MS);
  const timedOut = new Promise<never>((_, reject) =>
    timer.addEventListener("abort", () =>
      reject(new Error(`carrier simulator did not listen within ${START_TIMEOUT_MS} ms:\n${stderr()}`)),
    ),
  );
  try {
    return await Promise.race([listening, failed, timedOut]);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  } finally {
    lines.close();
    child.stdout.resume();
  }
}

function unrefChild(child: ChildProcessWithoutNullStreams): void {
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    (stream as unknown as { unref?: () => void }).unref?.();
  }
}

function handle(parts: {
  url: string;
  apiKey: string;
  child: ChildProcessWithoutNullStreams;
  exited: Promise<number | null>;
  stderr: () => string;
}): SimulatorProcess {
  const { url, apiKey, child, exited } = parts;
  let stopping: Promise<number | null> | null = null;
  const request = (method: string, path: string, body?: object) =>
    simulatorRequest(url, apiKey, method, path, body);
  return {
    url,
    apiKey,
    process: child,
    stderr: parts.stderr,
    stop: () => {
      stopping ??= terminate(child, exited);
      return stopping;
    },
    kill: () => {
      child.ref();
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      stopping ??= exited;
      return exited;
    },
    control: (settings) => request("POST", "/control", settings) as Promise<FaultSettings>,
    audit: (query = {}) => {
      const search = new URLSearchParams();
      if (query.since !== undefined) search.set("since", query.since);
      if (query.limit !== undefined) search.set("limit", String(query.limit));
      return request("GET", `/audit?${search}`) as Promise<SimulatorAudit>;
    },
    profile: async (iccid) => {
      const response = await fetch(`${url}/profiles/${encodeURIComponent(iccid)}`, {
        headers: { authorization: `Bearer ${apiKey}` },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      if (response.status === 404) return null;
      if (!response.ok) throw new Error(`GET /profiles/${iccid}: HTTP ${response.status}`);
      return (await response.json()) as SimulatorProfile;
    },
  };
}

async function terminate(child: ChildProcessWithoutNullStreams, exited: Promise<number | null>) {
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  // Unref'd at start: ref it again so this process waits for the exit it is awaiting.
  child.ref();
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

async function simulatorRequest(url: string, apiKey: string, method: string, path: string, body?: object) {
  const response = await fetch(url + path, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
  return JSON.parse(text) as unknown;
}
