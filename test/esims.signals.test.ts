// The eSIM lifecycle after the sale, carrier side: signals from the real simulator process, pushed
// to POST /carrier/callbacks and pulled by the sync, applied forward only. Each test buys a real
// eSIM through a real service process and asserts on the esims, esim_bundles and events rows.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { loadConfig } from "../src/config.ts";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { applySignal } from "../src/esims/apply-signal.ts";
import { MAX_CONSECUTIVE_UNAVAILABLE, syncDueEsims } from "../src/esims/sync-esims.ts";
import { KeyedSlots } from "../src/shared/keyed-slots.ts";
import { runCli } from "./support/cli.ts";
import { topUpBody } from "./support/fixtures.ts";
import type { EsimSignal } from "./support/simulator.ts";
import { call, createWorld, type Json, newCart, newPartner, submit, waitFor } from "./support/world.ts";

const CALLBACK_TOKEN = "callback-token-0123456789abcdef";
// The first service neither pulls nor crashes: what it learns, it learns from callbacks and simulate.
const world = await createWorld({
  env: {
    CARRIER_CALLBACK_TOKEN: CALLBACK_TOKEN,
    USAGE_SYNC_MAX_PER_SECOND: "0",
    USAGE_SYNC_MIN_INTERVAL_S: "1",
  },
});
const api = world.services[0]!.url;
const db = createKysely<Database>(world.database.pool);
const simulator = world.simulator;
await simulator.pointCallbacksAt(`${api}/carrier/callbacks`, CALLBACK_TOKEN);

