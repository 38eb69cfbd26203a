// `npm start` on a fresh machine: an embedded PostgreSQL under DATA_DIR, a clean Ctrl-C that
// leaves no postgres process behind, and a restart that finds every committed write again.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { freePort } from "./support/ports.ts";
import { spawnNode, waitForOutput } from "./support/processes.ts";
import { startServiceProcess } from "./support/service.ts";
import { call } from "./support/world.ts";

test("Ctrl-C stops the service and its embedded PostgreSQL cleanly; a restart reuses the data", async () => {
  const data_dir = await mkdtemp(path.join(os.tmpdir(), "lifecycle-"));
  // As root, postgres runs as the `postgres` user, which must be able to enter the directory.
  await chmod(data_dir, 0o755);
  const env = {
    DATA_DIR: data_dir,
    EMBEDDED_PG_PORT: String(await freePort()),
    ADMIN_TOKEN: "lifecycle-admin-token-0123",
    DATABASE_URL: "",
  };
  const first = await startServiceProcess(env);
  const created = await call(first.url, "POST", "/admin/partners", {
    headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
    body: { name: "Survivor" },
  });
  assert.equal(created.status, 201);
  const packages = await call(first.url, "GET", "/v1/esim/destination/JP/packages", {
    key: created.body.api_key,
  });
  assert.equal(packages.status, 200, "the sandbox catalog was seeded");
  first.process.kill("SIGINT");
  const code = await new Promise<number | null>((resolve) =>
    first.process.once("exit", (exitCode) => resolve(exitCode)),
  );
  assert.equal(code, 0);
  assert.equal(existsSync(path.join(data_dir, "pg", "postmaster.pid")), false, first.logs().slice(-3000));
  assert.match(first.logs(), /shutting down/);

  const second = await startServiceProcess(env);
  try {
    const wallet = await call(second.url, "GET", "/v1/profile/wallet", { key: created.body.api_key });
    assert.equal(wallet.status, 200, "the partner and its key survived the restart");
  } finally {
    await second.stop();
  }
  assert.equal(existsSync(path.join(data_dir, "pg", "postmaster.pid")), false, second.logs().slice(-3000));
});

test("a SIGTERM during start-up waits for it, then stops the embedded PostgreSQL: nothing is orphaned", async () => {
  const data_dir = await mkdtemp(path.join(os.tmpdir(), "lifecycle-"));
  await chmod(data_dir, 0o755);
  const running = spawnNode({
    name: "service",
    script: "src/main.ts",
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      DATA_DIR: data_dir,
      EMBEDDED_PG_PORT: String(await freePort()),
      DATABASE_URL: "",
    },
  });
  // The database is up but the service is still migrating, seeding and starting its workers.
  await waitForOutput(running, /embedded PostgreSQL ready/, 30_000);
  running.process.kill("SIGTERM");
  assert.equal(await running.exited, 0, running.output().slice(-3000));
  assert.equal(existsSync(path.join(data_dir, "pg", "postmaster.pid")), false, running.output().slice(-3000));
});

/** The pids of live processes whose command line names `dir` (a postgres started on that data directory). */
async function processesUsing(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.split("\0").includes(dir)) pids.push(Number(entry));
  }
  return pids;
}

test("a start refused for an ES2PLUS_CA_FILE it cannot read exits non-zero, naming it, and stops its embedded PostgreSQL", async () => {
  const data_dir = await mkdtemp(path.join(os.tmpdir(), "lifecycle-"));
  await chmod(data_dir, 0o755);
  // Files that pass as PEM until the CA, which is missing: the refusal comes after the database started.
  const pem = path.join(data_dir, "client.pem");
  await writeFile(pem, "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
  const running = spawnNode({
    name: "service",
    script: "src/main.ts",
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      DATA_DIR: data_dir,
      EMBEDDED_PG_PORT: String(await freePort()),
      DATABASE_URL: "",
      CARRIER_PROFILES: "es2plus",
      ES2PLUS_URL: "https://smdp.invalid",
      ES2PLUS_REQUESTER_ID: "esim-api",
      ES2PLUS_CLIENT_CERT_FILE: pem,
      ES2PLUS_CLIENT_KEY_FILE: pem,
      ES2PLUS_CA_FILE: path.join(data_dir, "missing-ca.pem"),
      ES2PLUS_SMDP_ADDRESS: "smdp.invalid",
    },
  });
  const pg_dir = path.join(data_dir, "pg");
  try {
    const code = await running.exited;
    // Enough for the start-up lines: the migrations line alone names every migration applied.
    const output = running.output().slice(-12_000);
    assert.match(output, /embedded PostgreSQL ready/, "the refusal came after the database started");
    assert.notEqual(code, 0, output);
    assert.match(output, /start-up failed: ES2PLUS_CA_FILE: cannot read/);
    assert.equal(existsSync(path.join(pg_dir, "postmaster.pid")), false, output);
    assert.deepEqual(await processesUsing(pg_dir), [], "no postgres left running on its data directory");
  } finally {
    // Before the fix the postgres started by this test outlived the service: stop it here.
    for (const pid of await processesUsing(pg_dir)) process.kill(pid, "SIGTERM");
  }
});
