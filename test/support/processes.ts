// Node child processes for tests, the chaos and soak engines and the benchmark: the service
// (service.ts), the carrier simulator (simulator.ts), the benchmark's bare server; and other programs
// the same way (spawnProcess: PgBouncer, pgbouncer.ts). Each Node one runs on
// the same Node binary as the caller (Node 24, through npm), its output kept for messages and
// assertions and, when asked, copied to a log file. Readiness is a line on its output or an HTTP
// probe; stopping is SIGTERM (then SIGKILL after a grace period, when one is given) or SIGKILL.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";

export type SpawnNodeOptions = {
  /** A name for messages: "service", "carrier simulator". */
  name: string;
  /** The entry point, relative to `cwd`. */
  script: string;
  /** Added to this process's environment. */
  env: Record<string, string>;
  /** The checkout whose code runs (this one by default; another for a before/after benchmark). */
  cwd?: string;
  /** Node flags before the script (--inspect=...). */
  node_flags?: string[];
  /** Copy everything the process writes (stdout and stderr) to this file. */
  log_file?: string;
  /** Keep only the last this many characters of output (everything when absent). */
  keep_chars?: number;
};

export type NodeChild = {
  name: string;
  process: ChildProcessWithoutNullStreams;
  pid: number;
  /** stdout and stderr as written so far (or their tail, with keep_chars). */
  output: () => string;
  /** Resolves to the exit code (null after a signal) once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM and wait for the exit; SIGKILL after `grace_ms` when given. Idempotent. */
  stop: (grace_ms?: number) => Promise<number | null>;
  /** SIGKILL, like a crash, and wait for the exit. */
  kill: () => Promise<number | null>;
};

export function spawnNode(options: SpawnNodeOptions): NodeChild {
  return spawnProcess({
    ...options,
    command: process.execPath,
    args: [...(options.node_flags ?? []), options.script],
  });
}

export type SpawnProcessOptions = Omit<SpawnNodeOptions, "script" | "node_flags" | "env"> & {
  /** The program (a path) and its arguments. */
  command: string;
  args: string[];
  env?: Record<string, string>;
};

/** Any program as spawnNode runs Node (a pgbouncer, say): output kept, stopped the same way. */
export function spawnProcess(options: SpawnProcessOptions): NodeChild {
  const child = spawn(options.command, options.args, {
    cwd: options.cwd ?? process.cwd(),
    env: { ...process.env, ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const log = options.log_file ? createWriteStream(options.log_file) : null;
  let output = "";
  const keep = (chunk: Buffer) => {
    log?.write(chunk);
    output += chunk.toString("utf8");
    if (options.keep_chars !== undefined) output = output.slice(-options.keep_chars);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  void exited.then(() => log?.end());
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  let stopping: Promise<number | null> | null = null;
  return {
    name: options.name,
    process: child,
    pid: child.pid!,
    output: () => output,
    exited,
    stop: (grace_ms) => {
      stopping ??= gone() ? exited : terminate(child, exited, grace_ms);
      return stopping;
    },
    kill: () => {
      // A process unref'd at start (unref()) is ref'd again: the caller waits for this exit.
      child.ref();
      if (!gone()) child.kill("SIGKILL");
      stopping ??= exited;
      return exited;
    },
  };
}

async function terminate(
  child: ChildProcessWithoutNullStreams,
  exited: Promise<number | null>,
  grace_ms: number | undefined,
): Promise<number | null> {
  child.ref();
  child.kill("SIGTERM");
  const timer = grace_ms === undefined ? null : setTimeout(() => child.kill("SIGKILL"), grace_ms);
  try {
    return await exited;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** Lets this process exit while the child still runs (the child watches its stdin to follow). */
export function unref(running: NodeChild): void {
  running.process.unref();
  for (const stream of [running.process.stdin, running.process.stdout, running.process.stderr]) {
    (stream as unknown as { unref?: () => void }).unref?.();
  }
}

/**
 * Waits for `pattern` on the process's output and returns its first group. Fails (and SIGKILLs
 * the process) when it exits first or after `timeout_ms`, with the output in the message.
 */
export async function waitForOutput(
  running: NodeChild,
  pattern: RegExp,
  timeout_ms: number,
): Promise<string> {
  const { process: child, name } = running;
  let onData: () => void = () => {};
  const found = new Promise<string>((resolve) => {
    onData = () => {
      const match = pattern.exec(running.output());
      if (match) resolve(match[1]!);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    onData();
  });
  const failed = running.exited.then((code) => {
    throw new Error(`${name} exited with ${code} before it was ready:\n${running.output()}`);
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${name} was not ready within ${timeout_ms} ms:\n${running.output()}`)),
      timeout_ms,
    );
  });
  try {
    return await Promise.race([found, failed, timedOut]);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  } finally {
    clearTimeout(timer);
    child.stdout.off("data", onData);
    child.stderr.off("data", onData);
    failed.catch(() => undefined);
  }
}

/** Polls `url` until it answers 2xx; fails (and SIGKILLs) when the process exits or after `timeout_ms`. */
export async function waitForHttp(running: NodeChild, url: string, timeout_ms: number): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (Date.now() < deadline) {
    if (running.process.exitCode !== null) {
      throw new Error(`${running.name} exited with ${running.process.exitCode}:\n${running.output()}`);
    }
    const ok = await fetch(url, { signal: AbortSignal.timeout(1_000) })
      .then((response) => response.ok)
      .catch(() => false);
    if (ok) return;
    await delay(100);
  }
  running.process.kill("SIGKILL");
  throw new Error(`${running.name} was not ready at ${url} within ${timeout_ms} ms:\n${running.output()}`);
}