const TOPUP = { package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D" };

async function esimBought(): Promise<{
  api_key: string;
  partner_id: string;
  iccid: string;
  order_id: string;
}> {
  const partner = await newPartner(api, 1_000_00);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  const order = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(order.status, 200, JSON.stringify(order.body));
  return { ...partner, iccid: order.body.purchases[0].iccid, order_id: order.body.orderID };
}

async function esimRow(iccid: string) {
  const result = await sql<Json>`
    select status, installed_at, activated_at, expires_at, deleted_at, usage_updated_at, sync_failures,
           last_sync_error, last_synced_at
    from esims where iccid = ${iccid}`.execute(db);
  return result.rows[0]!;
}

async function bundleRows(iccid: string) {
  const result = await sql<Json>`
    select order_id, position, status, data_mb, data_used_mb, activated_at, expires_at
    from esim_bundles where iccid = ${iccid} order by position`.execute(db);
  return result.rows;
}

async function eventsOf(partner_id: string, type?: string) {
  const result = await sql<Json>`
    select type, dedup_key, data from events where partner_id = ${partner_id}
    ${type === undefined ? sql`` : sql`and type = ${type}`} order by seq`.execute(db);
  return result.rows;
}

function simulate(key: string, iccid: string, body: Json) {
  return call(api, "POST", `/v1/sandbox/esims/${iccid}/simulate`, { key, body });
}

function postSignal(signal: EsimSignal, token = CALLBACK_TOKEN) {
  return call(api, "POST", "/carrier/callbacks", {
    body: signal,
    headers: { authorization: `Bearer ${token}` },
  });
}

test("a whole lifecycle through sandbox simulate: install, use, deplete, top up, expire, delete", async () => {
  const esim = await esimBought();
  assert.equal((await esimRow(esim.iccid)).status, "released", "a new eSIM starts released");
  const [original] = await bundleRows(esim.iccid);
  assert.deepEqual(
    { order_id: original!.order_id, position: 0, status: original!.status, data_mb: original!.data_mb },
    { order_id: esim.order_id, position: 0, status: "queued", data_mb: 1024 },
    "the completed order put its bundle on the eSIM",
  );

  const installed = await simulate(esim.api_key, esim.iccid, { event: "install" });
  assert.equal(installed.status, 200, JSON.stringify(installed.body));
  assert.equal(installed.body.status, "installed");
  assert.ok((await esimRow(esim.iccid)).installed_at instanceof Date);

  const used = await simulate(esim.api_key, esim.iccid, { event: "use_data", data_mb: 600 });
  assert.equal(used.body.status, "active");
  assert.equal(used.body.usage.data_used_mb, 600);
  const active = await esimRow(esim.iccid);
  assert.ok(active.activated_at instanceof Date && active.expires_at instanceof Date);
  assert.equal(
    active.expires_at.getTime() - active.activated_at.getTime(),
    7 * 86_400_000,
    "7 days from first use",
  );

  const depleted = await simulate(esim.api_key, esim.iccid, { event: "use_data", data_mb: 500 });
  assert.equal(depleted.body.status, "depleted");
  assert.deepEqual(
    (await bundleRows(esim.iccid)).map((b) => [b.status, b.data_used_mb]),
    [["depleted", 1024]],
    "use stops at the bundle's data",
  );

  const topup = await call(api, "POST", "/v1/orders/submit-topup", {
    key: esim.api_key,
    body: topUpBody(esim.iccid, TOPUP),
  });
  assert.equal(topup.status, 200, JSON.stringify(topup.body));
  // The carrier starts the new bundle at once (the one before it has ended) and pushes that.
  await waitFor("the top-up's signal", async () => (await esimRow(esim.iccid)).status === "active");
  const revived = await bundleRows(esim.iccid);
  assert.deepEqual(
    revived.map((b) => b.status),
    ["depleted", "active"],
  );
  assert.equal(revived[1]!.order_id, topup.body.orderID);

  const expired = await simulate(esim.api_key, esim.iccid, { event: "expire" });
  assert.equal(expired.body.status, "expired");
  assert.deepEqual(
    expired.body.bundles.map((b: Json) => b.status),
    ["expired", "expired"],
    "expire ends every bundle",
  );

  const read = await call(api, "GET", `/v1/esims/${esim.iccid}`, { key: esim.api_key });
  assert.equal(read.status, 200);
  assert.deepEqual(read.body, expired.body, "GET /v1/esims/{iccid} shows what simulate answered");
  assert.ok(
    read.body.expires_at !== null && read.body.installed_at !== null && read.body.activated_at !== null,
  );

  const deleted = await simulate(esim.api_key, esim.iccid, { event: "delete" });
  assert.equal(deleted.body.status, "deleted");
  const final = await esimRow(esim.iccid);
  assert.equal(final.status, "deleted");
  assert.ok(final.deleted_at instanceof Date);

  const types = (await eventsOf(esim.partner_id)).filter((e) => e.type.startsWith("esim."));
  assert.deepEqual(
    types.map((e) => [e.type, e.data.threshold_percent ?? null]),
    [
      ["esim.installed", null],
      ["esim.activated", null],
      ["esim.usage_threshold", 50],
      ["esim.usage_threshold", 80],
      ["esim.usage_threshold", 100],
      ["esim.expired", null],
      ["esim.deleted", null],
    ],
  );
  assert.equal(types.at(-1)!.data.status, "deleted", "an event's data is the Esim after the change");
});

test("concurrent top-ups of one depleted eSIM while the carrier pushes each: all complete, none deadlocks, the eSIM is active with every bundle", async () => {
  const esim = await esimBought();
  const depleted = await simulate(esim.api_key, esim.iccid, { event: "use_data", data_mb: 1024 });
  assert.equal(depleted.body.status, "depleted");
  const answers = await Promise.all(
    Array.from({ length: 8 }, () =>
      call(api, "POST", "/v1/orders/submit-topup", { key: esim.api_key, body: topUpBody(esim.iccid, TOPUP) }),
    ),
  );
  for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.body));
  await waitFor("every push to land", async () => {
    const bundles = await bundleRows(esim.iccid);
    return bundles.length === 9 && bundles.filter((b) => b.status === "active").length === 1;
  });
  assert.equal((await esimRow(esim.iccid)).status, "active");
  const statuses = (await bundleRows(esim.iccid)).map((b) => b.status);
  // Which top-up runs first is the carrier's order of arrival, not necessarily ours.
  assert.deepEqual(
    [statuses[0], ...statuses.slice(1).sort()],
    ["depleted", "active", ...Array(7).fill("queued")],
    "one runs, the rest wait",
  );
});

test("sandbox simulate: use_data needs data_mb; malformed and other partners' ICCIDs are refused", async () => {
  const esim = await esimBought();
  const other = await newPartner(api, 0, "Other partner");
  const missing = await simulate(esim.api_key, esim.iccid, { event: "use_data" });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.code, "invalid_request");
  assert.equal((await simulate(esim.api_key, "8901", { event: "install" })).body.code, "invalid_iccid");
  const foreign = await simulate(other.api_key, esim.iccid, { event: "install" });
  assert.equal(foreign.status, 404);
  assert.equal(foreign.body.code, "esim_not_found");
  assert.equal((await esimRow(esim.iccid)).status, "released", "nothing happened");
});

