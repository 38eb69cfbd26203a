// The operator CLI as operators run it: a child process, with the environment given.
import { spawn } from "node:child_process";

/** One CLI run may take a few seconds (Node start, migrations check); none should take a minute. */
const CLI_TIMEOUT_MS = 60_000;

export type CliRun = { code: number | null; stdout: string; stderr: string };

export function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["src/cli/main.ts", ...args], {
      env: { ...process.env, ...env },
      timeout: CLI_TIMEOUT_MS,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
