// Stopping `npm start` by every documented means drains and stops cleanly (issue 37): SIGTERM to
// npm (a supervisor that knows only npm's pid), SIGTERM to the node process, SIGINT to the whole
// process group (Ctrl-C, pressed twice: npm passes each on too), and npm killed outright (the
// node process notices its parent gone). Each time a purchase is held at the carrier (a proxy in
// front of the carrier simulator) until the stop has begun; it must still answer 200, completed,
// and then npm, node and the embedded PostgreSQL must all be gone. One data directory serves every
// round, and a last start sends every confirmation email: nothing was lost.
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { createTestDatabase } from "./support/db.ts";
import { startFaultProxy } from "./support/fault-proxy.ts";
import { createCart, createPartner, submitCart } from "./support/fixtures.ts";
import { freePort } from "./support/ports.ts";
import { startSimulatorProcess } from "./support/simulator.ts";
import { waitFor } from "./support/world.ts";

const ADMIN_TOKEN = "signals-admin-token-0123456789";
/** Bounds every wait below; a start-up includes the embedded PostgreSQL's (initdb the first time). */
const WAIT_MS = 60_000;

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = await startFaultProxy(simulator.url);
const data_dir = await mkdtemp(path.join(os.tmpdir(), "signals-"));
// As root, postgres runs as the `postgres` user, which must be able to enter the directory.
await chmod(data_dir, 0o755);
const pg_dir = path.join(data_dir, "pg");
const env = {
  PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "info",
  DATA_DIR: data_dir,
  EMBEDDED_PG_PORT: String(await freePort()),
  DATABASE_URL: "",
  ADMIN_TOKEN,
  CARRIER_URL: carrier.url,
  CARRIER_API_KEY: simulator.apiKey,
  // The held call must not time out however slow the machine; the resolver waits longer still.
  CARRIER_TIMEOUT_MS: "60000",
  RESOLVE_AFTER_MS: "65000",
};

type NpmStart = {
  npm: ChildProcessWithoutNullStreams;
  /** The node process serving (its pid from its own log line). */
  node_pid: number;
  url: string;
  output: () => string;
  npm_exit: Promise<number | null>;
};

/** `npm start` in a process group of its own, as a terminal or a supervisor would run it. */
async function npmStart(): Promise<NpmStart> {
  const npm = spawn("npm", ["start"], { env: { ...process.env, ...env }, detached: true });
  let output = "";
  npm.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  npm.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const npm_exit = new Promise<number | null>((resolve) => npm.once("exit", (code) => resolve(code)));
  const listening = await waitFor(
    "the service listening",
    async () => /"port":(\d+),"address".*?"pid":(\d+)/.exec(output),
    WAIT_MS,
  ).catch((error: Error) => {
    process.kill(-npm.pid!, "SIGKILL");
    throw new Error(`${error.message}\n${output.slice(-3000)}`);
  });
  return {
    npm,
    node_pid: Number(listening[2]),
    url: `http://127.0.0.1:${listening[1]}`,
    output: () => output,
    npm_exit,
  };
}

/** Whether `pid` is a live process (a zombie nobody has reaped yet is not). */
async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  return stat !== null && !/^\d+ \(.*\) [ZX]/s.test(stat);
}

/** The pids of live processes whose command line names `dir` (a postgres on that data directory). */
async function processesUsing(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.split("\0").includes(dir) && (await alive(Number(entry)))) pids.push(Number(entry));
  }
  return pids;
}

let partner: { api_key: string } | null = null;
let purchases = 0;

/**
 * Starts `npm start`, holds a purchase at the carrier, stops the service with `stop`, releases the
 * purchase once the service says it is shutting down, and checks the purchase completed and every
 * process is gone.
 */
