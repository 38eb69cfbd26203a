// A rate limiter that has seen MAX_BUCKETS keys makes room for the next (src/server/rate-limit.ts,
// makeRoom): the buckets refilled to their burst go, which changes no answer; only a limiter whose
// buckets are nearly all busy is cleared.
import assert from "node:assert/strict";
import { test } from "node:test";
import { RateLimiter } from "../src/server/rate-limit.ts";

test("a limiter that is full forgets only buckets refilled to the burst: a busy key keeps its count", () => {
  const limiter = new RateLimiter(1, 3, undefined, 10);
  for (let i = 0; i < 3; i++) limiter.take("busy", 0);
  assert.throws(() => limiter.take("busy", 0), "the busy key has used its burst");
  // Nine more keys fill the limiter; by 2.5 s they have refilled (from 2 tokens, at 1 a second).
  for (let i = 0; i < 9; i++) limiter.take(`idle-${i}`, 0);
  for (let i = 0; i < 2; i++) limiter.take("busy", 2_000);
  // A new key makes room: the idle ones go, the busy one stays as empty as it was.
  assert.equal(limiter.take("new", 2_500).remaining, 2);
  assert.throws(() => limiter.take("busy", 2_500), "no fresh burst for the busy key");
  assert.equal(limiter.take("idle-0", 2_500).remaining, 2, "a forgotten key starts full, as it was");
});

test("a limiter full of busy buckets clears them all, as it always did", () => {
  const limiter = new RateLimiter(1, 3, undefined, 10);
  for (let i = 0; i < 10; i++) limiter.take(`busy-${i}`, 0);
  assert.equal(limiter.take("new", 0).remaining, 2);
  assert.equal(limiter.take("busy-0", 0).remaining, 2, "cleared: it starts again from the burst");
});

test("one idle bucket in ten is room enough: the nine busy ones keep their counts", () => {
  const limiter = new RateLimiter(1, 3, undefined, 10);
  limiter.take("idle", 0);
  for (let i = 0; i < 9; i++) for (let n = 0; n < 3; n++) limiter.take(`busy-${i}`, 2_000);
  assert.equal(limiter.take("new", 2_000).remaining, 2);
  for (let i = 0; i < 9; i++) assert.throws(() => limiter.take(`busy-${i}`, 2_000));
});
