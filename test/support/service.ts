// The real service as a child process (src/main.ts), for tests that need what only a real
// process has: its own worker, a real port, and a death by SIGKILL. The chaos and soak engines
// and the benchmark start it the same way.
import type { ChildProcess } from "node:child_process";
import { spawnNode, waitForHttp, waitForOutput } from "./processes.ts";

export type ServiceProcess = {
  url: string;
  process: ChildProcess;
  pid: number;
  /** JSON log lines seen so far (stdout), for assertions on what is and is not logged. */
  logs: () => string;
  stop: () => Promise<void>;
  kill: () => Promise<void>;
};

export type ServiceProcessOptions = {
  /** The checkout whose src/main.ts runs (this one by default). */
  cwd?: string;
  node_flags?: string[];
  log_file?: string;
  /** SIGKILL after this long when SIGTERM is not enough; without it stop() waits for the exit. */
  stop_grace_ms?: number;
};

const START_TIMEOUT_MS = 30_000;
const LISTENING = /"port":(\d+),"address"/;

/**
 * Starts src/main.ts with `env`. With PORT=0 (the default) it is ready once it logs its port;
 * with a fixed PORT (a quiet LOG_LEVEL hides that line) once GET /readyz answers.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  options: ServiceProcessOptions = {},
): Promise<ServiceProcess> {
  const running = spawnNode({
    name: "service",
    script: "src/main.ts",
    env: { PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    cwd: options.cwd,
    node_flags: options.node_flags,
    log_file: options.log_file,
  });
  const fixed = env.PORT !== undefined && env.PORT !== "0";
  let port = Number(env.PORT);
  if (fixed) await waitForHttp(running, `http://127.0.0.1:${port}/readyz`, START_TIMEOUT_MS);
  else port = Number(await waitForOutput(running, LISTENING, START_TIMEOUT_MS));
  return {
    url: `http://127.0.0.1:${port}`,
    process: running.process,
    pid: running.pid,
    logs: running.output,
    stop: async () => {
      await running.stop(options.stop_grace_ms);
    },
    kill: async () => {
      await running.kill();
    },
  };
}
