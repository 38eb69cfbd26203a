// The restore drill of docs/deploy.md, run for real on a throw-away cluster: a backup that has
// never been restored is a hope, not a backup.
//
//   node scripts/restore-drill.ts                 Debian's PostgreSQL (the newest installed; 15 installed with apt-get when none)
//   PG_BIN=/usr/lib/postgresql/16/bin node scripts/restore-drill.ts    another release's binaries
//   node scripts/restore-drill.ts --keep          leave the directory behind to look at
//
// 1. A primary made by initdb, with WAL archiving on (archive_command copies each segment to an
//    archive folder), migrated and loaded by the service itself: `src/main.ts` runs against it, and
//    partners, credits and purchases go through /admin and /v1 like an operator's and a partner's.
// 2. `pg_basebackup` of the running primary (checked with `pg_verifybackup`), then more writes.
// 3. The recovery target: the time after a second batch of writes; a third batch follows it.
// 4. The primary is lost (stopped with -m immediate). The backup is copied into a new data directory
//    with recovery.signal, restore_command and recovery_target_time (PostgreSQL 12+), and started:
//    it replays the archive up to the target and promotes itself.
// 5. On the restored cluster: `npm run cli -- ledger audit` passes; every order, wallet balance and
//    ledger transfer committed before the target is there, as it was; nothing written after it is.
//    Then the service runs on it again: a partner from before the target buys once more, audited.
// The backup and restore times are printed. Exit 1 when any check fails.
//
// The server binaries and pg_basebackup must be of one release (pg_basebackup refuses a newer
// server), so the drill runs on Debian's packaged PostgreSQL rather than the embedded one, which
// ships no pg_basebackup. As root, PostgreSQL runs as the `postgres` user (it refuses root).
import { execFile, execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { appendFile, chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { parseArgs, promisify } from "node:util";
import pg from "pg";
import { createPartner, creditWallet, purchase } from "../test/support/fixtures.ts";
import { freePort } from "../test/support/ports.ts";
import { type ServiceProcess, startServiceProcess } from "../test/support/service.ts";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..");
/** The release installed with apt-get when no Debian PostgreSQL is: Debian 12's. */
const DEBIAN_RELEASE = "15";
/** Limits on the drill's own waits. */
const ARCHIVE_WAIT_MS = 60_000;
const PROMOTE_WAIT_MS = 120_000;
const COMMAND_TIMEOUT_MS = 300_000;

type Owner = { uid: number; gid: number } | null;
export type Drill = { dir: string; bin: string; owner: Owner; archive: string; log: (line: string) => void };

// ---------------------------------------------------------------------------------------------
// PostgreSQL's programs, run as its user

export function serverBinaries(): string {
  const given = process.env.PG_BIN;
  if (given) {
    if (!existsSync(path.join(given, "pg_basebackup")))
      throw new Error(`PG_BIN=${given} has no pg_basebackup`);
    return given;
  }
  const debian = () =>
    existsSync("/usr/lib/postgresql")
      ? readdirSync("/usr/lib/postgresql")
          .filter((release) => existsSync(`/usr/lib/postgresql/${release}/bin/pg_basebackup`))
          .sort((a, b) => Number(b) - Number(a))
      : [];
  if (debian().length === 0) {
    if (process.getuid?.() !== 0)
      throw new Error(
        `no PostgreSQL under /usr/lib/postgresql: install postgresql-${DEBIAN_RELEASE}, or set PG_BIN`,
      );
    console.error(`restore-drill: installing postgresql-${DEBIAN_RELEASE} with apt-get`);
    execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
    execFileSync(
      "apt-get",
      ["install", "-y", "-qq", "--no-install-recommends", `postgresql-${DEBIAN_RELEASE}`],
      {
        stdio: "inherit",
        env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      },
    );
  }
  const newest = debian()[0];
  if (newest === undefined) throw new Error("postgresql was installed but no pg_basebackup was found");
  return `/usr/lib/postgresql/${newest}/bin`;
}

/** As root, the `postgres` user (created when a minimal image lacks it); else ourselves. */
export function postgresUser(): Owner {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"]).toString().trim());
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    execFileSync("useradd", ["--system", "--user-group", "postgres"]);
    return { uid: id("-u"), gid: id("-g") };
  }
}

/** Runs one of PostgreSQL's programs as its user, from the drill's directory, and shows the command. */
export async function pgRun(drill: Drill, program: string, args: string[]): Promise<string> {
  drill.log(`$ ${program} ${args.map((arg) => (arg.includes(" ") ? `"${arg}"` : arg)).join(" ")}`);
  const { stdout } = await run(path.join(drill.bin, program), args, {
    ...(drill.owner ?? {}),
    cwd: drill.dir,
    timeout: COMMAND_TIMEOUT_MS,
  });
  return stdout;
}

export async function ownedDirectory(drill: Drill, dir: string, mode: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  await chmod(dir, mode);
  if (drill.owner) await chown(dir, drill.owner.uid, drill.owner.gid);
}

export async function startCluster(drill: Drill, data: string, port: number): Promise<string> {
  await pgRun(drill, "pg_ctl", [
    "start",
    "-D",
    data,
    "-l",
    `${data}.log`,
    "-w",
    "-t",
    "120",
    "-o",
    `-p ${port}`,
  ]);
  return `postgres://postgres@127.0.0.1:${port}/esim`;
}

// ---------------------------------------------------------------------------------------------
// The primary: initdb, archiving, the service's own schema and data

/** What a production primary would have for this drill: WAL archiving to a folder. */
function primarySettings(drill: Drill): string {
  return [
    "",
    "# restore drill (scripts/restore-drill.ts)",
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${drill.dir}'`,
    "max_connections = 100",
    "wal_level = replica",
    "archive_mode = on",
    // Never overwrite a segment already archived: a second cluster archiving to the same folder
    // by mistake fails loudly instead of replacing the primary's history.
    `archive_command = 'test ! -f ${drill.archive}/%f && cp %p ${drill.archive}/%f'`,
    "archive_timeout = 60",
    "",
  ].join("\n");
}

export async function makePrimary(drill: Drill, data: string, port: number): Promise<string> {
  await ownedDirectory(drill, drill.archive, 0o700);
  await pgRun(drill, "initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"]);
  await appendFile(path.join(data, "postgresql.conf"), primarySettings(drill));
  const url = await startCluster(drill, data, port);
  await withClient(url.replace(/\/esim$/, "/postgres"), (client) => client.query("create database esim"));
  return url;
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, options: "-c TimeZone=UTC" });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export type Partner = { partner_id: string; api_key: string };

