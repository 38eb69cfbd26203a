// The CLI's database, found the way the service finds it (src/main.ts): DATABASE_URL, or the
// embedded PostgreSQL under DATA_DIR/pg. A cluster the service (or an earlier CLI run) left running
// is re-attached to and left running; a cluster this run had to start is stopped when it ends, so
// an operator command never leaves a stray postgres behind.
import path from "node:path";
import type { Config } from "../config.ts";
import { startEmbeddedPostgres } from "../db/embedded.ts";
import { migrateDirect } from "../db/migrate.ts";
import { createKysely, createPool } from "../db/pool.ts";
import type { Database } from "../db/schema.ts";
import type { CliContext } from "./command.ts";

/** One command runs at a time; the catalog import holds one connection, the rest one query each. */
const CLI_POOL_MAX = 4;

/** `direct`: DATABASE_DIRECT_URL when DATABASE_URL is a pooler (the migrations' session), else `url`. */
type Located = { url: string; direct: string; stop: () => Promise<void> };

async function locateDatabase(config: Config): Promise<Located> {
  if (config.database_url !== null) {
    const direct = config.database_direct_url ?? config.database_url;
    return { url: config.database_url, direct, stop: async () => undefined };
  }
  // Quiet while starting (re-attaching is the normal case and not news); loud if stopping fails,
  // because then a cluster is left running that the operator should know about.
  let reportProblems = false;
  const embedded = await startEmbeddedPostgres({
    dir: path.join(config.data_dir, "pg"),
    port: config.embedded_pg_port,
    log: (message) => {
      if (reportProblems) process.stderr.write(`${message}\n`);
    },
  });
  reportProblems = true;
  return { ...embedded, direct: embedded.url };
}

/**
 * Opens the database, applies pending migrations (idempotent, and serialised with any service
 * starting at the same moment by migrate()'s advisory lock), runs `work`, then closes everything.
 */
export async function withDatabase<T>(
  config: Config,
  json: boolean,
  work: (ctx: CliContext) => Promise<T>,
): Promise<T> {
  const located = await locateDatabase(config);
  try {
    const pool = createPool(located.url, CLI_POOL_MAX, "esim-cli", {
      prepare_threshold: config.db_prepare_threshold,
      through_pooler: config.database_direct_url !== null,
    });
    try {
      await migrateDirect(located.direct, "esim-cli-migrations");
      return await work({ config, pool, db: createKysely<Database>(pool), json });
    } finally {
      await pool.end();
    }
  } finally {
    await located.stop();
  }
}
