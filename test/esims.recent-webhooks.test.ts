// The memory of Airalo webhook bodies (src/esims/recent-webhooks.ts): a repeat per ICCID within
// the window, forgotten after it, and never more than MAX_REMEMBERED bodies kept.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_REMEMBERED, REPEAT_WINDOW_MS, RecentWebhooks } from "../src/esims/recent-webhooks.ts";

test("a body is a repeat for its own ICCID within the window only", () => {
  let now = 1_000_000;
  const recent = new RecentWebhooks(() => now);
  assert.equal(recent.repeated("8901", "{}"), false);
  assert.equal(recent.repeated("8901", "{}"), true);
  assert.equal(recent.repeated("8902", "{}"), false, "another eSIM's");
  assert.equal(recent.repeated("8901", '{"a":1}'), false, "another body");
  now += REPEAT_WINDOW_MS;
  assert.equal(recent.repeated("8901", "{}"), false, "past the window");
});

test("past MAX_REMEMBERED bodies the oldest is forgotten first, the newest kept", () => {
  const recent = new RecentWebhooks(() => 0);
  for (let i = 0; i <= MAX_REMEMBERED; i++) assert.equal(recent.repeated(`89${i}`, "{}"), false);
  assert.equal(recent.repeated(`89${MAX_REMEMBERED}`, "{}"), true, "the newest is kept");
  assert.equal(recent.repeated("890", "{}"), false, "the oldest went");
});