/** The service against the primary: it migrates the database and seeds the catalog, like `npm start`. */
export async function startService(
  drill: Drill,
  database_url: string,
  admin_token: string,
): Promise<ServiceProcess> {
  return startServiceProcess({
    APP_ENV: "sandbox",
    DATABASE_URL: database_url,
    DATA_DIR: path.join(drill.dir, "service-data"),
    ADMIN_TOKEN: admin_token,
    // Straight to the drill's cluster, whatever the caller's environment says of a pooler.
    DATABASE_DIRECT_URL: "",
    // The built-in simulator over the carrier API: the drill is about the database, not ES2+.
    CARRIER_PROFILES: "http",
  });
}

export async function buy(url: string, api_key: string, count: number): Promise<string[]> {
  const orders: string[] = [];
  for (let i = 0; i < count; i++) orders.push((await purchase(url, api_key)).orderID as string);
  return orders;
}

// ---------------------------------------------------------------------------------------------
// What the restored cluster must show

export type Books = {
  /** order_id -> status */
  orders: Map<string, string>;
  partners: Set<string>;
  /** account_id -> "posted credits/posted debits/pending debits" */
  accounts: Map<string, string>;
  /** transfer_id -> state */
  transfers: Map<string, string>;
};

/** Orders and their status, partners, ledger accounts' running totals and every transfer's state. */
export async function readBooks(url: string): Promise<Books> {
  return withClient(url, async (client) => {
    const pairs = async (query: string) =>
      new Map((await client.query<{ k: string; v: string }>(query)).rows.map((row) => [row.k, row.v]));
    const orders = await pairs("select order_id as k, status as v from orders");
    const partners = await pairs("select partner_id as k, '' as v from partners");
    const accounts = await pairs(
      "select account_id as k, concat_ws('/', posted_credits_minor, posted_debits_minor, pending_debits_minor) as v from ledger_accounts",
    );
    const transfers = await pairs("select transfer_id as k, state as v from ledger_transfers");
    return { orders, partners: new Set(partners.keys()), accounts, transfers };
  });
}

