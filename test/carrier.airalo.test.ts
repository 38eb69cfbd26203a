// The Airalo adapter (src/carrier/airalo/) against the Airalo fake (src/simulators/airalo/, built
// from Airalo's docs) in-process, on this file's own PostgreSQL database. Assertions read the
// fake's own records (its order list) and our tables, not only the adapter's answers. A "new
// adapter" stands for another process, or this one after a crash: it shares only the database.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, beforeEach, describe, test } from "node:test";
import { AiraloCarrier } from "../src/carrier/airalo/airalo-carrier.ts";
import type { AiraloCarrierOptions } from "../src/carrier/airalo/config.ts";
import type { ProvisionedProfile } from "../src/carrier/carrier.ts";
import { hasValidLuhnDigit, luhnCheckDigit } from "../src/lib/luhn.ts";
import { DOCUMENTED_LIMITS } from "../src/simulators/airalo/rate-limit.ts";
import { startAiralo } from "../src/simulators/airalo/server.ts";
import { createTestDatabase } from "./support/db.ts";

const CLIENT_ID = "adapter-client";
const CLIENT_SECRET = "adapter-secret-1234";
const SMDP = "rsp.airalo-sim.test";
const PACKAGE = "uki-mobile-7days-1gb";
const TOPUP_PACKAGE = "uki-mobile-7days-1gb-topup";

const database = await createTestDatabase();
const fake = await startAiralo({
  pool: database.pool,
  port: 0,
  host: "127.0.0.1",
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
  smdp_address: SMDP,
  log: (message) => console.error(message),
});
after(() => fake.close());

/** Every call any adapter made, as "METHOD /path". */
const sent: string[] = [];
const recordingFetch: typeof fetch = (input, init) => {
  const url = new URL(String(input));
  sent.push(`${init?.method ?? "GET"} ${url.pathname}`);
  return fetch(input, init);
};
const sentCount = (call: string) => sent.filter((one) => one === call).length;

function adapter(options: Partial<AiraloCarrierOptions> = {}): AiraloCarrier {
  return new AiraloCarrier({
    pool: database.pool,
    base_url: `${fake.url}/v2`,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    timeout_ms: 5_000,
    fetch: recordingFetch,
    ...options,
  });
}

async function control(route: string, body?: unknown): Promise<any> {
  const response = await fetch(`${fake.url}${route}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${CLIENT_SECRET}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  assert.ok(response.ok, `${route}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** The fake's own order list, read as an operator would (a token of the test's own). */
let testToken: string | null = null;

async function airaloOrders(filter: Record<string, string>): Promise<any[]> {
  testToken ??= await operatorToken();
  const query = new URLSearchParams({ include: "sims,status", limit: "100" });
  for (const [name, value] of Object.entries(filter)) query.set(`filter[${name}]`, value);
  const response = await fetch(`${fake.url}/v2/orders?${query}`, {
    headers: { authorization: `Bearer ${testToken}`, accept: "application/json" },
  });
  assert.equal(response.status, 200);
  return ((await response.json()) as any).data;
}

async function operatorToken(): Promise<string> {
  const tokenAnswer = await fetch(`${fake.url}/v2/token`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      grant_type: "client_credentials",
    }),
  });
  return ((await tokenAnswer.json()) as any).data.access_token;
}

/** Airalo's orders carrying exactly this reference (the fake's LIKE finds more than that). */
async function ordersOf(reference: string): Promise<any[]> {
  const tag = `[esim-ref:${reference}]`;
  return (await airaloOrders({ description: tag })).filter((order) => order.description.includes(tag));
}

const newReference = () => `ord_${randomUUID().replaceAll("-", "")}`;

function provision(carrier: AiraloCarrier, reference: string, external_package_id = PACKAGE) {
  return carrier.provisionProfile({
    reference,
    external_package_id,
    data_mb: 1024,
    validity_days: 7,
    start_date: null,
    end_user_email: "traveller@example.com",
  });
}

