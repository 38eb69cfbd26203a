// Numbered, forward-only migrations (src/db/migrations/NNNN_name.sql), applied at start-up.
// Two processes starting at once against one empty database is normal when scaled out: a
// session advisory lock makes the second wait and then find nothing left to do. That lock and the
// `set statement_timeout = 0` below belong to one session: the service migrates through a direct
// connection (migrateDirect: DATABASE_DIRECT_URL when set), never a transaction-mode pooler, which
// would run each statement on whichever server connection is free.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { Logger, runMigrations as runWorkerMigrations } from "graphile-worker";
import type pg from "pg";
import { createPool } from "./pool.ts";

const MIGRATIONS_DIR = path.join(import.meta.dirname, "migrations");
// Any constant shared by every process of this service; hashtext keeps it readable.
const LOCK_SQL = "select pg_advisory_lock(hashtext('esim-ordering:migrations'))";
const UNLOCK_SQL = "select pg_advisory_unlock(hashtext('esim-ordering:migrations'))";

export type MigrationResult = { applied: string[] };

/** `directory` is for tests that migrate a database step by step; the service uses its own. */
export async function migrate(pool: pg.Pool, directory = MIGRATIONS_DIR): Promise<MigrationResult> {
  const files = (await readdir(directory)).filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name)).sort();
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    // The pool's statement_timeout bounds a request's statement, not a release step: a migration
    // that validates a rule reads whole tables, as long as they take, and a process starting
    // meanwhile waits for it on the lock below. Reset before the connection goes back.
    await client.query("set statement_timeout = 0");
    await client.query(LOCK_SQL);
    await client.query(`
      create table if not exists schema_migrations (
        name text primary key,
        applied_at timestamptz not null default now()
      )`);
    const done = new Set(
      (await client.query<{ name: string }>("select name from schema_migrations")).rows.map(
        (row) => row.name,
      ),
    );
    for (const name of files) {
      if (done.has(name)) continue;
      const body = await readFile(path.join(directory, name), "utf8");
      await client.query("begin");
      try {
        // Waiting for a table's lock is bounded: traffic queues behind a pending ACCESS EXCLUSIVE,
        // so a migration that cannot get one fails the start-up (retried at the next) instead.
        await client.query("set local lock_timeout = '30s'");
        await client.query(body);
        await client.query("insert into schema_migrations (name) values ($1)", [name]);
        await client.query("commit");
      } catch (error) {
        await client.query("rollback");
        throw new Error(`migration ${name} failed: ${(error as Error).message}`);
      }
      applied.push(name);
    }
    // graphile-worker's own schema, under the same lock so start-up order is deterministic.
    await runWorkerMigrations({ pgPool: pool, logger: silentWorkerLogger });
  } finally {
    await client.query(UNLOCK_SQL).catch(() => undefined);
    // A connection that kept no timeout is closed rather than handed to a request.
    const reset = await client.query("reset statement_timeout").then(
      () => undefined,
      (error: Error) => error,
    );
    client.release(reset);
  }
  return { applied };
}

/**
 * Migrates through a pool of its own on `direct_url`, closed after: one connection holds the lock
 * and applies ours, a second applies graphile-worker's (runWorkerMigrations takes its own).
 */
export async function migrateDirect(direct_url: string, application_name: string): Promise<MigrationResult> {
  const pool = createPool(direct_url, 2, application_name);
  try {
    return await migrate(pool);
  } finally {
    await pool.end();
  }
}

/** graphile-worker logs through pino elsewhere; its migration chatter is not useful. */
export const silentWorkerLogger = new Logger(() => () => undefined);
