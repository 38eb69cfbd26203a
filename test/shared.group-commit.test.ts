// The group commit (src/shared/group-commit.ts): items arriving during a write go together in the
// next one, each caller gets its own batch's answer, and a failed write is tried again within bounds.
import assert from "node:assert/strict";
import { test } from "node:test";
import { GroupCommit } from "../src/shared/group-commit.ts";

const quick = { max_batch: 3, retry_pauses_ms: [10, 10], retry_within_ms: 1_000 };

test("the first item is written alone; those arriving meanwhile go together, at most max_batch a write", async () => {
  const writes: number[][] = [];
  const batches = new GroupCommit(async (items: readonly number[]) => {
    writes.push([...items]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    return items.length;
  }, quick);
  const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => batches.add(n)));
  assert.deepEqual(writes, [[1], [2, 3, 4], [5, 6]]);
  assert.deepEqual(answers, [1, 3, 3, 3, 2, 2], "each caller has its own batch's answer");
});

test("a failed write is tried again after a pause; past the tries, its callers get the error", async () => {
  let calls = 0;
  const flaky = new GroupCommit(async () => {
    calls++;
    if (calls < 3) throw new Error(`blip ${calls}`);
    return "written";
  }, quick);
  assert.equal(await flaky.add("a"), "written");
  assert.equal(calls, 3);
  const broken = new GroupCommit(async () => {
    throw new Error("down");
  }, quick);
  await assert.rejects(Promise.all([broken.add(1), broken.add(2)]), /down/);
  // The writer goes on after a failure: a later item is written.
  let later = 0;
  const recovering = new GroupCommit(async (items: readonly number[]) => {
    later++;
    if (later <= 3) throw new Error("down");
    return items.length;
  }, quick);
  await assert.rejects(recovering.add(1), /down/);
  assert.equal(await recovering.add(2), 1);
});