test("signals delivered twice and out of order leave the same final state, thresholds once each", async () => {
  const esim = await esimBought();
  // Collect the carrier's signals without delivering them, then deliver them scrambled.
  await simulator.pointCallbacksAt(null);
  let signals: EsimSignal[];
  try {
    signals = [
      await simulator.simulate(esim.iccid, { event: "install" }),
      await simulator.simulate(esim.iccid, { event: "use_data", data_mb: 300 }),
      await simulator.simulate(esim.iccid, { event: "use_data", data_mb: 300 }),
      await simulator.simulate(esim.iccid, { event: "use_data", data_mb: 400 }),
    ];
  } finally {
    await simulator.pointCallbacksAt(`${api}/carrier/callbacks`, CALLBACK_TOKEN);
  }
  const [s1, s2, s3, s4] = signals as [EsimSignal, EsimSignal, EsimSignal, EsimSignal];
  for (const signal of [s3, s1, s3, s4, s2, s1, s4, s2]) {
    const answer = await postSignal(signal);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  }
  const after = await esimRow(esim.iccid);
  assert.equal(after.status, "active");
  assert.equal(after.installed_at.toISOString(), s1.profile.installed_at);
  assert.equal(after.usage_updated_at.toISOString(), s4.as_of);
  const [bundle] = await bundleRows(esim.iccid);
  assert.equal(bundle!.data_used_mb, 1000, "the greatest usage the carrier reported");
  assert.equal(bundle!.activated_at.toISOString(), s4.bundles[0]!.activated_at);

  for (const signal of signals) assert.equal((await postSignal(signal)).body.changed, false);
  const usage = await eventsOf(esim.partner_id, "esim.usage_threshold");
  assert.deepEqual(usage.map((e) => e.dedup_key).sort(), [
    `usage:${esim.order_id}:50`,
    `usage:${esim.order_id}:80`,
  ]);
  assert.equal((await eventsOf(esim.partner_id, "esim.installed")).length, 1);
});

test("the simulator's own duplicated, reordered and late pushes converge on the carrier's state", async () => {
  const esim = await esimBought();
  await simulator.control({
    callback_latency_ms: 20,
    callback_duplicate_share: 1,
    callback_reorder_share: 0.5,
    callback_reorder_ms: 300,
  });
  try {
    await simulator.simulate(esim.iccid, { event: "install" });
    for (const data_mb of [100, 200, 300, 424])
      await simulator.simulate(esim.iccid, { event: "use_data", data_mb });
  } finally {
    await simulator.control({
      callback_latency_ms: 0,
      callback_duplicate_share: 0,
      callback_reorder_share: 0,
    });
  }
  const carrier = await simulator.esimState(esim.iccid);
  assert.equal(carrier.bundles[0]!.status, "depleted");
  await waitFor("every push to land", async () => (await esimRow(esim.iccid)).status === "depleted");
  await new Promise((resolve) => setTimeout(resolve, 800)); // the held-back pushes arrive late
  const [bundle] = await bundleRows(esim.iccid);
  assert.deepEqual([bundle!.status, bundle!.data_used_mb], ["depleted", 1024]);
  assert.equal((await esimRow(esim.iccid)).status, "depleted", "a late push moved nothing back");
  assert.equal((await eventsOf(esim.partner_id, "esim.usage_threshold")).length, 3);
});

test("callbacks need the shared token", async () => {
  const esim = await esimBought();
  const signal = await simulator.esimState(esim.iccid);
  const wrong = await postSignal(signal, "not-the-callback-token-at-all");
  assert.equal(wrong.status, 401);
  const none = await call(api, "POST", "/carrier/callbacks", { body: signal });
  assert.equal(none.status, 401);
  // A valid ICCID (check digit right) that is none of ours: received, changes nothing.
  const unknown = await postSignal({ ...signal, iccid: "8901260999999999997" });
  assert.equal(unknown.status, 200, JSON.stringify(unknown.body));
  assert.deepEqual(unknown.body, { received: true, known: false, changed: false });
});

