// One definition of an order id's, a partner id's and a date's pattern (src/shared/ids.ts,
// src/shared/day-range.ts): a copy that drifts would accept in one place what another refuses.
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";
import { DATE } from "../src/shared/day-range.ts";
import { ORDER_ID, PARTNER_ID } from "../src/shared/ids.ts";

const SRC = path.join(import.meta.dirname, "..", "src");
const COPIES = [
  /\^ord_\[A-Za-z0-9_-\]/,
  /\^ptr_\[A-Za-z0-9_-\]/,
  /\^\\d\{4\}-\\d\{2\}-\\d\{2\}\$/,
  /\^\[0-9\]\{4\}-\[0-9\]\{2\}/,
];

test("the id and date patterns are written once, in src/shared", async () => {
  const copies: string[] = [];
  for (const file of await readdir(SRC, { recursive: true })) {
    if (!file.endsWith(".ts") || file.startsWith(`shared${path.sep}`)) continue;
    const text = await readFile(path.join(SRC, file), "utf8");
    if (COPIES.some((copy) => copy.test(text))) copies.push(file);
  }
  assert.deepEqual(copies, []);
});

test("the shared patterns take what newId and the date parameters make, and nothing else", () => {
  assert.ok(ORDER_ID.test("ord_AAAAAAAAAAAAAAAAAAAAAA"));
  assert.ok(!ORDER_ID.test("ptr_AAAAAAAAAAAAAAAAAAAAAA"));
  assert.ok(PARTNER_ID.test("ptr_AAAAAAAAAAAAAAAAAAAAAA"));
  assert.ok(!PARTNER_ID.test("ptr_short"));
  assert.ok(DATE.test("2026-11-27"));
  assert.ok(!DATE.test("2026-11-27T00:00:00Z"));
});
