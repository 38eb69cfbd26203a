// Failed-authentication budgets over real HTTP: per client address (behind TRUSTED_PROXIES the
// rightmost untrusted address of X-Forwarded-For), per surface, and never in the way of a valid key.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { FailureBudget, LookupLane } from "../src/server/failure-budget.ts";
import { ApiError } from "../src/shared/errors.ts";
import { ADMIN_TOKEN, createTestApp, type TestApp } from "./support/app.ts";
import { addPerson } from "./support/people.ts";

const BUDGET = 5;

async function listening(app: TestApp): Promise<string> {
  return app.app.listen({ port: 0, host: "127.0.0.1" });
}

const junkKey = () => `sand_${randomBytes(32).toString("base64url")}`;

/** GET /v1/profile/wallet with `key`, as if forwarded for `forwarded_for` (no header when null). */
async function wallet(base: string, key: string, forwarded_for: string | null): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (forwarded_for !== null) headers["x-forwarded-for"] = forwarded_for;
  return fetch(`${base}/v1/profile/wallet`, { headers });
}

/** `count` junk keys one after another; the statuses in order. */
async function sendJunk(base: string, count: number, forwarded_for: (i: number) => string | null) {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await wallet(base, junkKey(), forwarded_for(i))).status);
  return statuses;
}

function assertSpent(statuses: number[], what: string): void {
  assert.deepEqual(statuses.slice(0, BUDGET), Array(BUDGET).fill(401), `${what}: the budget is answered 401`);
  assert.equal(statuses.at(-1), 429, `${what}: then 429`);
  assert.ok(statuses.filter((s) => s === 429).length >= statuses.length - BUDGET - 1, `${what}: ${statuses}`);
}

