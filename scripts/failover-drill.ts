// The failover drill of docs/deploy.md: a synchronous standby loses no acknowledged purchase when
// the primary dies, and the service carries on against it once promoted.
//
//   node scripts/failover-drill.ts                PostgreSQL binaries as scripts/restore-drill.ts finds them (PG_BIN)
//   node scripts/failover-drill.ts --keep         leave the directory behind to look at
//
// 1. A primary (initdb), migrated and loaded by the service (src/main.ts against it): a partner,
//    a credit, two purchases.
// 2. A standby made with `pg_basebackup -R` (standby.signal and primary_conninfo written for it),
//    started, streaming; the primary then names it in `synchronous_standby_names = 'ANY 1 (...)'`
//    and waits until pg_stat_replication says it is synchronous.
// 3. Purchases through the service, eight at once; the moment the last is answered 200 the
//    primary is killed (`pg_ctl stop -m immediate`: no shutdown checkpoint, no goodbye to the standby).
// 4. `pg_ctl promote` on the standby, timed. On it: every purchase answered 200 is there, completed;
//    `npm run cli -- ledger audit` passes; the service starts on it and the partner buys again.
// Exit 1 when any check fails.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, chmod, chown, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { parseArgs } from "node:util";
import { createPartner } from "../test/support/fixtures.ts";
import { freePort } from "../test/support/ports.ts";
import {
  buy,
  type Drill,
  ledgerAudit,
  makePrimary,
  type Partner,
  pgRun,
  postgresUser,
  serverBinaries,
  startCluster,
  startService,
  withClient,
} from "./restore-drill.ts";

const STANDBY_NAME = "drill_standby";
/** Purchases in flight at once when the primary is killed, and how many rounds of them. */
const CONCURRENT_PURCHASES = 8;
const ROUNDS = 2;
const SYNC_WAIT_MS = 60_000;
const PROMOTE_WAIT_MS = 60_000;

/** A streaming standby of the running primary, from `pg_basebackup -R`, started on `port`. */
async function makeStandby(d: Drill, primary_port: number, data: string, port: number): Promise<string> {
  await pgRun(d, "pg_basebackup", [
    "-h",
    "127.0.0.1",
    "-p",
    String(primary_port),
    "-U",
    "postgres",
    "-D",
    data,
    "-Fp",
    "-X",
    "stream",
    "--checkpoint=fast",
    "-R",
  ]);
  // cluster_name is the application_name the standby gives the primary: the name
  // synchronous_standby_names refers to. It archives nothing until it is promoted and set up for it.
  const settings = `\n# failover drill\ncluster_name = '${STANDBY_NAME}'\narchive_mode = off\n`;
  await appendFile(path.join(data, "postgresql.auto.conf"), settings);
  if (d.owner) await chown(path.join(data, "postgresql.auto.conf"), d.owner.uid, d.owner.gid);
  return startCluster(d, data, port);
}

/** The primary waits for the standby from now on; returns once pg_stat_replication says so. */
async function requireSynchronousStandby(d: Drill, primary_url: string): Promise<string> {
  d.log(`=> alter system set synchronous_standby_names = 'ANY 1 (${STANDBY_NAME})'; select pg_reload_conf()`);
  return withClient(primary_url, async (client) => {
    await client.query(`alter system set synchronous_standby_names = 'ANY 1 (${STANDBY_NAME})'`);
    await client.query("select pg_reload_conf()");
    const deadline = Date.now() + SYNC_WAIT_MS;
    for (;;) {
      const { rows } = await client.query<{ sync_state: string; state: string }>(
        "select sync_state, state from pg_stat_replication where application_name = $1",
        [STANDBY_NAME],
      );
      const row = rows[0];
      if (row && row.state === "streaming" && (row.sync_state === "quorum" || row.sync_state === "sync"))
        return `${row.state}, ${row.sync_state}`;
      if (Date.now() > deadline)
        throw new Error(`the standby is not synchronous after ${SYNC_WAIT_MS} ms: ${JSON.stringify(row)}`);
      await delay(100);
    }
  });
}

/** `pg_ctl promote`, then until the standby accepts writes; milliseconds from the command. */
async function promote(d: Drill, data: string, url: string): Promise<number> {
  const started = performance.now();
  await pgRun(d, "pg_ctl", ["promote", "-D", data, "-w", "-t", "60"]);
  const deadline = Date.now() + PROMOTE_WAIT_MS;
  for (;;) {
    const { rows } = await withClient(url, (client) =>
      client.query<{ r: boolean }>("select pg_is_in_recovery() as r"),
    );
    if (!rows[0]!.r) return performance.now() - started;
    if (Date.now() > deadline)
      throw new Error(`still in recovery ${PROMOTE_WAIT_MS} ms after pg_ctl promote`);
    await delay(50);
  }
}

