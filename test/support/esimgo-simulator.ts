// The eSIM Go fake (src/simulators/esimgo) as a separate child process, for tests that need real
// network faults between a client and the platform: a dropped connection, a process killed
// mid-call. Calls are plain HTTP in the documentation's wire format, never through an adapter.
import { randomBytes } from "node:crypto";
import { after } from "node:test";
import { type NodeChild, spawnNode, unref, waitForOutput } from "./processes.ts";

export type EsimGoProcess = {
  /** e.g. http://127.0.0.1:41234 (sandbox routes); the API is at `${url}/v2.4`. */
  url: string;
  base: string;
  apiKey: string;
  /** SIGTERM and wait for the exit. */
  stop: () => Promise<number | null>;
  /** SIGKILL, like a crash. */
  kill: () => Promise<number | null>;
  output: () => string;
};

const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;
const LISTENING = /^esimgo simulator listening on (http:\/\/\S+)$/m;

export async function startEsimGoProcess(options: {
  databaseUrl: string;
  env?: Record<string, string>;
  apiKey?: string;
  stopAfterTests?: boolean;
}): Promise<EsimGoProcess> {
  const apiKey = options.apiKey ?? `esimgo_${randomBytes(12).toString("hex")}`;
  const running: NodeChild = spawnNode({
    name: "esimgo simulator",
    script: "src/simulators/esimgo/main.ts",
    env: {
      ESIMGO_SIM_PORT: "0",
      ESIMGO_SIM_HOST: "127.0.0.1",
      SIMULATOR_EXIT_ON_STDIN_CLOSE: "1",
      ...options.env,
      DATABASE_URL: options.databaseUrl,
      ESIMGO_SIM_API_KEY: apiKey,
    },
    keep_chars: 8_000,
  });
  const url = await waitForOutput(running, LISTENING, START_TIMEOUT_MS);
  unref(running);
  const fake = {
    url,
    base: `${url}/v2.4`,
    apiKey,
    stop: () => running.stop(STOP_GRACE_MS),
    kill: running.kill,
    output: running.output,
  };
  if (options.stopAfterTests) after(() => fake.stop());
  return fake;
}
