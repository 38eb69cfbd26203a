// The partner console spends its session's API key's rate limit, the same bucket as /v1 with that
// key (console/routes.ts, requireSession): 150 parallel page loads all went through before. Over
// real HTTP on a real port. The budget is shared as among 1,000 processes (RATE_LIMIT_BURST 10,000
// gives this process 10 requests, refilled at one per 1,000 s), so no token comes back while a test
// runs and no assertion depends on how fast the machine is.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestApp } from "./support/app.ts";
import { inParallel } from "./support/fixtures.ts";
import { request } from "./support/http.ts";

const SHARE = 10;
const app = await createTestApp({ rate_limit_per_second: 1, rate_limit_burst: SHARE * 1_000 });
app.keyLimiter.shareWith(1_000);
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });

/** Signs in to the partner console through its form and returns the Cookie header. */
async function signIn(api_key: string): Promise<string> {
  const answer = await fetch(`${base}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams({ secret: api_key }).toString(),
  });
  assert.equal(answer.status, 303);
  const value = /^console_partner=([A-Za-z0-9_-]{43});/.exec(answer.headers.get("set-cookie") ?? "")?.[1];
  assert.ok(value, "a session cookie");
  return `console_partner=${value}`;
}

type Load = { status: number; retry_after: string | null; type: string; text: string };

async function load(cookie: string, path = "/console"): Promise<Load> {
  const answer = await fetch(`${base}${path}`, { headers: { cookie }, redirect: "manual" });
  return {
    status: answer.status,
    retry_after: answer.headers.get("retry-after"),
    type: answer.headers.get("content-type") ?? "",
    text: await answer.text(),
  };
}

test("150 parallel page loads: the key's budget is served, the rest get the console's 429 page, none a 5xx", async () => {
  const partner = await app.createPartner("Busy Travel");
  const cookie = await signIn(partner.api_key);
  const pages = ["/console", "/console/orders", "/console/wallet", "/console/esims", "/console/webhooks"];
  const loads = await inParallel(150, 150, (i) => load(cookie, pages[i % pages.length]));
  const served = loads.filter((l) => l.status === 200);
  const limited = loads.filter((l) => l.status === 429);
  assert.deepEqual(
    loads.filter((l) => l.status !== 200 && l.status !== 429).map((l) => l.status),
    [],
    "only pages and 429s",
  );
  assert.ok(served.length >= 1 && served.length <= SHARE, `${served.length} served, at most the budget`);
  assert.equal(limited.length, 150 - served.length);
  for (const page of limited) {
    assert.match(page.type, /^text\/html/);
    assert.match(page.text, /Too many requests/);
    assert.ok(Number(page.retry_after) >= 1, "Retry-After");
  }
  // The same bucket as the API's with that key: it is spent too.
  const api = await request(base, "GET", "/v1/profile/wallet", { key: partner.api_key });
  assert.equal(api.status, 429, JSON.stringify(api.body));
  assert.equal(api.body.code, "rate_limited");
});

test("the API spends the console's budget, and another partner's console is not held back", async () => {
  const busy = await app.createPartner("Scripted Travel");
  const other = await app.createPartner("Quiet Travel");
  const cookie = await signIn(busy.api_key);
  const calls = await inParallel(SHARE + 5, SHARE + 5, () =>
    request(base, "GET", "/v1/profile/wallet", { key: busy.api_key }),
  );
  assert.ok(
    calls.some((call) => call.status === 429),
    "the API's own limit",
  );
  assert.equal((await load(cookie)).status, 429, "the console of the same key waits too");
  assert.equal((await load(await signIn(other.api_key))).status, 200);
});
