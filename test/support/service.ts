// The real service as a child process (src/main.ts), for tests that need what only a real
// process has: its own worker, a real port, and a death by SIGKILL.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";

export type ServiceProcess = {
  url: string;
  process: ChildProcess;
  /** JSON log lines seen so far (stdout), for assertions on what is and is not logged. */
  logs: () => string;
  stop: () => Promise<void>;
  kill: () => Promise<void>;
};

const START_TIMEOUT_MS = 30_000;

export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ["src/main.ts"], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), START_TIMEOUT_MS);
    const check = () => {
      const match = /"port":(\d+),"address"/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off("data", check);
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before listening:\n${output}`));
    });
  });
  const exited = once(child, "exit");
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await exited;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    process: child,
    logs: () => output,
    stop: () => end("SIGTERM"),
    kill: () => end("SIGKILL"),
  };
}
