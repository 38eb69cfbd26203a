import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { migrate } from "../src/db/migrate.ts";
import { createEmptyDatabase, createTestDatabase } from "./support/db.ts";

test("migrations are already applied in the template and a second run applies nothing", async () => {
  const { pool } = await createTestDatabase();
  const result = await migrate(pool);
  assert.deepEqual(result.applied, []);
});

test("two processes migrating the same empty database at once both succeed, once", async () => {
  const { url } = await createEmptyDatabase("esim_empty");
  const { spawn } = await import("node:child_process");
  const run = () =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, ["scripts/migrate.ts"], {
        env: { ...process.env, DATABASE_URL: url },
      });
      let out = "";
      child.stdout.on("data", (chunk) => (out += chunk));
      child.stderr.on("data", (chunk) => (out += chunk));
      child.on("exit", (code) => resolve({ code, out }));
    });
  const [first, second] = await Promise.all([run(), run()]);
  assert.equal(first.code, 0, first.out);
  assert.equal(second.code, 0, second.out);
  const check = new pg.Client({ connectionString: url });
  await check.connect();
  const rows = await check.query("select name from schema_migrations order by name");
  await check.end();
  const files = (await import("node:fs")).readdirSync("src/db/migrations").filter((f) => f.endsWith(".sql"));
  assert.deepEqual(
    rows.rows.map((r) => r.name),
    files.sort(),
  );
});