test("a callback naming a bundle we never held is accepted, the rest applied; only a pending order's bundle is 503", async () => {
  const esim = await esimBought();
  const carrier = await simulator.esimState(esim.iccid);
  const stranger = {
    reference: "ord_the_carrier_has_but_we_never_held",
    status: "queued" as const,
    data_mb: 1024,
    data_used_mb: 0,
    activated_at: null,
    expires_at: null,
  };
  const installed = { state: "installed" as const, installed_at: carrier.as_of, deleted_at: null };
  const signal = { ...carrier, profile: installed, bundles: [...carrier.bundles, stranger] };
  for (let attempt = 0; attempt < 2; attempt++) {
    const answer = await postSignal(signal);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body, { received: true, known: true, changed: attempt === 0 });
  }
  assert.equal((await esimRow(esim.iccid)).status, "installed", "what we know of the signal is applied");
  assert.deepEqual(
    (await bundleRows(esim.iccid)).map((b) => b.order_id),
    [esim.order_id],
  );

  // A top-up the carrier could not answer stays pending here: a signal naming its bundle is early.
  const topup = await call(api, "POST", "/v1/orders/submit-topup", {
    key: esim.api_key,
    body: topUpBody(esim.iccid, TOPUP, { email: "unavailable@carrier.test" }),
  });
  assert.equal(topup.status, 503, JSON.stringify(topup.body));
  const pending = await sql<{ order_id: string }>`
    select order_id from orders where iccid = ${esim.iccid} and type = 'topup' and status = 'pending'`.execute(
    db,
  );
  const order_id = pending.rows[0]!.order_id;
  const early = await postSignal({
    ...signal,
    bundles: [...carrier.bundles, { ...stranger, reference: order_id }],
  });
  assert.equal(early.status, 503, JSON.stringify(early.body));
  assert.equal(early.body.code, "service_unavailable");
  assert.equal(early.headers.get("retry-after"), "1");
});

test("an unauthenticated callback with a malformed body is answered 401, never the body's schema errors", async () => {
  const response = await call(api, "POST", "/carrier/callbacks", { body: { hello: 1 } as unknown as Json });
  assert.equal(response.status, 401, JSON.stringify(response.body));
  assert.doesNotMatch(JSON.stringify(response.body), /hello|iccid|body/);
});