/** Every difference between two maps, named; empty when they are equal. */
export function differences(
  what: string,
  expected: Map<string, string>,
  found: Map<string, string>,
): string[] {
  const problems: string[] = [];
  for (const [key, value] of expected) {
    const restored = found.get(key);
    if (restored !== value)
      problems.push(`${what} ${key}: ${value} at the target, ${restored ?? "missing"} restored`);
  }
  for (const key of found.keys())
    if (!expected.has(key)) problems.push(`${what} ${key} is restored but was written after the target`);
  return problems;
}

/** Every difference between the books at the target and the restored ones; empty when they agree. */
function compareBooks(atTarget: Books, restored: Books, boughtAfterTarget: string[]): string[] {
  const problems = [
    ...differences("order", atTarget.orders, restored.orders),
    ...differences("ledger account", atTarget.accounts, restored.accounts),
    ...differences("ledger transfer", atTarget.transfers, restored.transfers),
  ];
  for (const id of atTarget.partners) if (!restored.partners.has(id)) problems.push(`partner ${id} missing`);
  for (const id of boughtAfterTarget)
    if (restored.orders.has(id)) problems.push(`order ${id}, bought after the target, is restored`);
  return problems;
}

/** `npm run cli -- ledger audit --json` against the restored cluster, as an operator runs it. */
export async function ledgerAudit(
  url: string,
): Promise<{ ok: boolean; accounts: number; transfers: number; breaches: string[] }> {
  const result = await run(process.execPath, ["src/cli/main.ts", "ledger", "audit", "--json"], {
    cwd: ROOT,
    env: {
      ...process.env,
      APP_ENV: "sandbox",
      DATABASE_URL: url,
      DATABASE_DIRECT_URL: "",
      LOG_LEVEL: "warn",
    },
    timeout: COMMAND_TIMEOUT_MS,
  }).catch((error: { stdout?: string; message: string }) => {
    if (!error.stdout) throw error;
    return { stdout: error.stdout };
  });
  return JSON.parse(result.stdout);
}

// ---------------------------------------------------------------------------------------------
// Backup, archive, restore

/** `pg_basebackup` of the running primary into `target`, then `pg_verifybackup` of it. */
async function baseBackup(drill: Drill, port: number, target: string): Promise<number> {
  const started = performance.now();
  await pgRun(drill, "pg_basebackup", [
    "-h",
    "127.0.0.1",
    "-p",
    String(port),
    "-U",
    "postgres",
    "-D",
    target,
    "-Fp",
    "-X",
    "stream",
    "--checkpoint=fast",
    "--label=restore-drill",
  ]);
  const backup_ms = performance.now() - started;
  await pgRun(drill, "pg_verifybackup", [target]);
  return backup_ms;
}

