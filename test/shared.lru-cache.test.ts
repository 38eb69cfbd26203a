// The bounded cache behind GET /v1/esims/{iccid}/qr.png: never more than its bound, and the least
// recently used entry is the one forgotten.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LruCache } from "../src/shared/lru-cache.ts";

test("holds at most max_entries and evicts the least recently used", () => {
  const cache = new LruCache<number>(3);
  for (const [index, key] of ["a", "b", "c"].entries()) cache.set(key, index);
  assert.equal(cache.get("a"), 0); // a is now the most recently used
  cache.set("d", 3); // evicts b
  assert.equal(cache.size, 3);
  assert.equal(cache.get("b"), undefined);
  assert.deepEqual(
    ["a", "c", "d"].map((key) => cache.get(key)),
    [0, 2, 3],
  );
  for (let i = 0; i < 100; i++) cache.set(`k${i}`, i);
  assert.equal(cache.size, 3);
  assert.deepEqual(
    ["k97", "k98", "k99"].map((key) => cache.get(key)),
    [97, 98, 99],
  );
  cache.delete("k98");
  assert.equal(cache.get("k98"), undefined);
  assert.equal(cache.size, 2);
});

test("refuses a bound that is not a positive integer", () => {
  for (const bound of [0, -1, 1.5]) assert.throws(() => new LruCache(bound));
});