test("a callback's bearer scheme is case-insensitive", async () => {
  const esim = await esimBought();
  const signal = await simulator.esimState(esim.iccid);
  const response = await call(api, "POST", "/carrier/callbacks", {
    body: signal,
    headers: { authorization: `bearer ${CALLBACK_TOKEN}` },
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
});

test("killed between a callback's receipt and its commit: the carrier's re-send lands it", async () => {
  const esim = await esimBought();
  const doomed = await world.startService({ CRASH_AT: "before_signal_commit" });
  await simulator.pointCallbacksAt(`${doomed.url}/carrier/callbacks`, CALLBACK_TOKEN);
  try {
    await simulator.simulate(esim.iccid, { event: "install" });
    await waitFor("the process to die", async () => doomed.process.signalCode === "SIGKILL");
    assert.equal((await esimRow(esim.iccid)).installed_at, null, "nothing of the signal committed");
  } finally {
    // The carrier keeps re-sending with backoff; now to a live service.
    await simulator.pointCallbacksAt(`${api}/carrier/callbacks`, CALLBACK_TOKEN);
  }
  await waitFor(
    "the re-sent callback",
    async () => (await esimRow(esim.iccid)).status === "installed",
    30_000,
  );
  assert.equal((await eventsOf(esim.partner_id, "esim.installed")).length, 1);
});

test("killed before a callback commits, the carrier gives up: the pull sync picks the change up", async () => {
  const esim = await esimBought();
  const doomed = await world.startService({ CRASH_AT: "before_signal_commit" });
  await simulator.pointCallbacksAt(`${doomed.url}/carrier/callbacks`, CALLBACK_TOKEN);
  try {
    await simulator.simulate(esim.iccid, { event: "use_data", data_mb: 700 });
    await waitFor("the process to die", async () => doomed.process.signalCode === "SIGKILL");
  } finally {
    await simulator.pointCallbacksAt(null);
  }
  const syncing = await world.startService({ USAGE_SYNC_MAX_PER_SECOND: "20" });
  try {
    await waitFor("the sync", async () => (await esimRow(esim.iccid)).status === "active", 30_000);
    const row = await esimRow(esim.iccid);
    assert.ok(row.last_synced_at instanceof Date);
    assert.equal(row.sync_failures, 0);
    assert.equal((await bundleRows(esim.iccid))[0]!.data_used_mb, 700);
    const thresholds = await eventsOf(esim.partner_id, "esim.usage_threshold");
    assert.deepEqual(
      thresholds.map((e) => e.data.threshold_percent),
      [50],
    );
  } finally {
    await syncing.stop();
    await simulator.pointCallbacksAt(`${api}/carrier/callbacks`, CALLBACK_TOKEN);
  }
});

test("an eSIM the carrier cannot answer for is counted as unreachable, not retried at once", async () => {
  const esim = await esimBought();
  await simulator.control({ down: true });
  // The carrier comes back up whatever happens here, a service that never started included: the
  // tests after this one buy from it.
  let syncing: Awaited<ReturnType<typeof world.startService>> | null = null;
  try {
    syncing = await world.startService({
      USAGE_SYNC_MAX_PER_SECOND: "20",
      USAGE_SYNC_MIN_INTERVAL_S: "60",
    });
    await sql`update esims set next_sync_at = now() where iccid = ${esim.iccid}`.execute(db);
    await waitFor("a failed pull", async () => (await esimRow(esim.iccid)).sync_failures > 0, 30_000);
    const row = await esimRow(esim.iccid);
    assert.match(row.last_sync_error, /503|down/);
    const due = await sql<{ due_in_s: number }>`
      select extract(epoch from next_sync_at - now())::float8 as due_in_s from esims where iccid = ${esim.iccid}`.execute(
      db,
    );
    assert.ok(due.rows[0]!.due_in_s >= 55, "the next pull waits at least the minimum interval");

    const cli = (args: string[]) => runCli(args, { DATABASE_URL: world.database.url, APP_ENV: "sandbox" });
    const listed = await cli(["esims", "unreachable", "--json"]);
    assert.equal(listed.code, 0, listed.stderr);
    const mine = JSON.parse(listed.stdout).data.find((e: Json) => e.iccid === esim.iccid);
    assert.ok(mine, "the unreachable eSIM is listed");
    assert.ok(mine.sync_failures >= 1 && mine.unreached_for_seconds >= 0);
    const shown = await cli(["esims", "show", esim.iccid, "--json"]);
    assert.equal(shown.code, 0, shown.stderr);
    const report = JSON.parse(shown.stdout);
    assert.equal(report.esim.iccid, esim.iccid);
    assert.equal(report.partner_id, esim.partner_id);
    assert.match(report.sync.last_sync_error, /503|down/);
  } finally {
    await syncing?.stop();
    await simulator.control({ down: false });
  }
});

test("a carrier down for three pulls in a row ends the round: the other claims are due again, not each one more timeout", async () => {
  const mine = [];
  for (let i = 0; i < 5; i++) mine.push((await esimBought()).iccid);
  const ctx = {
    config: { ...loadConfig({}), carrier_timeout_ms: 2_000, usage_sync_min_interval_s: 60 },
    pool: world.database.pool,
    db,
    carrier: new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 2_000 }),
    csv_exports: new KeyedSlots(1, 1),
  };
  await sql`update esims set next_sync_at = now() + interval '1 day'`.execute(db);
  await sql`update esims set next_sync_at = now() where iccid = any(${mine}::text[])`.execute(db);
  await simulator.control({ down: true });
  try {
    const round = await syncDueEsims(ctx, 5);
    assert.equal(round.claimed, 5);
    assert.equal(round.failed, MAX_CONSECUTIVE_UNAVAILABLE, JSON.stringify(round));
    assert.equal(round.released, 5 - MAX_CONSECUTIVE_UNAVAILABLE);
    const due = await sql<{ n: number }>`
      select count(*)::int as n from esims where iccid = any(${mine}::text[]) and next_sync_at <= now()`.execute(
      db,
    );
    assert.equal(due.rows[0]!.n, 5 - MAX_CONSECUTIVE_UNAVAILABLE, "the unpulled claims are due again");
  } finally {
    await simulator.control({ down: false });
    await sql`update esims set next_sync_at = now()`.execute(db);
  }
});

/** This test file's database and carrier, in this process, with the given minimum pull interval. */
function inProcess(usage_sync_min_interval_s: number) {
  return {
    config: { ...loadConfig({}), carrier_timeout_ms: 2_000, usage_sync_min_interval_s },
    pool: world.database.pool,
    db,
    carrier: new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 2_000 }),
  };
}

/** One pull of one eSIM, as the sync makes it (sync-esims.ts), without claiming others. */
async function pullOne(ctx: ReturnType<typeof inProcess>, iccid: string) {
  const outcome = await ctx.carrier.esimState(iccid);
  assert.equal(outcome.kind, "ok");
  if (outcome.kind === "ok") await applySignal(ctx, outcome.value, "pull");
}

