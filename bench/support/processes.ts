// The processes a benchmark run starts: the carrier simulator, the service, the bare server.
// Each is a real process of the same Node binary as the harness (Node 24, through npm), with its
// output in a log file under the run's temporary directory.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import net from "node:net";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";

const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

export type Running = {
  name: string;
  pid: number;
  url: string;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process has exited. */
  stop: () => Promise<void>;
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

type SpawnOptions = {
  name: string;
  script: string;
  env: Record<string, string>;
  log_dir: string;
  /** Extra Node flags (--inspect); the service and the bare server otherwise run alike. */
  node_flags?: string[];
  /** The checkout whose src/ runs (the harness's own by default; another one for an A/B run). */
  cwd?: string;
};

function spawnNode(options: SpawnOptions): { child: ChildProcess; output: () => string } {
  const log = createWriteStream(path.join(options.log_dir, `${options.name}.log`));
  const child = spawn(process.execPath, [...(options.node_flags ?? []), options.script], {
    cwd: options.cwd ?? process.cwd(),
    env: { ...process.env, ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let tail = "";
  const keep = (chunk: Buffer) => {
    log.write(chunk);
    tail = (tail + chunk.toString("utf8")).slice(-8_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  child.once("exit", () => log.end());
  return { child, output: () => tail };
}

function stopper(child: ChildProcess): () => Promise<void> {
  const exited = child.exitCode !== null ? Promise.resolve() : once(child, "exit").then(() => undefined);
  let stopping: Promise<void> | null = null;
  return () => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };
}

/** Waits for a line matching `pattern` on the process's output; returns its first group. */
async function waitForLine(
  name: string,
  child: ChildProcess,
  output: () => string,
  pattern: RegExp,
): Promise<string> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const match = pattern.exec(output());
    if (match) return match[1]!;
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${output()}`);
    await delay(50);
  }
  child.kill("SIGKILL");
  throw new Error(`${name} did not start within ${START_TIMEOUT_MS} ms:\n${output()}`);
}

async function waitForHttp(name: string, child: ChildProcess, output: () => string, url: string) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${output()}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(1_000) })
      .then((response) => response.ok)
      .catch(() => false);
    if (ok) return;
    await delay(100);
  }
  child.kill("SIGKILL");
  throw new Error(`${name} was not ready at ${url} within ${START_TIMEOUT_MS} ms:\n${output()}`);
}

export async function startSimulator(options: {
  database_url: string;
  api_key: string;
  log_dir: string;
  cwd: string;
}): Promise<Running> {
  const { child, output } = spawnNode({
    name: "simulator",
    script: "src/carrier/simulator/main.ts",
    log_dir: options.log_dir,
    cwd: options.cwd,
    env: {
      DATABASE_URL: options.database_url,
      CARRIER_API_KEY: options.api_key,
      SIMULATOR_PORT: "0",
      SIMULATOR_HOST: "127.0.0.1",
      SIMULATOR_LATENCY_MS: "0",
      // If the harness dies, the simulator follows it.
      SIMULATOR_EXIT_ON_STDIN_CLOSE: "1",
    },
  });
  const url = await waitForLine("carrier simulator", child, output, /listening on (http:\/\/\S+)/);
  return { name: "simulator", pid: child.pid!, url, stop: stopper(child) };
}

export async function startService(options: {
  env: Record<string, string>;
  log_dir: string;
  node_flags: string[];
  cwd: string;
}): Promise<Running> {
  const port = await freePort();
  const { child, output } = spawnNode({
    name: "service",
    script: "src/main.ts",
    log_dir: options.log_dir,
    cwd: options.cwd,
    node_flags: options.node_flags,
    env: { ...options.env, PORT: String(port), HOST: "127.0.0.1" },
  });
  const url = `http://127.0.0.1:${port}`;
  // LOG_LEVEL=warn hides the "listening" line: readiness is /readyz (the database answers).
  await waitForHttp("service", child, output, `${url}/readyz`);
  return { name: "service", pid: child.pid!, url, stop: stopper(child) };
}

export async function startBareServer(options: {
  body_file: string;
  log_dir: string;
  node_flags: string[];
}): Promise<Running> {
  const { child, output } = spawnNode({
    name: "bare-server",
    script: "bench/bare-server.ts",
    log_dir: options.log_dir,
    node_flags: options.node_flags,
    env: { BARE_BODY_FILE: options.body_file, PORT: "0", HOST: "127.0.0.1" },
  });
  const port = await waitForLine("bare server", child, output, /listening on (\d+)/);
  return { name: "bare-server", pid: child.pid!, url: `http://127.0.0.1:${port}`, stop: stopper(child) };
}