/** A console sign-in with `who`'s email and password (a person, or a made-up email: junk). */
async function consoleSignIn(
  base: string,
  who: { email: string; password: string; realm?: "partner" | "operator" },
  forwarded_for: string,
) {
  const area = who.realm === "operator" ? "/admin" : "";
  return fetch(`${base}/console${area}/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: base,
      "x-forwarded-for": forwarded_for,
    },
    body: new URLSearchParams({ email: who.email, password: who.password }).toString(),
  });
}

const junkPerson = (realm: "partner" | "operator" = "partner") => ({
  email: `${randomBytes(6).toString("hex")}@junk.test`,
  password: randomBytes(12).toString("base64url"),
  realm,
});

test("behind a trusted proxy, one client's junk keys get it 429 while new keys, the operator and console sign-in still work", async () => {
  const app = await createTestApp({ auth_failures_per_minute: BUDGET, trusted_proxies: ["127.0.0.1/32"] });
  // Keys this process has never seen, as after a restart: each is looked up in the database.
  const others = await app.createPartner("Other Travel");
  const neighbour = await app.createPartner("Same Office Travel");
  const pool = app.database.pool;
  const other_owner = await addPerson(pool, {
    realm: "partner",
    role: "owner",
    partner_id: others.partner_id,
  });
  const neighbour_owner = await addPerson(pool, {
    realm: "partner",
    role: "owner",
    partner_id: neighbour.partner_id,
  });
  const operator_admin = await addPerson(pool, { realm: "operator", role: "admin" });
  const base = await listening(app);
  const attacker = "203.0.113.66";
  const [junk, fresh, admin, console_partner, console_operator] = await Promise.all([
    sendJunk(base, 40, () => attacker),
    wallet(base, others.api_key, "198.51.100.10"),
    fetch(`${base}/admin/partners/${others.partner_id}/pricing`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "x-forwarded-for": "198.51.100.20" },
    }),
    consoleSignIn(base, other_owner, "198.51.100.30"),
    consoleSignIn(base, operator_admin, "198.51.100.31"),
  ]);
  assertSpent(junk, "the junk sender");
  assert.equal(fresh.status, 200, "a new key from another client");
  // Once the junk sender is surely out of budget, still: a key never used here, from another client.
  const late = await app.createPartner("Late Travel");
  assert.equal((await wallet(base, late.api_key, "198.51.100.11")).status, 200, "a new key after the flood");
  const own = await wallet(base, neighbour.api_key, attacker);
  assert.equal(own.status, 200, "a valid key from the junk sender's address: never refused by its failures");
  assert.equal(admin.status, 200, "the operator's /admin token");
  assert.equal(console_partner.status, 303, "a partner's person signs in to the console");
  assert.equal(console_operator.status, 303, "an operator's person signs in to the console");
  // The junk sender's own address is out of API-key failures only: its other surfaces are untouched.
  assert.equal((await wallet(base, junkKey(), attacker)).status, 429);
  assert.equal((await consoleSignIn(base, neighbour_owner, attacker)).status, 303);
  const operator = await fetch(`${base}/admin/partners/${others.partner_id}/pricing`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "x-forwarded-for": attacker },
  });
  assert.equal(operator.status, 200);
});

test("the client is the rightmost untrusted address: entries a client adds to the left change nothing", async () => {
  const app = await createTestApp({
    auth_failures_per_minute: BUDGET,
    trusted_proxies: ["127.0.0.1/32", "10.0.0.0/8"],
  });
  const base = await listening(app);
  // A client writing its own X-Forwarded-For, a first proxy appending the client's address, a second
  // trusted proxy (10.0.0.2) appending the first's: only 203.0.113.9 was seen by a trusted proxy.
  const statuses = await sendJunk(base, BUDGET + 3, (i) => `192.0.2.${i}, 203.0.113.9, 10.0.0.2`);
  assertSpent(statuses, "a client rotating the left of its header");
  const partner = await app.createPartner();
  assert.equal((await wallet(base, partner.api_key, "198.51.100.1, 10.0.0.2")).status, 200);
  // Entries that are not addresses share one budget: junk in the header makes no budgets of its own.
  const garbage = await sendJunk(base, BUDGET + 3, (i) => `not-an-address-${i}`);
  assertSpent(garbage, "a header that is not addresses");
});

test("without TRUSTED_PROXIES X-Forwarded-For is ignored: rotating it does not buy a client new budgets", async () => {
  const app = await createTestApp({ auth_failures_per_minute: BUDGET });
  const base = await listening(app);
  const statuses = await sendJunk(base, BUDGET + 3, (i) => `192.0.2.${i}`);
  assertSpent(statuses, "a client spoofing X-Forwarded-For");
  const partner = await app.createPartner();
  assert.equal((await wallet(base, partner.api_key, null)).status, 200, "the same address's valid new key");
});

test("each surface has its own budget: wrong console sign-ins from an address leave its /admin token working", async () => {
  const app = await createTestApp({ auth_failures_per_minute: BUDGET, trusted_proxies: ["127.0.0.1/32"] });
  const partner = await app.createPartner();
  const owner = await addPerson(app.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const base = await listening(app);
  const address = "203.0.113.77";
  const statuses: number[] = [];
  for (let i = 0; i < BUDGET + 2; i++)
    statuses.push((await consoleSignIn(base, junkPerson(), address)).status);
  assert.deepEqual(statuses.slice(0, BUDGET), Array(BUDGET).fill(401));
  assert.equal(statuses.at(-1), 429, "the console's sign-in budget is spent");
  const operator = await fetch(`${base}/admin/partners/${partner.partner_id}/pricing`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "x-forwarded-for": address },
  });
  assert.equal(operator.status, 200, "the /admin budget is another one");
  assert.equal((await wallet(base, partner.api_key, address)).status, 200, "and the API keys' too");
  assert.equal(
    (await consoleSignIn(base, owner, address)).status,
    429,
    "past the sign-in budget even the right password is 429: guessing learns nothing",
  );
  assert.equal((await consoleSignIn(base, owner, "198.51.100.77")).status, 303, "from elsewhere it signs in");
});

test("the lane of over-budget lookups runs two at once, queues a bounded few in order and refuses the rest", async () => {
  const lane = new LookupLane(2, 2);
  const full = new ApiError("rate_limited", "full");
  const started: number[] = [];
  const finish: Array<() => void> = [];
  const work = (i: number) => () =>
    new Promise<number>((resolve) => {
      started.push(i);
      finish[i] = () => resolve(i);
    });
  const runs = [0, 1, 2, 3].map((i) => lane.run(work(i), full));
  await assert.rejects(lane.run(work(4), full), (error) => error === full, "past both bounds: refused");
  await Promise.resolve();
  assert.deepEqual(started, [0, 1], "two in flight, two waiting");
  finish[1]!();
  assert.equal(await runs[1], 1);
  assert.deepEqual(started, [0, 1, 2], "a finished slot goes to the first waiting");
  for (const i of [0, 2]) finish[i]!();
  await Promise.all([runs[0], runs[2]]);
  finish[3]!();
  assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3]);
});

test("past its budget, a valid key waits in the lane's queue; with the queue full of junk it is 429 like the junk (documented)", async () => {
  const lane = new LookupLane(1, 1);
  const budget = new FailureBudget(60, "API keys", lane);
  const address = "203.0.113.5";
  const refused = () => Promise.reject(new ApiError("unauthorized", "junk"));
  for (let i = 0; i < 60; i++) await assert.rejects(budget.verifyKey(address, refused), { status: 401 });
  await assert.rejects(budget.verifyKey(address, refused), { status: 429 }, "the budget is spent");
  // Two slow junk lookups fill the lane (one in flight, one waiting).
  const release: Array<() => void> = [];
  const slowJunk = () =>
    new Promise<never>((_, reject) => release.push(() => reject(new ApiError("unauthorized", "junk"))));
  const junk = [budget.verifyKey(address, slowJunk), budget.verifyKey(address, slowJunk)].map((run) =>
    run.then(
      () => 200,
      (error: ApiError) => error.status,
    ),
  );
  const valid = () => Promise.resolve("partner");
  await assert.rejects(budget.verifyKey(address, valid), { status: 429 }, "a valid key: refused, lane full");
  release.shift()!();
  await new Promise((resolve) => setImmediate(resolve));
  const queued = budget.verifyKey(address, valid);
  await new Promise((resolve) => setImmediate(resolve));
  release.shift()!();
  assert.equal(await queued, "partner", "with room in the lane, the valid key is admitted");
  assert.deepEqual(await Promise.all(junk), [429, 429], "the junk itself: 429");
});

test("wrong partner sign-ins at the console leave the operator's console sign-in from that address working", async () => {
  const app = await createTestApp({ auth_failures_per_minute: BUDGET, trusted_proxies: ["127.0.0.1/32"] });
  const base = await listening(app);
  const operator_admin = await addPerson(app.database.pool, { realm: "operator", role: "admin" });
  const address = "203.0.113.78";
  const statuses: number[] = [];
  for (let i = 0; i < BUDGET + 2; i++)
    statuses.push((await consoleSignIn(base, junkPerson(), address)).status);
  assert.equal(statuses.at(-1), 429, "the partner sign-in's budget is spent");
  const operator = await consoleSignIn(base, operator_admin, address);
  assert.equal(
    operator.status,
    303,
    "the operator's person signs in: partner guesses are not operator guesses",
  );
  // Wrong operator passwords have their own budget, spent before the comparison (past it, even the right one is 429).
  const guesses: number[] = [];
  for (let i = 0; i < BUDGET + 1; i++)
    guesses.push((await consoleSignIn(base, junkPerson("operator"), address)).status);
  assert.equal(guesses.at(-1), 429);
  assert.equal((await consoleSignIn(base, operator_admin, address)).status, 429);
});

test("wrong METRICS_TOKENs from an address leave the carrier's callbacks from that address working", async () => {
  const callback_token = "carrier-callback-token-0123456789";
  const app = await createTestApp({
    auth_failures_per_minute: BUDGET,
    trusted_proxies: ["127.0.0.1/32"],
    metrics_token: "metrics-token-0123456789",
    carrier_callbacks_enabled: true,
    carrier_callback_token: callback_token,
  });
  const base = await listening(app);
  const address = "203.0.113.79";
  const scrapes: number[] = [];
  for (let i = 0; i < BUDGET + 1; i++) {
    const scrape = await fetch(`${base}/metrics`, {
      headers: { authorization: `Bearer ${junkKey()}`, "x-forwarded-for": address },
    });
    scrapes.push(scrape.status);
  }
  assert.equal(scrapes.at(-1), 429, "the metrics token's budget is spent");
  const callback = await fetch(`${base}/carrier/callbacks`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${callback_token}`,
      "content-type": "application/json",
      "x-forwarded-for": address,
    },
    body: "{}",
  });
  assert.equal(callback.status, 400, "the carrier's token is checked (its body refused), not 429");
});