function topUp(carrier: AiraloCarrier, reference: string, iccid: string) {
  return carrier.topUp({
    reference,
    iccid,
    external_package_id: TOPUP_PACKAGE,
    data_mb: 1024,
    validity_days: 7,
    end_user_email: "traveller@example.com",
  });
}

async function provisioned(carrier = adapter()): Promise<{ reference: string; profile: ProvisionedProfile }> {
  const reference = newReference();
  const outcome = await provision(carrier, reference);
  assert.equal(outcome.kind, "ok", JSON.stringify(outcome));
  return { reference, profile: (outcome as { value: ProvisionedProfile }).value };
}

beforeEach(async () => {
  await control("/control", {
    disarm: true,
    reset_rate_limits: true,
    rate_limits: DOCUMENTED_LIMITS,
    usage_cache_ms: 0,
  });
  await control("/control/account", { credit_usd: 100_000 });
});

describe("the access token", () => {
  test("two processes starting at once make one token request and share the token through the database", async () => {
    await database.pool.query("delete from supplier_tokens");
    const before = sentCount("POST /v2/token");
    const [one, two] = await Promise.all([provisioned(adapter()), provisioned(adapter())]);
    assert.notEqual(one.profile.iccid, two.profile.iccid);
    assert.equal(sentCount("POST /v2/token") - before, 1);
    const rows = await database.pool.query(
      "select supplier, access_token_sealed, expires_at from supplier_tokens",
    );
    assert.equal(rows.rows.length, 1);
    assert.equal(rows.rows[0].supplier, "airalo");
    // Sealed at rest: the stored text is not a bearer the fake would take.
    assert.match(rows.rows[0].access_token_sealed, /^v1:/);
    // A year's expires_in is believed for 24 hours at most (the docs' text).
    assert.ok(rows.rows[0].expires_at.getTime() <= Date.now() + 24 * 3600_000 + 60_000);
  });

  test("a token is refreshed once most of its lifetime has passed, before it expires", async () => {
    await database.pool.query("delete from supplier_tokens");
    let now = Date.now();
    const carrier = adapter({ now: () => now });
    const before = sentCount("POST /v2/token");
    await provisioned(carrier);
    await provisioned(carrier);
    assert.equal(sentCount("POST /v2/token") - before, 1);
    now += 20 * 3600_000; // 20 of 24 hours: due (80 %), not expired
    await provisioned(carrier);
    assert.equal(sentCount("POST /v2/token") - before, 2);
    // Another process reads the refreshed row rather than asking again.
    await provisioned(adapter({ now: () => now }));
    assert.equal(sentCount("POST /v2/token") - before, 2);
  });

  test("a 401 on a lookup refreshes the token and asks that GET once more", async () => {
    const reference = newReference();
    await control("/control", { arm: [{ operation: "order", kind: "commit_then_500" }] });
    assert.equal((await provision(adapter(), reference)).kind, "unavailable");
    await control("/control", {
      arm: [{ operation: "orders_list", kind: "status", status: 401, body: { message: "Unauthenticated." } }],
    });
    const before = sentCount("POST /v2/token");
    const outcome = await provision(adapter(), reference);
    assert.equal(outcome.kind, "ok", JSON.stringify(outcome));
    assert.equal(sentCount("POST /v2/token") - before, 1);
    assert.equal((await ordersOf(reference)).length, 1);
  });
});

describe("an authorization denial", () => {
  test('401 "This action is unauthorized." is a denial, not a stale token: no token request, unavailable', async () => {
    const reference = newReference();
    await control("/control", { arm: [{ operation: "order", kind: "commit_then_500" }] });
    assert.equal((await provision(adapter(), reference)).kind, "unavailable");
    const denial = { data: [], meta: { message: "This action is unauthorized." } };
    await control("/control", {
      arm: [{ operation: "orders_list", kind: "status", status: 401, body: denial }],
    });
    const tokens = sentCount("POST /v2/token");
    const outcome = await adapter().lookUpOutcome(reference);
    assert.equal(outcome.kind, "unavailable");
    assert.match((outcome as { reason: string }).reason, /unauthorized/);
    assert.equal(sentCount("POST /v2/token"), tokens);
    assert.equal((await adapter().lookUpOutcome(reference)).kind, "ok");
  });
});

