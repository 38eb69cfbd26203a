// An embedded PostgreSQL of a driver's own (src/db/embedded.ts) on a free loopback port, for
// what runs outside `npm test`'s template databases: `npm test` itself, the chaos and soak
// clusters, `npm run fuzz`, the benchmark. By default in a fresh temporary directory, migrated
// and seeded with the default catalog as `npm start` does; stop() stops it and removes its files.
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { seedDefaultCatalogIfEmpty } from "../../src/catalog/seed-catalog.ts";
import { startEmbeddedPostgres } from "../../src/db/embedded.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createPool } from "../../src/db/pool.ts";
import { freePort } from "./ports.ts";

export type OwnPostgres = {
  url: string;
  /** The data directory. */
  dataDir: string;
  /** Process id of the postmaster (from postmaster.pid), null once it is gone. */
  postmasterPid: () => Promise<number | null>;
  /**
   * Stops PostgreSQL with `mode` (pg_ctl stop -m: `fast` as an upgrade does, `immediate` as a
   * crash does) and starts it again on the same directory and port, as an operator's restart or a
   * failover to the same address would. Resolves once it accepts connections again, with the
   * performance.now() of that moment (from which a test measures its clients' recovery).
   */
  restart: (mode: "fast" | "immediate", down_ms?: number) => Promise<number>;
  /** Stops PostgreSQL and removes its directory; safe to call twice. */
  stop: () => Promise<void>;
};

export type OwnPostgresOptions = {
  /** The data directory (removed by stop()); a fresh temporary one when absent. */
  dataDir?: string;
  /** Migrate and seed the default catalog (true), or leave the database empty for its service to do. */
  migrate?: boolean;
  /** shared_preload_libraries, e.g. ["pg_stat_statements"]: set, then PostgreSQL is restarted to load them. */
  preload?: string[];
  log?: (message: string) => void;
};

export async function startOwnPostgres(options: OwnPostgresOptions = {}): Promise<OwnPostgres> {
  let root: string | null = null;
  let dataDir = options.dataDir;
  if (dataDir === undefined) {
    root = await mkdtemp(path.join(os.tmpdir(), "esim-pg-"));
    // As root the cluster runs as the `postgres` user (embedded.ts), which must reach the directory.
    await chmod(root, 0o755);
    dataDir = path.join(root, "pg");
  }
  const port = await freePort();
  let embedded = await startEmbeddedPostgres({ dir: dataDir, port, log: options.log });
  if (options.preload && options.preload.length > 0) {
    await runSetup(embedded.url, async (pool) => {
      await pool.query(`alter system set shared_preload_libraries = '${options.preload!.join(",")}'`);
    });
    await embedded.stop();
    embedded = await startEmbeddedPostgres({ dir: dataDir, port, log: options.log });
  }
  if (options.migrate ?? true) {
    await runSetup(embedded.url, async (pool) => {
      await migrate(pool);
      await seedDefaultCatalogIfEmpty(pool, "USD");
    });
  }
  const directory = dataDir;
  let stopped: Promise<void> | null = null;
  const restart = async (mode: "fast" | "immediate", down_ms = 0): Promise<number> => {
    if (stopped !== null) throw new Error("restart: this PostgreSQL was stopped for good");
    await embedded.stop(mode);
    if (down_ms > 0) await new Promise((resolve) => setTimeout(resolve, down_ms));
    embedded = await startEmbeddedPostgres({ dir: directory, port, log: options.log });
    return performance.now();
  };
  return {
    url: embedded.url,
    dataDir: directory,
    postmasterPid: async () => {
      const text = await readFile(path.join(directory, "postmaster.pid"), "utf8").catch(() => null);
      const pid = Number(text?.split("\n")[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : null;
    },
    restart,
    stop: () => {
      stopped ??= (async () => {
        await embedded.stop();
        await rm(root ?? directory, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

async function runSetup(url: string, work: (pool: ReturnType<typeof createPool>) => Promise<void>) {
  const pool = createPool(url, 2, "esim-own-postgres-setup");
  try {
    await work(pool);
  } finally {
    await pool.end();
  }
}
