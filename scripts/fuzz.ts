// `npm run fuzz -- --runs 5000 --seed N`: the long fuzz run (issue 5). Starts its own embedded
// PostgreSQL in a temporary directory on a free port, migrates and seeds it, builds the app and
// the carrier simulator (test/support/fuzz.ts) and prints the seed and a summary by route and status.
// Exit code 1 when any failure was found; the same seed replays the same requests.
import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { seedDefaultCatalogIfEmpty } from "../src/catalog/seed-catalog.ts";
import { startEmbeddedPostgres } from "../src/db/embedded.ts";
import { migrate } from "../src/db/migrate.ts";
import { createPool } from "../src/db/pool.ts";
import { formatReport, runFuzz, startFuzzEnvironment } from "../test/support/fuzz.ts";
import { freePort } from "../test/support/ports.ts";

const DATABASE = "esim_fuzz";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "5000" },
      seed: { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  const runs = Number(values.runs);
  const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
  if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs: a positive whole number");
  if (!Number.isInteger(seed)) throw new Error("--seed: a whole number");
  console.error(`fuzz: seed ${seed}, ${runs} requests (replay with --seed ${seed})`);

  const dir = await mkdtemp(path.join(os.tmpdir(), "esim-fuzz-"));
  // As root, PostgreSQL runs as the `postgres` user (src/db/embedded.ts), which must reach its directory.
  await chmod(dir, 0o755);
  let embedded: Awaited<ReturnType<typeof startEmbeddedPostgres>> | null = null;
  let pool: pg.Pool | null = null;
  let close: (() => Promise<void>) | null = null;
  try {
    embedded = await startEmbeddedPostgres({ dir: path.join(dir, "pg"), port: await freePort() });
    const admin = new pg.Client({ connectionString: embedded.url });
    await admin.connect();
    await admin.query(`create database ${DATABASE}`);
    await admin.end();
    const url = new URL(embedded.url);
    url.pathname = `/${DATABASE}`;
    pool = createPool(url.toString(), 10, "esim-fuzz");
    await migrate(pool);
    await seedDefaultCatalogIfEmpty(pool, "USD");
    const env = await startFuzzEnvironment({ url: url.toString(), pool });
    close = env.close;
    const report = await runFuzz(env, {
      seed,
      runs,
      onProgress: (done) => {
        if (done % 500 === 0) console.error(`  ${done}/${runs}`);
      },
    });
    console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
    return report.failures.length === 0 ? 0 : 1;
  } finally {
    await close?.().catch(() => undefined);
    await pool?.end().catch(() => undefined);
    await embedded?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