describe("provisioning", () => {
  test("an eSIM is bought with our reference in its description; asking again answers the same eSIM", async () => {
    const carrier = adapter();
    const { reference, profile } = await provisioned(carrier);
    assert.ok(hasValidLuhnDigit(profile.iccid));
    assert.equal(profile.smdp_address, SMDP);
    const orders = await ordersOf(reference);
    assert.equal(orders.length, 1);
    assert.equal(orders[0].package_id, PACKAGE);
    assert.equal(Number(orders[0].quantity), 1);
    assert.equal(orders[0].sims[0].iccid, profile.iccid);
    assert.equal(orders[0].sims[0].qrcode, `LPA:1$${profile.smdp_address}$${profile.activation_code}`);
    const posts = sentCount("POST /v2/orders");
    assert.deepEqual(await provision(adapter(), reference), { kind: "ok", value: profile });
    assert.deepEqual(await adapter().lookUpOutcome(reference), { kind: "ok", value: profile });
    assert.equal(sentCount("POST /v2/orders"), posts);
    assert.equal((await ordersOf(reference)).length, 1);
  });

  test("each documented refusal code is refused, nothing is made, and asking again refuses without a POST", async () => {
    for (const code of [11, 14, 23, 33, 34, 43, 73]) {
      const reference = newReference();
      await control("/control", { arm: [{ operation: "order", kind: "error", code }] });
      const outcome = await provision(adapter(), reference);
      assert.equal(outcome.kind, "refused", `code ${code}: ${JSON.stringify(outcome)}`);
      assert.match((outcome as { reason: string }).reason, new RegExp(`Airalo error ${code}:`));
      const posts = sentCount("POST /v2/orders");
      assert.equal((await provision(adapter(), reference)).kind, "refused");
      assert.equal(sentCount("POST /v2/orders"), posts);
      assert.equal((await adapter().lookUpOutcome(reference)).kind, "refused");
      assert.equal((await ordersOf(reference)).length, 0, `code ${code}`);
    }
  });

  test("validation answers are refusals: an unknown package, a package out of stock, too little credit", async () => {
    const unknown = await provision(adapter(), newReference(), "no-such-package");
    assert.equal(unknown.kind, "refused");
    assert.match((unknown as { reason: string }).reason, /package_id: The selected package is invalid/);
    // The last eSIM of the package is sold, then none is left (stock 0 cannot be set directly:
    // the fake's control route reads a 0 as null, "no limit", through Fastify's type coercion).
    await control("/control", { stock: { [PACKAGE]: 1 } });
    assert.equal((await provision(adapter(), newReference())).kind, "ok");
    const stock = await provision(adapter(), newReference());
    await control("/control", { stock: { [PACKAGE]: null } });
    assert.equal(stock.kind, "refused");
    assert.match((stock as { reason: string }).reason, /Available quantity: 0/);
    await control("/control/account", { credit_usd: 0 });
    const credit = await provision(adapter(), newReference());
    assert.equal(credit.kind, "refused");
    assert.match((credit as { reason: string }).reason, /Airalo error 11/);
  });

  test("maintenance (13) and a 429 made nothing: unavailable, and the next call posts at once", async () => {
    for (const fault of [
      { operation: "order", kind: "error", code: 13 },
      { operation: "order", kind: "status", status: 429, body: { message: "Too Many Attempts." } },
    ]) {
      const reference = newReference();
      await control("/control", { arm: [fault] });
      assert.equal((await provision(adapter(), reference)).kind, "unavailable");
      assert.equal((await adapter().lookUpOutcome(reference)).kind, "not_found");
      assert.equal((await provision(adapter(), reference)).kind, "ok");
      assert.equal((await ordersOf(reference)).length, 1);
    }
  });

  test("a 5xx is unavailable; the retry asks Airalo first and posts only once the in-flight window is over", async () => {
    const reference = newReference();
    await control("/control", { arm: [{ operation: "order", kind: "status", status: 503 }] });
    assert.equal((await provision(adapter(), reference)).kind, "unavailable");
    // Within the window: Airalo has nothing, but a POST may still land: not posted again.
    const posts = sentCount("POST /v2/orders");
    assert.equal((await provision(adapter(), reference)).kind, "unavailable");
    assert.equal((await adapter().lookUpOutcome(reference)).kind, "unavailable");
    assert.equal(sentCount("POST /v2/orders"), posts);
    // After it (a window of 0 here): not found, then posted once.
    assert.deepEqual(await adapter({ in_flight_ms: 0 }).lookUpOutcome(reference), { kind: "not_found" });
    assert.equal((await provision(adapter({ in_flight_ms: 0 }), reference)).kind, "ok");
    assert.equal((await ordersOf(reference)).length, 1);
  });

  test("a dropped connection before anything was done: one order in the end", async () => {
    const reference = newReference();
    await control("/control", { arm: [{ operation: "order", kind: "drop" }] });
    assert.equal((await provision(adapter(), reference)).kind, "unavailable");
    assert.equal((await ordersOf(reference)).length, 0);
    assert.equal((await provision(adapter({ in_flight_ms: 0 }), reference)).kind, "ok");
    assert.equal((await ordersOf(reference)).length, 1);
  });

  for (const kind of ["commit_then_500", "drop_after_commit"]) {
    test(`${kind} on POST /v2/orders: the retry after a crash finds the order, one Airalo order, the same ICCID`, async () => {
      const reference = newReference();
      await control("/control", { arm: [{ operation: "order", kind }] });
      const lost = await provision(adapter(), reference);
      assert.equal(lost.kind, "unavailable");
      const made = await ordersOf(reference);
      assert.equal(made.length, 1);
      // A new adapter (another process), with the default 15-minute window: the lookup settles it.
      const posts = sentCount("POST /v2/orders");
      const retried = await provision(adapter(), reference);
      assert.equal(retried.kind, "ok", JSON.stringify(retried));
      const profile = (retried as { value: ProvisionedProfile }).value;
      assert.equal(profile.iccid, made[0].sims[0].iccid);
      assert.equal(profile.activation_code, made[0].sims[0].matching_id);
      assert.equal(sentCount("POST /v2/orders"), posts);
      assert.equal((await ordersOf(reference)).length, 1);
      assert.deepEqual(await adapter().lookUpOutcome(reference), { kind: "ok", value: profile });
    });
  }

  test("the lookup matches the exact reference, not one it is a prefix of", async () => {
    const long = newReference();
    const short = long.slice(0, -3);
    await control("/control", { arm: [{ operation: "order", kind: "commit_then_500" }] });
    assert.equal((await provision(adapter(), long)).kind, "unavailable");
    await control("/control", { arm: [{ operation: "order", kind: "status", status: 502 }] });
    assert.equal((await provision(adapter(), short)).kind, "unavailable");
    // Airalo's LIKE finds the long one's order for the short tag? The brackets prevent it; either way
    // the short reference is not given the long one's eSIM.
    assert.deepEqual(await adapter({ in_flight_ms: 0 }).lookUpOutcome(short), { kind: "not_found" });
    const longProfile = await provision(adapter(), long);
    assert.equal(longProfile.kind, "ok");
  });

  test("two callers racing for one new reference make one Airalo order", async () => {
    const reference = newReference();
    const outcomes = await Promise.all([provision(adapter(), reference), provision(adapter(), reference)]);
    assert.ok(outcomes.some((outcome) => outcome.kind === "ok"));
    assert.equal((await ordersOf(reference)).length, 1);
    assert.equal((await provision(adapter(), reference)).kind, "ok");
  });
});