/** Switches to a new WAL segment and waits until the archiver has copied it: the archive is complete. */
async function archiveCurrentWal(drill: Drill, url: string): Promise<string> {
  drill.log("=> select pg_switch_wal(); then wait for pg_stat_archiver.last_archived_wal to reach it");
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ segment: string }>(
      "select pg_walfile_name(pg_switch_wal()) as segment",
    );
    const segment = rows[0]!.segment;
    const deadline = Date.now() + ARCHIVE_WAIT_MS;
    for (;;) {
      const archived = await client.query<{ last: string | null; failed: number }>(
        "select last_archived_wal as last, failed_count as failed from pg_stat_archiver",
      );
      const last = archived.rows[0]!.last;
      if (last !== null && last >= segment) return segment;
      if (Date.now() > deadline)
        throw new Error(
          `WAL segment ${segment} not archived after ${ARCHIVE_WAIT_MS} ms (last ${last}, failed ${archived.rows[0]!.failed})`,
        );
      await delay(100);
    }
  });
}

/** The recovery settings written beside the copied backup: replay the archive up to `target_time`. */
function recoverySettings(drill: Drill, target_time: string): string {
  return [
    "",
    "# restore drill: point-in-time recovery",
    `restore_command = 'cp ${drill.archive}/%f %p'`,
    `recovery_target_time = '${target_time}'`,
    "recovery_target_action = 'promote'",
    // The restored copy must not archive into the primary's archive (a new timeline would, beside it).
    "archive_mode = off",
    "",
  ].join("\n");
}

/** Copies the backup into `data`, asks for recovery to `target_time`, starts it, waits for its promotion. */
async function restore(drill: Drill, backup: string, data: string, port: number, target_time: string) {
  const started = performance.now();
  await ownedDirectory(drill, data, 0o700);
  drill.log(`$ cp -a ${backup}/. ${data}/`);
  await run("cp", ["-a", `${backup}/.`, `${data}/`], { timeout: COMMAND_TIMEOUT_MS });
  const copy_ms = performance.now() - started;
  await appendFile(path.join(data, "postgresql.auto.conf"), recoverySettings(drill, target_time));
  await writeFile(path.join(data, "recovery.signal"), "");
  if (drill.owner) {
    await chown(path.join(data, "recovery.signal"), drill.owner.uid, drill.owner.gid);
    await chown(path.join(data, "postgresql.auto.conf"), drill.owner.uid, drill.owner.gid);
  }
  const url = await startCluster(drill, data, port);
  const deadline = Date.now() + PROMOTE_WAIT_MS;
  for (;;) {
    const recovering = await withClient(url, (client) =>
      client.query<{ r: boolean }>("select pg_is_in_recovery() as r"),
    );
    if (!recovering.rows[0]!.r) break;
    if (Date.now() > deadline)
      throw new Error(`the restored cluster is still in recovery after ${PROMOTE_WAIT_MS} ms`);
    await delay(100);
  }
  const restore_ms = performance.now() - started;
  // PostgreSQL says where it stopped: before the first commit past the target, not at the archive's end.
  const log = await readFile(`${data}.log`, "utf8");
  const stopped = log.split("\n").find((line) => line.includes("recovery stopping before commit"));
  return { url, copy_ms, restore_ms, stopped: stopped?.replace(/^.*?LOG:\s*/, "") ?? null };
}

// ---------------------------------------------------------------------------------------------
// The drill

type Phase = { partners: Partner[]; orders: string[] };

/** Before the backup: two partners, credited, three purchases each. */
async function beforeBackup(service: ServiceProcess, admin_token: string): Promise<Phase> {
  const partners = [];
  const orders = [];
  for (const name of ["Drill Travel A", "Drill Travel B"]) {
    const partner = await createPartner(service.url, { admin_token, name, credit_minor: 100_000 });
    partners.push(partner);
    orders.push(...(await buy(service.url, partner.api_key, 3)));
  }
  return { partners, orders };
}

/** After the backup, before the target: more purchases, a credit, a new partner and its purchase. */
async function beforeTarget(service: ServiceProcess, admin_token: string, earlier: Phase): Promise<Phase> {
  const [a, b] = earlier.partners;
  const orders = await buy(service.url, a!.api_key, 2);
  await creditWallet(service.url, admin_token, b!.partner_id, 5_000, "drill-before-target");
  const c = await createPartner(service.url, { admin_token, name: "Drill Travel C", credit_minor: 20_000 });
  orders.push(...(await buy(service.url, c.api_key, 1)));
  return { partners: [c], orders };
}

