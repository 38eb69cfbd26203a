// Every test file gets a database of its own, cloned from the migrated template that
// scripts/test.ts prepared: a clean state in a few milliseconds, against a real PostgreSQL.
import { randomBytes } from "node:crypto";
import { after } from "node:test";
import type { Kysely, Transaction } from "kysely";
import pg from "pg";
import { createKysely, createPool } from "../../src/db/pool.ts";
import type { Database } from "../../src/db/schema.ts";

export type TestDatabase = {
  /** Connection string of this test file's own database. */
  url: string;
  pool: pg.Pool;
};

/** `catalog: true` clones the template that also holds the default sandbox catalog. */
export async function createTestDatabase(options: { catalog?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_ADMIN_URL;
  const template = process.env.TEST_DATABASE_TEMPLATE;
  if (!adminUrl || !template) throw new Error("run the tests with `npm test` (it prepares the database)");
  const name = `esim_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name} template ${options.catalog ? `${template}_catalog` : template}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = createPool(url.toString(), 10, "esim-test");
  after(async () => {
    await pool.end();
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${name} with (force)`);
    await cleanup.end();
  });
  return { url: url.toString(), pool };
}

/** An empty database (no migration applied), dropped after the file's tests: for migration tests. */
export async function createEmptyDatabase(prefix: string): Promise<{ url: string }> {
  const adminUrl = process.env.TEST_DATABASE_ADMIN_URL;
  if (!adminUrl) throw new Error("run the tests with `npm test` (it prepares the database)");
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  after(async () => {
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${name} with (force)`);
    await cleanup.end();
  });
  return { url: url.toString() };
}

/**
 * A Kysely over a pool of one connection to `url` (so every statement shares that connection's
 * prepared statements), and the count of answers (ReadyForQuery) it has had: the round trips.
 */
export function countedKysely(url: string, application_name: string, prepare_threshold = 1) {
  const pool = createPool(url, 1, application_name, { prepare_threshold });
  let ready = 0;
  pool.on("connect", (client) => {
    (client as unknown as { connection: NodeJS.EventEmitter }).connection.on("readyForQuery", () => ready++);
  });
  const db = createKysely<Database>(pool);
  after(() => db.destroy());
  return { db, pool, roundTrips: () => ready };
}

/**
 * Opens a transaction, runs `lock` in it, and keeps it open, as another process holding row locks
 * would, until `release()`: which runs `before_commit` (a DELETE after its row lock, say), commits,
 * and rethrows what failed in the transaction.
 */
export async function holdInTransaction(
  db: Kysely<Database>,
  lock: (trx: Transaction<Database>) => Promise<unknown>,
  before_commit: (trx: Transaction<Database>) => Promise<unknown> = async () => undefined,
): Promise<{ release: () => Promise<void> }> {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked: () => void = () => undefined;
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const done = db.transaction().execute(async (trx) => {
    await lock(trx);
    locked();
    await released;
    await before_commit(trx);
  });
  // Reported by release(), or here when the lock itself fails.
  done.catch(() => undefined);
  await Promise.race([isLocked, done]);
  return {
    release: async () => {
      release();
      await done;
    },
  };
}