/** Airalo as its examples show it: our description is not kept on top-up orders ("Topup (<iccid>)"). */
const withoutDescription: typeof fetch = (input, init) => {
  if (String(input).endsWith("/orders/topups") && init?.body instanceof FormData) {
    const form = new FormData();
    for (const [name, value] of init.body.entries()) if (name !== "description") form.append(name, value);
    return recordingFetch(input, { ...init, body: form });
  }
  return recordingFetch(input, init);
};

describe("top-ups", () => {
  test("a top-up is ordered once; asking again answers it without a second order", async () => {
    const { profile } = await provisioned();
    const reference = newReference();
    assert.deepEqual(await topUp(adapter(), reference, profile.iccid), {
      kind: "ok",
      value: { iccid: profile.iccid },
    });
    assert.deepEqual(await topUp(adapter(), reference, profile.iccid), {
      kind: "ok",
      value: { iccid: profile.iccid },
    });
    const topups = (await airaloOrders({ iccid: profile.iccid })).filter((order) => order.type === "topup");
    assert.equal(topups.length, 1);
    assert.equal(topups[0].package_id, TOPUP_PACKAGE);
  });

  for (const kind of ["commit_then_500", "drop_after_commit"]) {
    test(`${kind} on POST /v2/orders/topups: the retry finds it, one top-up at Airalo`, async () => {
      const { profile } = await provisioned();
      const reference = newReference();
      await control("/control", { arm: [{ operation: "topup", kind }] });
      assert.equal((await topUp(adapter(), reference, profile.iccid)).kind, "unavailable");
      const posts = sentCount("POST /v2/orders/topups");
      assert.deepEqual(await topUp(adapter(), reference, profile.iccid), {
        kind: "ok",
        value: { iccid: profile.iccid },
      });
      assert.equal(sentCount("POST /v2/orders/topups"), posts);
      const topups = (await airaloOrders({ iccid: profile.iccid })).filter((order) => order.type === "topup");
      assert.equal(topups.length, 1);
      assert.deepEqual(await adapter().lookUpOutcome(reference), {
        kind: "ok",
        value: { iccid: profile.iccid },
      });
    });
  }

  test('a lost top-up whose description Airalo replaced ("Topup (<iccid>)", as in the docs\' examples) is found by its eSIM, package and time', async () => {
    const { profile } = await provisioned();
    const reference = newReference();
    await control("/control", { arm: [{ operation: "topup", kind: "commit_then_500" }] });
    assert.equal(
      (await topUp(adapter({ fetch: withoutDescription }), reference, profile.iccid)).kind,
      "unavailable",
    );
    const [made] = (await airaloOrders({ iccid: profile.iccid })).filter((order) => order.type === "topup");
    assert.equal(made.description, `Topup (${profile.iccid})`);
    const posts = sentCount("POST /v2/orders/topups");
    assert.deepEqual(await topUp(adapter(), reference, profile.iccid), {
      kind: "ok",
      value: { iccid: profile.iccid },
    });
    assert.equal(sentCount("POST /v2/orders/topups"), posts);
    const row = await database.pool.query(
      "select airalo_order_id::text as id from airalo_orders where reference = $1",
      [reference],
    );
    assert.equal(row.rows[0].id, String(made.id));
  });

  test("two lost untagged top-ups of one package on one eSIM are not guessed: unavailable, nothing posted again", async () => {
    const { profile } = await provisioned();
    const [first, second] = [newReference(), newReference()];
    await control("/control", { arm: [{ operation: "topup", kind: "commit_then_500", times: 2 }] });
    assert.equal(
      (await topUp(adapter({ fetch: withoutDescription }), first, profile.iccid)).kind,
      "unavailable",
    );
    assert.equal(
      (await topUp(adapter({ fetch: withoutDescription }), second, profile.iccid)).kind,
      "unavailable",
    );
    const posts = sentCount("POST /v2/orders/topups");
    const outcome = await topUp(adapter(), first, profile.iccid);
    assert.equal(outcome.kind, "unavailable");
    assert.match((outcome as { reason: string }).reason, /an operator must match them/);
    assert.equal((await adapter().lookUpOutcome(second)).kind, "unavailable");
    assert.equal(sentCount("POST /v2/orders/topups"), posts);
  });

  test("top-ups disabled by the operator (23) and a recycled eSIM (73) are refused", async () => {
    const { profile } = await provisioned();
    await control("/control", { arm: [{ operation: "topup", kind: "error", code: 23 }] });
    const disabled = await topUp(adapter(), newReference(), profile.iccid);
    assert.equal(disabled.kind, "refused");
    assert.match((disabled as { reason: string }).reason, /Airalo error 23/);
    await control(`/control/sims/${profile.iccid}/recycle`, {});
    const recycled = await topUp(adapter(), newReference(), profile.iccid);
    assert.equal(recycled.kind, "refused");
    assert.match((recycled as { reason: string }).reason, /Airalo error 73/);
    const topups = (await airaloOrders({ iccid: profile.iccid })).filter((order) => order.type === "topup");
    assert.equal(topups.length, 0);
  });
});