/** After the target: what the restore must not bring back. */
async function afterTarget(
  service: ServiceProcess,
  admin_token: string,
  partners: Partner[],
): Promise<Phase> {
  const orders: string[] = [];
  for (const partner of partners) orders.push(...(await buy(service.url, partner.api_key, 1)));
  await creditWallet(service.url, admin_token, partners[0]!.partner_id, 7_000, "drill-after-target");
  const late = await createPartner(service.url, {
    admin_token,
    name: "Drill Travel Late",
    credit_minor: 1_000,
  });
  return { partners: [late], orders };
}

/** The server's clock, with a second either side: no commit of one batch shares a moment with the other. */
async function recoveryTargetTime(url: string): Promise<string> {
  await delay(1_000);
  const { rows } = await withClient(url, (client) =>
    client.query<{ t: string }>(`select to_char(clock_timestamp(), 'YYYY-MM-DD HH24:MI:SS.US"+00"') as t`),
  );
  await delay(1_000);
  return rows[0]!.t;
}

type PrimaryLife = {
  primary_url: string;
  admin_token: string;
  /** A partner from before the backup: it buys again from the restored database. */
  survivor: Partner;
  backup_ms: number;
  atTarget: Books;
  target_time: string;
  late: Phase;
};

/** The primary's life: made, loaded by the service, backed up, written to on both sides of the target. */
async function primaryLife(d: Drill, primary_port: number): Promise<PrimaryLife> {
  const primary_url = await makePrimary(d, path.join(d.dir, "primary"), primary_port);
  const admin_token = `drill-admin-${crypto.randomUUID()}`;
  const service = await startService(d, primary_url, admin_token);
  try {
    const first = await beforeBackup(service, admin_token);
    d.log(`before the backup: ${first.partners.length} partners, ${first.orders.length} purchases`);
    const backup_ms = await baseBackup(d, primary_port, path.join(d.dir, "backup"));
    const second = await beforeTarget(service, admin_token, first);
    d.log(`after the backup: ${second.orders.length} purchases, a credit, a new partner`);
    const atTarget = await readBooks(primary_url);
    const target_time = await recoveryTargetTime(primary_url);
    d.log(`recovery target time: ${target_time}`);
    const late = await afterTarget(service, admin_token, [...first.partners, ...second.partners]);
    d.log(`after the target: ${late.orders.length} purchases, a credit, a new partner (none may come back)`);
    return { primary_url, admin_token, survivor: first.partners[0]!, backup_ms, atTarget, target_time, late };
  } finally {
    await service.stop();
  }
}

/** What the restored cluster must show; each problem named, none when the drill passed. */
async function checkRestored(
  d: Drill,
  url: string,
  life: PrimaryLife,
  stopped: string | null,
): Promise<string[]> {
  const problems: string[] = [];
  if (stopped === null) problems.push("the restored cluster's log shows no stop before the recovery target");
  else d.log(`PostgreSQL: ${stopped}`);
  const audit = await ledgerAudit(url);
  d.log(
    `ledger audit of the restored cluster: ${audit.ok ? "balanced" : "FAILED"} (${audit.accounts} accounts, ${audit.transfers} transfers)`,
  );
  if (!audit.ok) problems.push(...audit.breaches.map((breach) => `ledger audit: ${breach}`));
  problems.push(...compareBooks(life.atTarget, await readBooks(url), life.late.orders));
  const late_partner = life.late.partners[0]!.partner_id;
  const found = await withClient(url, (client) =>
    client.query("select 1 from partners where partner_id = $1", [late_partner]),
  );
  if (found.rowCount !== 0) problems.push(`partner ${late_partner}, made after the target, is restored`);
  return problems;
}

/**
 * The restored database back in service: the service starts on it (migrations find nothing to do)
 * and a partner from before the target buys again: the identities and sequences continue past what
 * the restore brought back (a reused one would fail its unique index and the purchase), and the
 * ledger still balances.
 */
