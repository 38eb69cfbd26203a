// What both simulator processes (the carrier's `npm run simulator` and the SM-DP+'s
// `npm run smdp-simulator`) do around their server: read required settings, announce the one
// line tests wait for, stop cleanly on SIGTERM/SIGINT (or when stdin closes, for a process a test
// spawned), and report a failed start-up as exit code 1.
import type pg from "pg";

export type Env = Record<string, string | undefined>;

export function required(env: Env, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new Error(`${name} is required`);
  return value;
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new Error(`${name}: expected a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/**
 * Starts the server with its pool (ended if the start fails), prints `<name> listening on <url>`,
 * and closes both on SIGTERM/SIGINT, or when stdin closes with SIMULATOR_EXIT_ON_STDIN_CLOSE=1.
 */
export async function serveUntilStopped(
  env: Env,
  name: string,
  pool: pg.Pool,
  start: () => Promise<{ url: string; close: () => Promise<void> }>,
): Promise<void> {
  const server = await start().catch(async (error: unknown) => {
    await pool.end();
    throw error;
  });
  console.log(`${name} listening on ${server.url}`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    process.stdin.destroy();
    await server.close();
    await pool.end();
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  if (env.SIMULATOR_EXIT_ON_STDIN_CLOSE === "1") {
    process.stdin.once("close", stop);
    process.stdin.resume();
  }
}

/** Runs a simulator's main; a failed start-up is one line on stderr and exit code 1. */
export async function runSimulator(name: string, main: (env: Env) => Promise<void>): Promise<void> {
  try {
    await main(process.env);
  } catch (error) {
    console.error(`${name} failed to start: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
