// Writes the OpenAPI document the app serves at /openapi.json to docs/openapi.json
// (`npm run openapi:write`), or with --check fails when the committed copy is stale
// (`npm run openapi:check`, run by CI before the linter).
import { readFile, writeFile } from "node:fs/promises";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { loadConfig } from "../src/config.ts";
import { createKysely, createPool } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { buildApp } from "../src/server/app.ts";
import { KeyedSlots } from "../src/shared/keyed-slots.ts";

const FILE = "docs/openapi.json";

export async function servedOpenapi(): Promise<string> {
  // Building the app opens no connection: the pool connects on first use, and nothing is used.
  const config = { ...loadConfig({}), log_level: "silent" as const, admin_token: "x".repeat(16) };
  const pool = createPool("postgres://unused@127.0.0.1:1/unused", 2);
  const carrier = new HttpCarrier({ base_url: "http://127.0.0.1:9", api_key: "unused", timeout_ms: 1000 });
  const csv_exports = new KeyedSlots(config.csv_exports_per_process, config.csv_exports_per_partner);
  const { app } = await buildApp({ config, pool, db: createKysely<Database>(pool), carrier, csv_exports });
  await app.ready();
  const response = await app.inject({ url: "/openapi.json" });
  await app.close();
  await pool.end();
  return `${JSON.stringify(response.json(), null, 2)}\n`;
}

if (import.meta.main) {
  const served = await servedOpenapi();
  if (process.argv.includes("--check")) {
    const committed = await readFile(FILE, "utf8").catch(() => "");
    if (committed !== served) {
      console.error(`${FILE} is stale: run \`npm run openapi:write\` and commit it.`);
      process.exit(1);
    }
    console.log(`${FILE} matches the served document.`);
  } else {
    await writeFile(FILE, served);
    console.log(`wrote ${FILE}`);
  }
}