type Acknowledged = { partner: Partner; admin_token: string; orders: string[]; primary_port: number };

/** The primary's life up to its death: loaded, given a synchronous standby, killed right after the last 200. */
async function primaryUntilKilled(d: Drill, standby_port: number): Promise<Acknowledged> {
  const primary_port = await freePort();
  const primary_url = await makePrimary(d, path.join(d.dir, "primary"), primary_port);
  const admin_token = `drill-admin-${crypto.randomUUID()}`;
  const service = await startService(d, primary_url, admin_token);
  try {
    const partner = await createPartner(service.url, {
      admin_token,
      name: "Failover Travel",
      credit_minor: 100_000,
    });
    const orders = await buy(service.url, partner.api_key, 2);
    await makeStandby(d, primary_port, path.join(d.dir, "standby"), standby_port);
    d.log(`standby replication: ${await requireSynchronousStandby(d, primary_url)}`);
    for (let round = 0; round < ROUNDS; round++) {
      const batch = await Promise.all(
        Array.from({ length: CONCURRENT_PURCHASES }, () => buy(service.url, partner.api_key, 1)),
      );
      orders.push(...batch.flat());
    }
    // The moment the last purchase is answered: nothing gets a chance to catch up.
    await pgRun(d, "pg_ctl", ["stop", "-D", path.join(d.dir, "primary"), "-m", "immediate"]);
    d.log(`${orders.length} purchases answered 200, then the primary was killed`);
    return { partner, admin_token, orders, primary_port };
  } finally {
    await service.stop();
  }
}

/** On the promoted standby: every acknowledged order completed, the books balanced, the service serving. */
async function checkPromoted(d: Drill, url: string, acknowledged: Acknowledged): Promise<string[]> {
  const problems: string[] = [];
  const found = await withClient(url, (client) =>
    client.query<{ order_id: string; status: string }>(
      "select order_id, status from orders where order_id = any($1::text[])",
      [acknowledged.orders],
    ),
  );
  const status = new Map(found.rows.map((row) => [row.order_id, row.status]));
  for (const order of acknowledged.orders) {
    if (status.get(order) !== "completed")
      problems.push(
        `order ${order}, answered 200, is ${status.get(order) ?? "missing"} on the promoted standby`,
      );
  }
  d.log(
    `on the promoted standby: ${status.size} of the ${acknowledged.orders.length} acknowledged purchases`,
  );
  const audit = await ledgerAudit(url);
  d.log(
    `ledger audit of the promoted standby: ${audit.ok ? "balanced" : "FAILED"} (${audit.accounts} accounts, ${audit.transfers} transfers)`,
  );
  if (!audit.ok) problems.push(...audit.breaches.map((breach) => `ledger audit: ${breach}`));
  const service = await startService(d, url, acknowledged.admin_token);
  try {
    const [order] = await buy(service.url, acknowledged.partner.api_key, 1);
    d.log(`the service on the promoted standby: purchase ${order}`);
  } finally {
    await service.stop();
  }
  return problems;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { keep: { type: "boolean" } } });
  const bin = serverBinaries();
  const version = execFileSync(path.join(bin, "postgres"), ["--version"]).toString().trim();
  const dir = await mkdtemp(path.join(os.tmpdir(), "esim-failover-drill-"));
  const owner = postgresUser();
  await chmod(dir, 0o755);
  if (owner) await chown(dir, owner.uid, owner.gid);
  const d: Drill = {
    dir,
    bin,
    owner,
    archive: path.join(dir, "wal-archive"),
    log: (line) => console.log(line),
  };
  d.log(`failover drill: ${version} (${bin}) in ${dir}`);
  try {
    const standby_port = await freePort();
    const acknowledged = await primaryUntilKilled(d, standby_port);
    const standby_url = `postgres://postgres@127.0.0.1:${standby_port}/esim`;
    const promote_ms = await promote(d, path.join(dir, "standby"), standby_url);
    d.log(`promotion: ${(promote_ms / 1000).toFixed(2)} s (pg_ctl promote until the standby accepts writes)`);
    const problems = await checkPromoted(d, standby_url, acknowledged);
    for (const problem of problems) d.log(`PROBLEM: ${problem}`);
    d.log(
      problems.length === 0
        ? "failover drill passed"
        : `failover drill FAILED: ${problems.length} problem(s)`,
    );
    return problems.length === 0 ? 0 : 1;
  } finally {
    for (const data of ["primary", "standby"]) {
      if (existsSync(path.join(dir, data, "postmaster.pid")))
        await pgRun(d, "pg_ctl", ["stop", "-D", path.join(dir, data), "-m", "immediate"]).catch(
          () => undefined,
        );
    }
    if (values.keep) d.log(`kept ${dir}`);
    else await rm(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