async function serveAgain(d: Drill, url: string, life: PrimaryLife): Promise<string[]> {
  const service = await startService(d, url, life.admin_token);
  let order: string;
  try {
    [order] = (await buy(service.url, life.survivor.api_key, 1)) as [string];
  } finally {
    await service.stop();
  }
  const problems: string[] = [];
  if (life.atTarget.orders.has(order) || life.late.orders.includes(order))
    problems.push(`the purchase after the restore reused order id ${order}`);
  const audit = await ledgerAudit(url);
  d.log(
    `the service on the restored cluster: purchase ${order}; ledger audit ${audit.ok ? "balanced" : "FAILED"}`,
  );
  if (!audit.ok)
    problems.push(...audit.breaches.map((breach) => `ledger audit after serving again: ${breach}`));
  return problems;
}

type DrillResult = {
  backup_ms: number;
  copy_ms: number;
  restore_ms: number;
  problems: string[];
  summary: string;
};

async function drill(d: Drill): Promise<DrillResult> {
  const primary_port = await freePort();
  const life = await primaryLife(d, primary_port);
  const segment = await archiveCurrentWal(d, life.primary_url);
  d.log(`archived up to ${segment}; the primary is lost:`);
  await pgRun(d, "pg_ctl", ["stop", "-D", path.join(d.dir, "primary"), "-m", "immediate"]);

  const restored_dir = path.join(d.dir, "restored");
  const restored = await restore(
    d,
    path.join(d.dir, "backup"),
    restored_dir,
    await freePort(),
    life.target_time,
  );
  const problems = await checkRestored(d, restored.url, life, restored.stopped);
  problems.push(...(await serveAgain(d, restored.url, life)));
  await pgRun(d, "pg_ctl", ["stop", "-D", restored_dir, "-m", "fast", "-w"]);
  const { atTarget, late } = life;
  const summary =
    `${atTarget.orders.size} orders, ${atTarget.partners.size} partners, ${atTarget.transfers.size} ledger transfers ` +
    `as at the target; ${late.orders.length} orders, 1 credit and 1 partner after it left out`;
  return {
    backup_ms: life.backup_ms,
    copy_ms: restored.copy_ms,
    restore_ms: restored.restore_ms,
    problems,
    summary,
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { keep: { type: "boolean" } } });
  const bin = serverBinaries();
  const version = execFileSync(path.join(bin, "postgres"), ["--version"]).toString().trim();
  const dir = await mkdtemp(path.join(os.tmpdir(), "esim-restore-drill-"));
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
  d.log(`restore drill: ${version} (${bin}) in ${dir}`);
  try {
    const result = await drill(d);
    d.log(result.summary);
    d.log(`base backup: ${(result.backup_ms / 1000).toFixed(2)} s`);
    d.log(
      `restore: ${(result.restore_ms / 1000).toFixed(2)} s (copy ${(result.copy_ms / 1000).toFixed(2)} s, ` +
        `WAL replay to the target and promotion ${((result.restore_ms - result.copy_ms) / 1000).toFixed(2)} s)`,
    );
    for (const problem of result.problems) d.log(`PROBLEM: ${problem}`);
    d.log(
      result.problems.length === 0
        ? "restore drill passed"
        : `restore drill FAILED: ${result.problems.length} problem(s)`,
    );
    return result.problems.length === 0 ? 0 : 1;
  } finally {
    for (const data of ["primary", "restored"]) {
      if (existsSync(path.join(dir, data, "postmaster.pid")))
        await pgRun(d, "pg_ctl", ["stop", "-D", path.join(dir, data), "-m", "immediate"]).catch(
          () => undefined,
        );
    }
    if (values.keep) d.log(`kept ${dir}`);
    else await rm(dir, { recursive: true, force: true });
  }
}

// scripts/failover-drill.ts borrows the cluster helpers above; run directly, this is the drill.
if (import.meta.main) process.exitCode = await main();
