// A real PgBouncer (Debian's `pgbouncer` package, which scripts/test-tools.sh installs with apt-get
// when missing) in transaction mode in front of the test PostgreSQL, with a small pool so that
// transactions of different clients really share server connections. It runs under util-linux's
// setpriv: as the `postgres` user when we are root (CI; PgBouncer refuses to run as root, and the
// embedded PostgreSQL runs as that user too), and with a parent-death signal, so that a test
// process that dies without its after() hooks takes its PgBouncer with it.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "./ports.ts";
import { spawnProcess, waitForOutput } from "./processes.ts";

export type PgBouncer = {
  /** `server_url` with the host and port of PgBouncer instead: the same database, user and password. */
  url: string;
  /** PgBouncer's version line (`PgBouncer 1.18.0`). */
  version: string;
  /** Transactions PgBouncer has carried for `database` (SHOW STATS on its admin console). */
  transactions: (database: string) => Promise<number>;
  /** What PgBouncer wrote so far, for messages. */
  output: () => string;
  stop: () => Promise<void>;
};

export type PgBouncerOptions = {
  /** A URL of the PostgreSQL behind (user, password, host, port); its database is the one `url` names. */
  server_url: string;
  /** Server connections per database and user: what every client's transactions take turns on. */
  pool_size: number;
};

const START_TIMEOUT_MS = 15_000;

function binary(): string {
  for (const candidate of ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"]) {
    try {
      execFileSync(candidate, ["--version"], { stdio: "ignore" });
      return candidate;
    } catch {}
  }
  throw new Error("pgbouncer is not installed: `npm test` installs it (scripts/test-tools.sh) as root");
}

/** The configuration an operator would write (README "Behind PgBouncer"), on loopback and a free port. */
function configuration(server: URL, port: number, dir: string, pool_size: number): string {
  return [
    "[databases]",
    // Every database name is the same-named database of the server behind.
    `* = host=${server.hostname} port=${server.port}`,
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    "unix_socket_dir =",
    // A password-less URL is a trust cluster's (scripts/ci-postgres.sh): PgBouncer trusts too.
    `auth_type = ${server.password === "" ? "trust" : "scram-sha-256"}`,
    `auth_file = ${path.join(dir, "userlist.txt")}`,
    `admin_users = ${decodeURIComponent(server.username)}`,
    "pool_mode = transaction",
    `default_pool_size = ${pool_size}`,
    "max_client_conn = 500",
    "logfile =",
    "pidfile =",
    "",
  ].join("\n");
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const program = binary();
  const server = new URL(options.server_url);
  const dir = await mkdtemp(path.join(os.tmpdir(), "esim-pgbouncer-"));
  // Readable by the `postgres` user it runs as under root (it reads the auth file again at reload).
  await chmod(dir, 0o755);
  // A test file that fails before its after() hooks run still leaves no files behind.
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const user = decodeURIComponent(server.username);
  const password = decodeURIComponent(server.password);
  await writeFile(path.join(dir, "userlist.txt"), `"${user}" "${password}"\n`, { mode: 0o644 });
  const port = await freePort();
  const ini = path.join(dir, "pgbouncer.ini");
  await writeFile(ini, configuration(server, port, dir, options.pool_size), { mode: 0o644 });
  const as_root = process.getuid?.() === 0;
  const user_flags = as_root ? ["--reuid=postgres", "--regid=postgres", "--init-groups"] : [];
  const running = spawnProcess({
    name: "pgbouncer",
    command: "setpriv",
    args: [...user_flags, "--pdeathsig=TERM", "--", program, ini],
    cwd: dir,
  });
  const version = await waitForOutput(running, /process up: (PgBouncer [0-9.]+)/, START_TIMEOUT_MS);
  const url = new URL(options.server_url);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    version,
    transactions: (database) => transactions(url, database),
    output: running.output,
    stop: async () => {
      await running.stop(5_000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function transactions(url: URL, database: string): Promise<number> {
  const console_url = new URL(url);
  console_url.pathname = "/pgbouncer";
  const admin = new pg.Client({ connectionString: console_url.toString() });
  await admin.connect();
  try {
    // The admin console speaks the simple protocol only: a query without values goes so.
    const { rows } = await admin.query<{ database: string; total_xact_count: string }>("SHOW STATS");
    return Number(rows.find((row) => row.database === database)?.total_xact_count ?? 0);
  } finally {
    await admin.end();
  }
}
