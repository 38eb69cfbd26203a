// The per-key rate limit holds across processes: two API processes against one database together
// allow a key its configured rate (within 20 %), not twice it. Each process takes 1/N of the
// budget, N being the live API processes counted by their heartbeat rows (server/live-processes.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { RateLimiter } from "../src/server/rate-limit.ts";
import { call, createWorld, newPartner } from "./support/world.ts";

const RATE_PER_S = 20;
const BURST = 20;
const WINDOW_MS = 3_000;
const LOOPS_PER_PROCESS = 4;

async function sharedBy(url: string): Promise<number | null> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = /^esim_rate_limit_processes (\d+)$/m.exec(text);
  return match ? Number(match[1]) : null;
}

test("two processes with one key together allow the key's configured rate, within 20 %", async () => {
  const world = await createWorld({
    services: 2,
    env: { RATE_LIMIT_PER_SECOND: String(RATE_PER_S), RATE_LIMIT_BURST: String(BURST) },
  });
  const urls = world.services.map((service) => service.url);
  const partner = await newPartner(urls[0]!, 0);
  // Both processes must have counted each other (a heartbeat every 2 s) before the budget is split.
  const deadline = Date.now() + 30_000;
  while ((await Promise.all(urls.map(sharedBy))).some((n) => n !== 2)) {
    assert.ok(Date.now() < deadline, "both processes see two live processes");
    await sleep(200);
  }

  const counts = { ok: 0, limited: 0, other: 0 };
  const started = performance.now();
  const loop = async (url: string) => {
    while (performance.now() - started < WINDOW_MS) {
      const answer = await call(url, "GET", "/v1/esim/destination/FR/packages", { key: partner.api_key });
      if (answer.status === 200) counts.ok++;
      else if (answer.status === 429) counts.limited++;
      else counts.other++;
    }
  };
  await Promise.all(urls.flatMap((url) => Array.from({ length: LOOPS_PER_PROCESS }, () => loop(url))));
  const elapsed_s = (performance.now() - started) / 1000;

  // A full bucket at the start, then the rate: what one process alone would allow in this window.
  const allowed = BURST + RATE_PER_S * elapsed_s;
  assert.equal(counts.other, 0);
  assert.ok(counts.limited > counts.ok, `the key was held back (${JSON.stringify(counts)})`);
  assert.ok(
    Math.abs(counts.ok - allowed) <= 0.2 * allowed,
    `${counts.ok} answered in ${elapsed_s.toFixed(2)} s against ${allowed.toFixed(0)} allowed`,
  );
});

test("a limiter shared by N processes allows 1/N of the rate and of the burst, and all of it alone again", () => {
  const limiter = new RateLimiter(10, 20);
  limiter.shareWith(4);
  let taken = 0;
  for (let i = 0; i < 100; i++) {
    try {
      limiter.take("key", 0);
      taken++;
    } catch {}
  }
  assert.equal(taken, 5, "a quarter of the burst");
  // One second later a quarter of the rate (2.5 tokens) has flowed back: two more, not three.
  assert.equal(limiter.take("key", 1_000).limit, 5);
  limiter.take("key", 1_000);
  assert.throws(() => limiter.take("key", 1_000));
  limiter.shareWith(1);
  assert.equal(limiter.processes, 1);
  assert.equal(limiter.take("other", 0).limit, 20);
});