describe("after the sale", () => {
  test("esimState: released and queued before use; installed with the used MB after; a top-up is a second bundle", async () => {
    const { reference, profile } = await provisioned();
    const fresh = await adapter().esimState(profile.iccid);
    assert.equal(fresh.kind, "ok");
    const before = (fresh as { value: any }).value;
    assert.equal(before.iccid, profile.iccid);
    assert.equal(before.profile.state, "released");
    assert.deepEqual(
      before.bundles.map((bundle: any) => [
        bundle.reference,
        bundle.status,
        bundle.data_mb,
        bundle.data_used_mb,
      ]),
      [[reference, "queued", 1024, 0]],
    );
    await control(`/control/sims/${profile.iccid}/usage`, { used_mb: 300 });
    const topUpReference = newReference();
    assert.equal((await topUp(adapter(), topUpReference, profile.iccid)).kind, "ok");
    const used = await adapter().esimState(profile.iccid);
    assert.equal(used.kind, "ok");
    const after = (used as { value: any }).value;
    assert.equal(after.profile.state, "installed");
    assert.deepEqual(
      after.bundles.map((bundle: any) => [
        bundle.reference,
        bundle.status,
        bundle.data_mb,
        bundle.data_used_mb,
      ]),
      [
        [reference, "active", 1024, 300],
        [topUpReference, "active", 1024, 0],
      ],
    );
    assert.ok(after.bundles[0].expires_at);
  });

  test("esimState: an unknown ICCID is not_found; Airalo's usage 429 is unavailable", async () => {
    const unknown = `894446540099999999${luhnCheckDigit("894446540099999999")}`;
    assert.deepEqual(await adapter().esimState(unknown), { kind: "not_found" });
    const { profile } = await provisioned();
    await control("/control", { rate_limits: { usage_per_iccid: { limit: 1, window_ms: 60_000 } } });
    assert.equal((await adapter().esimState(profile.iccid)).kind, "ok");
    const limited = await adapter().esimState(profile.iccid);
    assert.equal(limited.kind, "unavailable");
    assert.match((limited as { reason: string }).reason, /429/);
  });

  test("simulate is unavailable, as at a real carrier", async () => {
    const { profile } = await provisioned();
    assert.equal((await adapter().simulate(profile.iccid, { event: "install" })).kind, "unavailable");
  });

  test("a refund is a request: unavailable while Airalo reviews it, ok once Airalo shows the order refunded", async () => {
    const { reference, profile } = await provisioned();
    const request = { reference, iccid: profile.iccid };
    const requested = await adapter().cancelProfile(request);
    assert.equal(requested.kind, "unavailable");
    assert.match((requested as { reason: string }).reason, /refund \d+ requested/);
    const row = await database.pool.query("select refund_id from airalo_orders where reference = $1", [
      reference,
    ]);
    const refund_id = row.rows[0].refund_id;
    assert.ok(refund_id);
    const posts = sentCount("POST /v2/refund");
    assert.equal((await adapter().cancelProfile(request)).kind, "unavailable");
    assert.equal(sentCount("POST /v2/refund"), posts, "one request per reference");
    await control(`/control/refunds/${refund_id}/review`, { outcome: "approved" });
    assert.deepEqual(await adapter().cancelProfile(request), { kind: "ok" });
    assert.equal((await adapter().cancelBundle(request)).kind, "refused");
    assert.equal(await adapter().settleHeldCancel(request, "cancelled"), "not_held");
  });
});
