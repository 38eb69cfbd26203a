// The traveller's details on an order (email, last name) and their indexes are the orders domain's:
// another domain's SQL that joins orders asks src/orders for the conditions on them
// (page-conditions.ts), so a change to those columns or indexes is made in one place. The import
// rule (.dependency-cruiser.cjs) cannot see a table named in another domain's SQL text; this test does.
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";

const SRC = path.join(import.meta.dirname, "..", "src");

test("no SQL outside src/orders reads an order's email or last name", async () => {
  const files = (await readdir(SRC, { recursive: true })).filter(
    (file) => file.endsWith(".sql.ts") && !file.startsWith(`orders${path.sep}`),
  );
  const readers: string[] = [];
  for (const file of files) {
    const text = await readFile(path.join(SRC, file), "utf8");
    for (const [, alias] of text.matchAll(/\bjoin\s+orders\s+(\w+)/gi))
      if (new RegExp(`\\b${alias}\\.(email|last_name)\\b`).test(text)) readers.push(file);
  }
  assert.deepEqual(readers, []);
});
