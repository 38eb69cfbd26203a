// `npm test`: the whole suite against a real PostgreSQL.
// Without DATABASE_URL it starts a throw-away embedded PostgreSQL in .test-data/ on a free
// port; with DATABASE_URL (a superuser URL) it uses that server. Either way it migrates one
// template database, and every test file clones its own database from it (test/support/db.ts),
// so test files never see each other's rows.
import { spawn } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { seedDefaultCatalogIfEmpty } from "../src/catalog/seed-catalog.ts";
import { migrate } from "../src/db/migrate.ts";
import { createPool } from "../src/db/pool.ts";
import { startOwnPostgres } from "../test/support/postgres.ts";

const TEMPLATE = "esim_test_template";

async function runAdmin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  let adminUrl = process.env.DATABASE_URL ?? null;
  let stopDatabase: () => Promise<void> = async () => {};
  if (!adminUrl) {
    // Not migrated here: the template below is.
    const embedded = await startOwnPostgres({
      dataDir: path.resolve(".test-data", `pg-${process.pid}`),
      migrate: false,
      log: console.error,
    });
    adminUrl = embedded.url;
    stopDatabase = embedded.stop;
  }
  try {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${TEMPLATE}_catalog with (force)`);
    await admin.query(`drop database if exists ${TEMPLATE} with (force)`);
    await admin.query(`create database ${TEMPLATE}`);
    await admin.end();
    const templateUrl = new URL(adminUrl);
    templateUrl.pathname = `/${TEMPLATE}`;
    const pool = createPool(templateUrl.toString(), 2, "esim-test-template");
    await migrate(pool);
    await pool.end();
    // A second template with the default sandbox catalog, as `npm start` seeds it.
    await runAdmin(adminUrl, `create database ${TEMPLATE}_catalog template ${TEMPLATE}`);
    const catalogUrl = new URL(adminUrl);
    catalogUrl.pathname = `/${TEMPLATE}_catalog`;
    const seeded = createPool(catalogUrl.toString(), 2, "esim-test-template");
    await seedDefaultCatalogIfEmpty(seeded, "USD");
    await seeded.end();
    console.error(`test database ready in ${Date.now() - started} ms`);

    const args = process.argv.slice(2);
    const files = args.filter((arg) => !arg.startsWith("-"));
    const flags = args.filter((arg) => arg.startsWith("-"));
    const child = spawn(
      process.execPath,
      [
        "--test",
        "--test-concurrency=2",
        "--test-timeout=240000",
        ...flags,
        ...(files.length ? files : ["test/**/*.test.ts"]),
      ],
      {
        stdio: "inherit",
        env: { ...process.env, TEST_DATABASE_ADMIN_URL: adminUrl, TEST_DATABASE_TEMPLATE: TEMPLATE },
      },
    );
    return await new Promise<number>((resolve) =>
      child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))),
    );
  } finally {
    await stopDatabase();
  }
}

process.exitCode = await main();
