// The eSIM Go adapter (src/carrier/esimgo/) against the eSIM Go fake (src/simulators/esimgo/, built
// from eSIM Go's docs) in-process, on this file's own PostgreSQL database. Assertions read the
// fake's own records (its order list, an eSIM's bundles, the balance) and our table, not only the
// adapter's answers. A "new adapter" stands for another process, or this one after a crash: it
// shares only the database.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, beforeEach, describe, test } from "node:test";
import type { ProvisionedProfile } from "../src/carrier/carrier.ts";
import type { EsimGoCarrierOptions } from "../src/carrier/esimgo/config.ts";
import { EsimGoCarrier } from "../src/carrier/esimgo/esimgo-carrier.ts";
import { RateLimit } from "../src/carrier/esimgo/rate-limit.ts";
import { hasValidLuhnDigit } from "../src/lib/luhn.ts";
import type { ControlPatch } from "../src/simulators/esimgo/faults.ts";
import { startEsimGoSimulator } from "../src/simulators/esimgo/server.ts";
import { createTestDatabase } from "./support/db.ts";

const API_KEY = "adapter-test-key-1234";
const BUNDLE = "esim_1GB_7D_GB_V2";
const OTHER_BUNDLE = "esim_3GB_30D_GB_V2";
const START_BALANCE = 500;