async function purchaseAcrossStop(stop: (started: NpmStart) => unknown): Promise<number | null> {
  const started = await npmStart();
  try {
    partner ??= await createPartner(started.url, { admin_token: ADMIN_TOKEN, credit_minor: 100_000 });
    const cart = await createCart(started.url, partner.api_key);
    let release: () => void = () => undefined;
    const until = new Promise<void>((resolve) => (release = resolve));
    carrier.inject("POST", "/profiles", { kind: "hold", until });
    const held = carrier.seen("POST", "/profiles").length;
    const submitted = submitCart(started.url, partner.api_key, cart.cart_key);
    await waitFor(
      "the carrier call held",
      async () => carrier.seen("POST", "/profiles").length > held,
      WAIT_MS,
    );
    await stop(started);
    await waitFor("the drain begun", async () => /shutting down/.test(started.output()), WAIT_MS);
    release();
    const answer = await submitted;
    assert.equal(answer.status, 200, started.output().slice(-3000));
    assert.equal(answer.body.status, "completed");
    purchases += 1;
    await waitFor("the node process gone", async () => !(await alive(started.node_pid)), WAIT_MS).catch(
      (error: Error) => {
        throw new Error(`${error.message}\n${started.output().slice(-3000)}`);
      },
    );
    assert.match(started.output(), /"msg":"stopped"/, "the node process closed everything, then exited");
    assert.equal(existsSync(path.join(pg_dir, "postmaster.pid")), false, started.output().slice(-3000));
    assert.deepEqual(await processesUsing(pg_dir), [], "no postgres left on the data directory");
    return await started.npm_exit;
  } finally {
    // Whatever failed above, nothing of this round outlives it.
    if (await alive(started.node_pid)) process.kill(started.node_pid, "SIGKILL");
    for (const pid of await processesUsing(pg_dir)) process.kill(pid, "SIGKILL");
    if (started.npm.exitCode === null && started.npm.signalCode === null)
      process.kill(-started.npm.pid!, "SIGKILL");
  }
}

test("SIGTERM to npm's pid (a supervisor running `npm start`) drains the purchase in flight and stops node and its PostgreSQL", async () => {
  const code = await purchaseAcrossStop((started) => started.npm.kill("SIGTERM"));
  assert.equal(code, 0, "npm waited for node and passed on its clean exit");
});

test("SIGTERM to the node process under npm drains and stops everything", async () => {
  const code = await purchaseAcrossStop((started) => process.kill(started.node_pid, "SIGTERM"));
  assert.equal(code, 0);
});

test("Ctrl-C (SIGINT to the whole process group), pressed again during the drain, drains and stops everything", async () => {
  const code = await purchaseAcrossStop(async (started) => {
    process.kill(-started.npm.pid!, "SIGINT");
    await waitFor("the drain begun", async () => /shutting down/.test(started.output()), WAIT_MS);
    // Node's default action for a signal with no listener left is to exit at once, mid-drain.
    process.kill(-started.npm.pid!, "SIGINT");
    await waitFor("the second one heard", async () => /already stopping/.test(started.output()), WAIT_MS);
  });
  assert.equal(code, 0);
});

test("npm killed outright (SIGKILL): the node process notices its parent gone, drains and stops", async () => {
  const code = await purchaseAcrossStop((started) => started.npm.kill("SIGKILL"));
  assert.equal(code, null, "npm itself died at once");
});

test("every purchase made across a stop has its confirmation email after the next start", async () => {
  assert.ok(purchases > 0, "purchases were made above");
  const started = await npmStart();
  try {
    const mail = path.join(data_dir, "mail");
    const sent = await waitFor(
      "every confirmation email written",
      async () => {
        const names = (await readdir(mail).catch(() => [])).filter((name) => name.endsWith(".eml"));
        return names.length >= purchases && names;
      },
      WAIT_MS,
    );
    assert.equal(sent.filter((name) => name.startsWith("confirmation.")).length, purchases);
  } finally {
    process.kill(started.node_pid, "SIGTERM");
    assert.equal(await started.npm_exit, 0);
  }
  assert.deepEqual(await processesUsing(pg_dir), []);
});
