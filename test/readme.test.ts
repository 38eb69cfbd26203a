// The README's walk-through is pasted into a shell by people: run it, exactly as written
// (only the base URL and token changed), against a real service process.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { createTestDatabase } from "./support/db.ts";
import { startServiceProcess } from "./support/service.ts";

test("the README walk-through works when pasted into a shell", async () => {
  const readme = await readFile("README.md", "utf8");
  const script = [...readme.matchAll(/```sh\n(.*?)```/gs)]
    .map((m) => m[1]!)
    .find((block) => block.startsWith("BASE="));
  assert.ok(script, "the walk-through block exists");
  const database = await createTestDatabase();
  const data_dir = await mkdtemp(path.join(os.tmpdir(), "readme-"));
  const token = "readme-admin-token-0123456789";
  const service = await startServiceProcess({
    DATABASE_URL: database.url,
    ADMIN_TOKEN: token,
    DATA_DIR: data_dir,
  });
  after(() => service.stop());
  const runnable = script
    .replace("BASE=http://localhost:3000", `BASE=${service.url}`)
    .replace("ADMIN_TOKEN=dev-admin-token-change-me", `ADMIN_TOKEN=${token}`);
  const result = spawnSync("bash", ["-euo", "pipefail", "-c", runnable], {
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(result.status, 0, result.stderr);
  const lines = result.stdout.trim().split("\n");
  const order = JSON.parse(lines.find((line) => line.includes('"orderID"'))!);
  assert.equal(order.status, "completed");
  assert.equal(
    lines.filter((line) => line === order.orderID).length,
    1,
    "the retry printed the same orderID",
  );
  assert.equal(lines.at(-1), "completed");
  assert.ok(
    lines.some((line) => line.includes('"amount_minor":10000')),
    "the wallet was credited",
  );
  // The confirmation email is sent by a background job: give it a moment. It is written to a
  // dot-named temporary file first and renamed: wait until no such file is left half-written.
  let mail: string[] = [];
  const settled = () => mail.length > 0 && !mail.some((name) => name.startsWith("."));
  for (let i = 0; i < 50 && !settled(); i++) {
    mail = await readdir(path.join(data_dir, "mail")).catch(() => []);
    if (!settled()) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.deepEqual(mail, [`confirmation.${order.orderID}.eml`]);
});