const database = await createTestDatabase();
const fake = await startEsimGoSimulator({
  pool: database.pool,
  port: 0,
  host: "127.0.0.1",
  apiKey: API_KEY,
  rate_limit_per_second: 100_000,
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

function adapter(options: Partial<EsimGoCarrierOptions> = {}): EsimGoCarrier {
  return new EsimGoCarrier({
    pool: database.pool,
    base_url: `${fake.url}/v2.4`,
    api_key: API_KEY,
    timeout_ms: 2_000,
    fetch: recordingFetch,
    ...options,
  });
}

/** The fake's own API and sandbox routes, as an operator would call them. */
async function api(method: string, path: string, body?: unknown): Promise<any> {
  const url = path.startsWith("/sandbox") ? `${fake.url}${path}` : `${fake.url}/v2.4${path}`;
  const response = await fetch(url, {
    method,
    headers: { "x-api-key": API_KEY, "content-type": "application/json", accept: "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

const arm = (patch: ControlPatch) => fake.control(patch);

/** The fake's orders made since the test began. */
let testStartedAt = new Date();
async function esimGoOrders(): Promise<any[]> {
  const query = new URLSearchParams({ createdAt: `gte:${testStartedAt.toISOString()}`, limit: "200" });
  return api("GET", `/orders?${query}`);
}

async function balance(): Promise<number> {
  return (await api("GET", "/organisation")).organisations[0].balance;
}

async function row(reference: string): Promise<any> {
  return (await database.pool.query("select * from esimgo_orders where reference = $1", [reference])).rows[0];
}

const newReference = () => `ord_${randomUUID().replaceAll("-", "")}`;

function provision(carrier: EsimGoCarrier, reference: string, item = BUNDLE) {
  return carrier.provisionProfile({
    reference,
    external_package_id: item,
    data_mb: 1000,
    validity_days: 7,
    start_date: null,
    end_user_email: "traveller@example.com",
  });
}

function topUp(carrier: EsimGoCarrier, reference: string, iccid: string, item = BUNDLE) {
  return carrier.topUp({
    reference,
    iccid,
    external_package_id: item,
    data_mb: 1000,
    validity_days: 7,
    end_user_email: "traveller@example.com",
  });
}

async function provisioned(carrier: EsimGoCarrier, reference = newReference()) {
  const outcome = await provision(carrier, reference);
  assert.equal(outcome.kind, "ok", JSON.stringify(outcome));
  return { reference, profile: (outcome as { value: ProvisionedProfile }).value };
}

beforeEach(async () => {
  fake.control({ clear_faults: true, latency_ms: 0, rate_limit_per_second: 100_000 });
  await api("POST", "/sandbox/organisation", { balance: START_BALANCE, refundsEnabled: false });
  // Orders of earlier tests are older than this (the fake and we share one machine's clock).
  await new Promise((resolve) => setTimeout(resolve, 20));
  testStartedAt = new Date();
});

describe("provisioning", () => {
  test("a purchase answers the eSIM's install details, charges the balance once and tags the eSIM with our reference", async () => {
    const { reference, profile } = await provisioned(adapter());
    assert.ok(hasValidLuhnDigit(profile.iccid));
    const details = await api("GET", `/esims/${profile.iccid}`);
    assert.equal(details.matchingId, profile.activation_code);
    assert.equal(details.smdpAddress, profile.smdp_address);
    const orders = await esimGoOrders();
    assert.equal(orders.length, 1);
    assert.equal(orders[0].order[0].item, BUNDLE);
    assert.equal(await balance(), START_BALANCE - orders[0].total);
    const stored = await row(reference);
    assert.equal(stored.order_reference, orders[0].orderReference);
    assert.equal(stored.customer_ref_set, true);
    const tagged = await api("GET", `/esims?filterBy=customerRef&filter=eq:${reference}`);
    assert.deepEqual(
      tagged.esims.map((esim: any) => esim.iccid),
      [profile.iccid],
    );
    // Asked again: the same eSIM from our row, nothing sent.
    const posts = sentCount("POST /v2.4/orders");
    const again = await provision(adapter(), reference);
    assert.deepEqual(again, { kind: "ok", value: profile });
    assert.equal(sentCount("POST /v2.4/orders"), posts);
  });

  test("an order answered without its eSIM is completed from the install details, asked for in JSON", async () => {
    const withoutEsims: typeof fetch = async (input, init) => {
      const response = await recordingFetch(input, init);
      if (init?.method !== "POST" || !String(input).endsWith("/orders")) return response;
      const body: any = await response.json();
      for (const line of body.order) line.esims = [];
      return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
    };
    const reference = newReference();
    const outcome = await provision(adapter({ fetch: withoutEsims }), reference);
    assert.equal(outcome.kind, "ok", JSON.stringify(outcome));
    const order = (await esimGoOrders())[0];
    assert.equal((outcome as { value: ProvisionedProfile }).value.iccid, order.order[0].iccids[0]);
    assert.equal(sentCount("GET /v2.4/esims/assignments") > 0, true);
  });

  test("insufficient balance is refused, nothing is made, and the refusal is kept without asking again", async () => {
    await api("POST", "/sandbox/organisation", { balance: 0.5 });
    const reference = newReference();
    const outcome = await provision(adapter(), reference);
    assert.equal(outcome.kind, "refused");
    assert.match((outcome as { reason: string }).reason, /Insufficient balance/);
    assert.equal((await esimGoOrders()).length, 0);
    assert.equal(await balance(), 0.5);
    const posts = sentCount("POST /v2.4/orders");
    assert.equal((await provision(adapter(), reference)).kind, "refused");
    assert.equal(sentCount("POST /v2.4/orders"), posts);
  });

  test("an unknown bundle is refused and nothing is made", async () => {
    const outcome = await provision(adapter(), newReference(), "esim_1GB_7D_XX_V2");
    assert.equal(outcome.kind, "refused");
    assert.match((outcome as { reason: string }).reason, /esim_1GB_7D_XX_V2/);
    assert.equal((await esimGoOrders()).length, 0);
  });

  test("a wrong API key is unavailable, names ESIMGO_API_KEY, and the next call posts", async () => {
    const reference = newReference();
    const outcome = await provision(adapter({ api_key: "not-the-key-000" }), reference);
    assert.equal(outcome.kind, "unavailable");
    assert.match((outcome as { reason: string }).reason, /403.*ESIMGO_API_KEY/);
    assert.equal((await row(reference)).requested_at, null);
    assert.equal((await esimGoOrders()).length, 0);
    await provisioned(adapter(), reference);
    assert.equal((await esimGoOrders()).length, 1);
  });

  test("a 429 from eSIM Go is unavailable with nothing made, and the next call posts at once", async () => {
    arm({ faults: [{ kind: "error", status: 429, method: "POST", path: "/orders" }] });
    const reference = newReference();
    const outcome = await provision(adapter(), reference);
    assert.equal(outcome.kind, "unavailable");
    assert.match((outcome as { reason: string }).reason, /429/);
    assert.equal((await esimGoOrders()).length, 0);
    await provisioned(adapter(), reference);
    assert.equal((await esimGoOrders()).length, 1);
  });

  test("our own limiter holds calls to ten a second, and says no rather than wait past a second", async () => {
    let now_ms = 5_000;
    const limit = new RateLimit(10, () => now_ms);
    for (let call = 0; call < 10; call++) assert.equal(limit.take(), 0);
    assert.equal(limit.take(), 1_000);
    now_ms += 1_000;
    assert.equal(limit.take(), 0);
  });
});

describe("lost answers", () => {
  for (const kind of ["commit_then_500", "drop_after_commit"] as const) {
    test(`${kind} on POST /orders, then a new adapter asks again: one eSIM Go order, the same eSIM`, async () => {
      arm({ faults: [{ kind, method: "POST", path: "/orders" }] });
      const reference = newReference();
      const first = await provision(adapter(), reference);
      assert.equal(first.kind, "unavailable");
      const made = await esimGoOrders();
      assert.equal(made.length, 1);
      const second = await provision(adapter(), reference);
      assert.equal(second.kind, "ok", JSON.stringify(second));
      assert.equal((second as { value: ProvisionedProfile }).value.iccid, made[0].order[0].iccids[0]);
      assert.equal((await esimGoOrders()).length, 1);
      assert.equal((await row(reference)).order_reference, made[0].orderReference);
      assert.deepEqual(await adapter().lookUpOutcome(reference), second);
    });
  }

  test("a POST that never landed is not posted again inside the in-flight window, and once after it", async () => {
    arm({ faults: [{ kind: "drop", method: "POST", path: "/orders" }] });
    const reference = newReference();
    assert.equal((await provision(adapter(), reference)).kind, "unavailable");
    const waiting = await provision(adapter(), reference);
    assert.equal(waiting.kind, "unavailable");
    assert.match((waiting as { reason: string }).reason, /may still land/);
    assert.equal((await adapter().lookUpOutcome(reference)).kind, "unavailable");
    assert.equal((await esimGoOrders()).length, 0);
    await provisioned(adapter({ in_flight_ms: 0 }), reference);
    assert.equal((await esimGoOrders()).length, 1);
  });

  test("two concurrent orders of one bundle, one answer lost: each gets its own eSIM Go order", async () => {
    arm({ faults: [{ kind: "drop_after_commit", method: "POST", path: "/orders" }] });
    const carrier = adapter();
    const [a, b] = [newReference(), newReference()];
    const outcomes = await Promise.all([provision(carrier, a), provision(carrier, b)]);
    // The one whose answer was lost is unavailable or, found by the other's wait, already ok.
    assert.ok(outcomes.some((outcome) => outcome.kind === "ok"));
    const again = await Promise.all([provision(adapter(), a), provision(adapter(), b)]);
    assert.deepEqual(
      again.map((outcome) => outcome.kind),
      ["ok", "ok"],
    );
    const orders = await esimGoOrders();
    assert.equal(orders.length, 2);
    const [rowA, rowB] = [await row(a), await row(b)];
    assert.notEqual(rowA.order_reference, rowB.order_reference);
    for (const [stored, outcome] of [
      [rowA, again[0]],
      [rowB, again[1]],
    ] as const) {
      const order = orders.find((one) => one.orderReference === stored.order_reference);
      assert.equal(order.order[0].iccids[0], (outcome as { value: ProvisionedProfile }).value.iccid);
    }
  });

  test("an order of the same bundle arriving after another's lost answer resolves that one first", async () => {
    arm({ faults: [{ kind: "commit_then_500", method: "POST", path: "/orders" }] });
    const [a, b] = [newReference(), newReference()];
    assert.equal((await provision(adapter(), a)).kind, "unavailable");
    const lost = (await esimGoOrders())[0];
    // A new process, B first: B waits out A's live call, finds A's order for A, then posts its own.
    await provisioned(adapter(), b);
    assert.equal((await row(a)).order_reference, lost.orderReference);
    assert.notEqual((await row(b)).order_reference, lost.orderReference);
    assert.equal((await esimGoOrders()).length, 2);
    assert.equal((await provision(adapter(), a)).kind, "ok");
  });

  test("an order whose POST never landed holds the bundle back only for its live call; later it posts its own", async () => {
    arm({ faults: [{ kind: "drop", method: "POST", path: "/orders" }] });
    const [a, b] = [newReference(), newReference()];
    assert.equal((await provision(adapter(), a)).kind, "unavailable");
    await provisioned(adapter(), b);
    assert.equal((await esimGoOrders()).length, 1);
    // A's window holds B's order, recorded for B: not A's. Past the in-flight window A posts.
    const late = await provision(adapter({ in_flight_ms: 0 }), a);
    assert.equal(late.kind, "ok", JSON.stringify(late));
    assert.equal((await esimGoOrders()).length, 2);
    assert.notEqual((await row(a)).order_reference, (await row(b)).order_reference);
  });

  test("a lost answer with a second unattributed order of the bundle in its window is left to an operator, never posted again", async () => {
    arm({ faults: [{ kind: "commit_then_500", method: "POST", path: "/orders" }] });
    const reference = newReference();
    assert.equal((await provision(adapter(), reference)).kind, "unavailable");
    // The same bundle bought outside this service (the portal, another integration) meanwhile.
    await api("POST", "/orders", {
      type: "transaction",
      assign: true,
      order: [{ type: "bundle", quantity: 1, item: BUNDLE }],
    });
    const posts = sentCount("POST /v2.4/orders");
    const outcome = await provision(adapter({ in_flight_ms: 0 }), reference);
    assert.equal(outcome.kind, "unavailable");
    assert.match((outcome as { reason: string }).reason, /an operator must match them/);
    assert.equal((await adapter({ in_flight_ms: 0 }).lookUpOutcome(reference)).kind, "unavailable");
    assert.equal(sentCount("POST /v2.4/orders"), posts);
    assert.equal((await esimGoOrders()).length, 2);
    assert.equal((await row(reference)).order_reference, null);
    assert.ok((await row(reference)).ambiguous_at);
    // Marked for an operator, it holds other orders of the bundle back no longer.
    const lookups = sentCount("GET /v2.4/orders");
    await provisioned(adapter());
    assert.equal(sentCount("GET /v2.4/orders"), lookups);
  });

  test("lookUpOutcome of a reference never posted is not_found", async () => {
    assert.deepEqual(await adapter().lookUpOutcome(newReference()), { kind: "not_found" });
  });
});

describe("top-ups", () => {
  test("a top-up puts the bundle on our eSIM, never on a new one", async () => {
    const { profile } = await provisioned(adapter());
    const reference = newReference();
    const outcome = await topUp(adapter(), reference, profile.iccid, OTHER_BUNDLE);
    assert.deepEqual(outcome, { kind: "ok", value: { iccid: profile.iccid } });
    const orders = await esimGoOrders();
    assert.equal(orders.length, 2);
    const topUpOrder = orders.find((order) => order.order[0].item === OTHER_BUNDLE);
    assert.deepEqual(topUpOrder.order[0].iccids, [profile.iccid]);
    assert.equal(topUpOrder.order[0].AllowReassign, false);
    const bundles = await api("GET", `/esims/${profile.iccid}/bundles`);
    assert.deepEqual(bundles.bundles.map((bundle: any) => bundle.name).sort(), [BUNDLE, OTHER_BUNDLE].sort());
  });

  test("a top-up on an incompatible eSIM is refused, not reassigned", async () => {
    const { profile } = await provisioned(adapter());
    await api("POST", `/sandbox/esims/${profile.iccid}`, { incompatible: true });
    const outcome = await topUp(adapter(), newReference(), profile.iccid);
    assert.equal(outcome.kind, "refused");
    assert.equal((await esimGoOrders()).length, 1);
  });

  test("a top-up whose answer was lost is found by a new adapter: one top-up order", async () => {
    const { profile } = await provisioned(adapter());
    arm({ faults: [{ kind: "drop_after_commit", method: "POST", path: "/orders" }] });
    const reference = newReference();
    assert.equal((await topUp(adapter(), reference, profile.iccid)).kind, "unavailable");
    const outcome = await topUp(adapter(), reference, profile.iccid);
    assert.deepEqual(outcome, { kind: "ok", value: { iccid: profile.iccid } });
    const orders = await esimGoOrders();
    assert.equal(orders.length, 2);
    const bundles = await api("GET", `/esims/${profile.iccid}/bundles`);
    assert.equal(bundles.bundles[0].assignments.length, 2);
    assert.equal((await row(reference)).order_reference, orders[0].orderReference);
    assert.deepEqual(orders[0].order[0].iccids, [profile.iccid]);
  });
});

describe("refunds", () => {
  test("an unused bundle is revoked with a refund once refunds are enabled; asked again, ok with no call", async () => {
    const { reference, profile } = await provisioned(adapter());
    const paid = await balance();
    const disabled = await adapter().cancelProfile({ reference, iccid: profile.iccid });
    assert.equal(disabled.kind, "refused");
    assert.match((disabled as { reason: string }).reason, /^refunds_disabled/);
    const still = await api("GET", `/esims/${profile.iccid}/bundles`);
    assert.equal(still.bundles[0].assignments[0].bundleState, "queued");
    await api("POST", "/sandbox/organisation", { refundsEnabled: true });
    assert.deepEqual(await adapter().cancelProfile({ reference, iccid: profile.iccid }), { kind: "ok" });
    assert.equal(await balance(), paid + (await esimGoOrders())[0].total);
    const deletes = sentCount(`DELETE /v2.4/esims/${profile.iccid}/bundles/${BUNDLE}`);
    assert.deepEqual(await adapter().cancelProfile({ reference, iccid: profile.iccid }), { kind: "ok" });
    assert.equal(sentCount(`DELETE /v2.4/esims/${profile.iccid}/bundles/${BUNDLE}`), deletes);
  });

  test("a used bundle is refused as bundle_used, and nothing is revoked", async () => {
    await api("POST", "/sandbox/organisation", { refundsEnabled: true });
    const { reference, profile } = await provisioned(adapter());
    await api("POST", `/sandbox/esims/${profile.iccid}/events`, { event: "use_data", bytes: 1_000_000 });
    const paid = await balance();
    assert.deepEqual(await adapter().cancelProfile({ reference, iccid: profile.iccid }), {
      kind: "refused",
      reason: "bundle_used",
    });
    assert.equal(await balance(), paid);
    const bundles = await api("GET", `/esims/${profile.iccid}/bundles`);
    assert.equal(bundles.bundles[0].assignments[0].bundleState, "active");
  });

  test("a queued top-up is refunded alone; settleHeldCancel holds nothing", async () => {
    await api("POST", "/sandbox/organisation", { refundsEnabled: true });
    const carrier = adapter();
    const { profile } = await provisioned(carrier);
    const reference = newReference();
    assert.equal((await topUp(carrier, reference, profile.iccid, OTHER_BUNDLE)).kind, "ok");
    assert.deepEqual(await carrier.cancelBundle({ reference, iccid: profile.iccid }), { kind: "ok" });
    const bundles = await api("GET", `/esims/${profile.iccid}/bundles?includeUsed=true`);
    const states = Object.fromEntries(
      bundles.bundles.map((bundle: any) => [bundle.name, bundle.assignments[0].bundleState]),
    );
    assert.deepEqual(states, { [BUNDLE]: "queued", [OTHER_BUNDLE]: "revoked" });
    assert.equal(
      await carrier.settleHeldCancel({ reference, iccid: profile.iccid }, "cancelled"),
      "not_held",
    );
  });
});

describe("esimState", () => {
  test("the profile and every bundle, named by our references, bytes as MB", async () => {
    const carrier = adapter();
    const { reference, profile } = await provisioned(carrier);
    const topUpReference = newReference();
    assert.equal((await topUp(carrier, topUpReference, profile.iccid, OTHER_BUNDLE)).kind, "ok");
    const fresh = await carrier.esimState(profile.iccid);
    assert.equal(fresh.kind, "ok");
    if (fresh.kind !== "ok") return;
    assert.deepEqual(fresh.value.profile, { state: "released", installed_at: null, deleted_at: null });
    await api("POST", `/sandbox/esims/${profile.iccid}/events`, { event: "use_data", bytes: 300_000_000 });
    const used = await carrier.esimState(profile.iccid);
    assert.equal(used.kind, "ok");
    if (used.kind !== "ok") return;
    assert.equal(used.value.profile.state, "installed");
    assert.ok(used.value.profile.installed_at);
    assert.deepEqual(
      used.value.bundles.map(({ reference, status, data_mb, data_used_mb }) => ({
        reference,
        status,
        data_mb,
        data_used_mb,
      })),
      [
        { reference, status: "active", data_mb: 1000, data_used_mb: 300 },
        { reference: topUpReference, status: "queued", data_mb: 3000, data_used_mb: 0 },
      ],
    );
    assert.ok(used.value.bundles[0]!.activated_at);
    assert.ok(used.value.bundles[0]!.expires_at);
  });

  test("an ICCID eSIM Go does not know is not_found (its 400), and simulate is unavailable", async () => {
    assert.deepEqual(await adapter().esimState("8944523000000000004"), { kind: "not_found" });
    assert.equal((await adapter().simulate("8944523000000000004", { event: "install" })).kind, "unavailable");
  });
});
