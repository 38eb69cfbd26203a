// The partner console spends a rate limit of its partner's, one bucket shared by all its people's
// sessions, as each of its API keys has one (console/routes.ts, requireSession): 150 parallel page
// loads all went through before there was one. Over
// real HTTP on a real port. The budget is shared as among 1,000 processes (RATE_LIMIT_BURST 10,000
// gives this process 10 requests, refilled at one per 1,000 s), so no token comes back while a test
// runs and no assertion depends on how fast the machine is.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestApp } from "./support/app.ts";
import { inParallel } from "./support/fixtures.ts";
import { request } from "./support/http.ts";
import { ownerCookie } from "./support/people.ts";

const SHARE = 10;
const app = await createTestApp({ rate_limit_per_second: 1, rate_limit_burst: SHARE * 1_000 });
app.keyLimiter.shareWith(1_000);
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });

/** A partner's owner signs in to the console through its form: the Cookie header. */
const signIn = (partner: { partner_id: string }) => ownerCookie(app.database.pool, base, partner.partner_id);

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

test("150 parallel page loads: the partner console's budget is served, the rest get the console's 429 page, none a 5xx", async () => {
  const partner = await app.createPartner("Busy Travel");
  const cookie = await signIn(partner);
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
  // A second person of the same partner shares the bucket: it is spent for them too.
  assert.equal((await load(await signIn(partner))).status, 429, "the partner's other people wait too");
  // The API keys have their own buckets: the partner's systems are not held back by its console.
  const api = await request(base, "GET", "/v1/profile/wallet", { key: partner.api_key });
  assert.equal(api.status, 200, JSON.stringify(api.body));
});

test("another partner's console is not held back by a busy one", async () => {
  const busy = await app.createPartner("Scripted Travel");
  const other = await app.createPartner("Quiet Travel");
  const cookie = await signIn(busy);
  await inParallel(SHARE + 5, SHARE + 5, () => load(cookie));
  assert.equal((await load(cookie)).status, 429, "the busy partner's console waits");
  assert.equal((await load(await signIn(other))).status, 200);
});