async function nextSyncAt(iccid: string): Promise<Date | null> {
  const result = await sql<{ next_sync_at: Date | null }>`
    select next_sync_at from esims where iccid = ${iccid}`.execute(db);
  return result.rows[0]!.next_sync_at;
}

test("a released eSIM is pulled less often as it ages: a tenth of its age apart, at most daily", async () => {
  const ctx = inProcess(900);
  for (const [age, interval_s] of [
    ["10 days", 86_400],
    ["1 day", 8_640],
    ["1 minute", 900],
  ] as const) {
    const esim = await esimBought();
    await sql`update esims set created_at = now() - ${age}::interval where iccid = ${esim.iccid}`.execute(db);
    const before = Date.now();
    await pullOne(ctx, esim.iccid);
    assert.equal((await esimRow(esim.iccid)).status, "released");
    const in_s = ((await nextSyncAt(esim.iccid))!.getTime() - before) / 1000;
    assert.ok(in_s >= interval_s - 1 && in_s <= interval_s * 1.2 + 1, `${age} old: next pull in ${in_s} s`);
  }
});

test("the expiry warning is on time and an expired eSIM is not pulled again, until a top-up revives it", async () => {
  const esim = await esimBought();
  // Nothing pushed: what the service learns here, it learns by pulling.
  await simulator.pointCallbacksAt(null);
  const syncing = await world.startService({
    USAGE_SYNC_MAX_PER_SECOND: "20",
    USAGE_SYNC_MIN_INTERVAL_S: "3600",
  });
  try {
    await simulator.simulate(esim.iccid, { event: "use_data", data_mb: 10 });
    // The carrier's bundle ends 24 hours and 2 seconds from now: the warning is due in 2 seconds.
    await sql`update carrier_sim.bundles set expires_at = now() + interval '24 hours 2 seconds'
              where iccid = ${esim.iccid}`.execute(db);
    await pullOne(inProcess(3600), esim.iccid);
    const active = await esimRow(esim.iccid);
    assert.equal(active.status, "active");
    const line_ms = active.expires_at.getTime() - 24 * 3_600_000;
    const early_s = (line_ms - (await nextSyncAt(esim.iccid))!.getTime()) / 1000;
    assert.ok(early_s <= 0 && early_s > -2, `the next pull is right after the warning's line (${early_s} s)`);
    assert.equal((await eventsOf(esim.partner_id, "esim.expiring")).length, 0, "not yet");
    await waitFor(
      "the warning",
      async () => (await eventsOf(esim.partner_id, "esim.expiring")).length === 1,
      8_000,
    );
    assert.ok(Date.now() - line_ms < 4_000, "recorded within moments of its line, not an interval later");

    // The bundle ends in 2 seconds now: the pull is at its end, and then never again.
    await sql`update carrier_sim.bundles set expires_at = now() + interval '2 seconds'
              where iccid = ${esim.iccid}`.execute(db);
    await pullOne(inProcess(3600), esim.iccid);
    await waitFor("the expiry", async () => (await esimRow(esim.iccid)).status === "expired", 8_000);
    assert.equal((await eventsOf(esim.partner_id, "esim.expired")).length, 1);
    assert.equal(await nextSyncAt(esim.iccid), null, "an expired eSIM is not pulled");
    const pulled_at = (await esimRow(esim.iccid)).last_synced_at.getTime();
    await sql`update esims set sync_failures = 0 where iccid = ${esim.iccid}`.execute(db);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal((await esimRow(esim.iccid)).last_synced_at.getTime(), pulled_at, "no pull since");

    const topup = await call(api, "POST", "/v1/orders/submit-topup", {
      key: esim.api_key,
      body: topUpBody(esim.iccid, TOPUP),
    });
    assert.equal(topup.status, 200, JSON.stringify(topup.body));
    await waitFor("the revival", async () => (await esimRow(esim.iccid)).status === "active", 5_000);
    assert.notEqual(await nextSyncAt(esim.iccid), null, "pulled again while it can change");

    const deleted = await simulate(esim.api_key, esim.iccid, { event: "delete" });
    assert.equal(deleted.body.status, "deleted");
    assert.equal(await nextSyncAt(esim.iccid), null, "a deleted eSIM is not pulled");
  } finally {
    await syncing.stop();
    await simulator.pointCallbacksAt(`${api}/carrier/callbacks`, CALLBACK_TOKEN);
  }
});
