// `npm run fuzz -- --runs 5000 --seed N`: the long fuzz run (issue 5). Starts its own embedded
// PostgreSQL (test/support/postgres.ts: a temporary directory, a free port, migrated and seeded),
// builds the app and the carrier simulator (test/support/fuzz.ts) and prints the seed and a
// summary by route and status.
// Exit code 1 when any failure was found; the same seed replays the same requests.
import { parseArgs } from "node:util";
import { createPool } from "../src/db/pool.ts";
import { formatReport, runFuzz, startFuzzEnvironment } from "../test/support/fuzz.ts";
import { startOwnPostgres } from "../test/support/postgres.ts";

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

  const database = await startOwnPostgres();
  const pool = createPool(database.url, 10, "esim-fuzz");
  let close: (() => Promise<void>) | null = null;
  try {
    const env = await startFuzzEnvironment({ url: database.url, pool });
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
    await pool.end().catch(() => undefined);
    await database.stop();
  }
}

process.exitCode = await main();
