// The sandbox carrier simulator as a separate process, driven through the HttpCarrier adapter,
// against a real PostgreSQL. Assertions read the carrier's own records (/audit, /profiles) so a
// test fails when a second profile is provisioned or data is added twice, not only on a status.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { after, beforeEach, describe, test } from "node:test";
import fc from "fast-check";
import type { ProvisionRequest, TopUpRequest } from "../src/carrier/carrier.ts";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { hasValidLuhnDigit, isValidIccid, luhnCheckDigit } from "../src/lib/luhn.ts";
import { iccidFromSerial, MAX_SERIAL } from "../src/simulators/carrier/inventory.ts";
import { createTestDatabase } from "./support/db.ts";
import { type SimulatorProcess, startSimulatorProcess } from "./support/simulator.ts";

// Long enough that "nothing provisioned yet" right after the adapter gives up holds on a loaded machine.
const SLOW_MS = 2_500;
const SHORT_TIMEOUT_MS = 150;
const NO_FAULTS = {
  latency_ms: 0,
  slow_ms: SLOW_MS,
  refuse_share: 0,
  timeout_share: 0,
  fail_share: 0,
  down: false,
  // Where and how signals are pushed: nowhere in these tests, with no callback faults.
  callback_url: null,
  callback_token: null,
  callback_latency_ms: 0,
  callback_duplicate_share: 0,
  callback_reorder_share: 0,
  callback_reorder_ms: 1_000,
};

const database = await createTestDatabase();
const simulator = await startSimulatorProcess({
  databaseUrl: database.url,
  env: { SIMULATOR_SLOW_MS: String(SLOW_MS) },
  stopAfterTests: true,
});
const carrier = adapterFor(simulator);

beforeEach(async () => {
  await simulator.control(NO_FAULTS);
});

function adapterFor(sim: SimulatorProcess, timeout_ms = 5_000): HttpCarrier {
  return new HttpCarrier({ base_url: sim.url, api_key: sim.apiKey, timeout_ms });
}

function provisionRequest(overrides: Partial<ProvisionRequest> = {}): ProvisionRequest {
  return {
    reference: `ord_${randomUUID()}`,
    external_package_id: "pkg-eu-5gb-30d",
    data_mb: 5_120,
    validity_days: 30,
    start_date: null,
    end_user_email: "traveller@example.com",
    ...overrides,
  };
}

function topUpRequest(iccid: string, overrides: Partial<TopUpRequest> = {}): TopUpRequest {
  return {
    reference: `ord_${randomUUID()}`,
    iccid,
    external_package_id: "pkg-eu-1gb-7d",
    data_mb: 1_024,
    validity_days: 7,
    end_user_email: "traveller@example.com",
    ...overrides,
  };
}

async function provisioningsOf(sim: SimulatorProcess, reference: string) {
  return (await sim.audit()).provisionings.filter((row) => row.reference === reference);
}

async function refusalsOf(sim: SimulatorProcess, reference: string) {
  return (await sim.audit()).refusals.filter((row) => row.reference === reference);
}

async function provisioned(request: ProvisionRequest, through = carrier) {
  const outcome = await through.provisionProfile(request);
  assert.equal(outcome.kind, "ok", JSON.stringify(outcome));
  return (outcome as Extract<typeof outcome, { kind: "ok" }>).value;
}

/** Polls until `check` holds; the carrier finishes a slow call on its own clock. */
async function eventually(check: () => Promise<boolean>, timeout_ms = 15_000): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`condition not met within ${timeout_ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("provisioning", () => {
  test("returns a Luhn-valid ICCID from the inventory range and an LPA matching id, recorded once", async () => {
    const request = provisionRequest({ start_date: "2030-01-15" });
    const profile = await provisioned(request);

    assert.ok(isValidIccid(profile.iccid), profile.iccid);
    assert.match(profile.iccid, /^8901260\d{12}$/);
    assert.match(profile.activation_code, /^K2(-[A-Z0-9]{5}){3}$/);
    assert.equal(profile.smdp_address, "smdp.sandbox.esim.example");
    assert.match(
      `LPA:1$${profile.smdp_address}$${profile.activation_code}`,
      /^LPA:1\$[a-z0-9.-]+\$[A-Z0-9-]+$/,
    );
    const stored = await simulator.profile(profile.iccid);
    assert.equal(stored?.reference, request.reference);
    assert.equal(stored?.data_mb_total, 5_120);
    assert.equal(stored?.start_date, "2030-01-15");
    assert.deepEqual(
      (await provisioningsOf(simulator, request.reference)).map((row) => row.iccid),
      [profile.iccid],
    );
  });

  test("the same reference asked twice gets the same profile, provisioned once", async () => {
    const request = provisionRequest();
    const first = await provisioned(request);
    const second = await provisioned(request);
    assert.deepEqual(second, first);
    assert.equal((await provisioningsOf(simulator, request.reference)).length, 1);
  });

  test("20 concurrent calls with one reference get one profile and the same answer", async () => {
    const request = provisionRequest();
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => carrier.provisionProfile(request)));
    const iccids = new Set(
      outcomes.map((outcome) => (outcome.kind === "ok" ? outcome.value.iccid : outcome.kind)),
    );
    assert.equal(iccids.size, 1, JSON.stringify([...iccids]));
    assert.ok(isValidIccid([...iccids][0]!));
    assert.equal((await provisioningsOf(simulator, request.reference)).length, 1);
  });

  test("different references get different ICCIDs and matching ids", async () => {
    const profiles = await Promise.all(Array.from({ length: 10 }, () => provisioned(provisionRequest())));
    assert.equal(new Set(profiles.map((p) => p.iccid)).size, 10);
    assert.equal(new Set(profiles.map((p) => p.activation_code)).size, 10);
  });

  test("an unlimited plan is stored as unlimited", async () => {
    const profile = await provisioned(provisionRequest({ data_mb: null }));
    assert.equal((await simulator.profile(profile.iccid))?.data_mb_total, null);
  });
});

describe("sandbox magic values", () => {
  test("decline@carrier.test is refused, refused again on retry, and nothing is provisioned", async () => {
    const request = provisionRequest({ end_user_email: "decline@carrier.test" });
    const first = await carrier.provisionProfile(request);
    assert.deepEqual(first, { kind: "refused", reason: "declined by carrier (sandbox magic value)" });
    // The refusal belongs to the reference: even without the magic email it stays refused.
    const retry = await carrier.provisionProfile({ ...request, end_user_email: "someone@example.com" });
    assert.deepEqual(retry, first);
    assert.equal((await provisioningsOf(simulator, request.reference)).length, 0);
    assert.equal((await refusalsOf(simulator, request.reference)).length, 1);
  });

  test("unavailable@carrier.test is unavailable and records nothing", async () => {
    const request = provisionRequest({ end_user_email: "unavailable@carrier.test" });
    const outcome = await carrier.provisionProfile(request);
    assert.equal(outcome.kind, "unavailable");
    assert.equal((await provisioningsOf(simulator, request.reference)).length, 0);
    assert.equal((await refusalsOf(simulator, request.reference)).length, 0);
  });

  test("slow@carrier.test times out the adapter, then asking again returns the one profile", async () => {
    const impatient = adapterFor(simulator, SHORT_TIMEOUT_MS);
    const request = provisionRequest({ end_user_email: "slow@carrier.test" });
    const first = await impatient.provisionProfile(request);
    assert.equal(first.kind, "unavailable");
    assert.match((first as { reason: string }).reason, /within 150 ms/);
    assert.equal((await provisioningsOf(simulator, request.reference)).length, 0);

    // The carrier was only slow: it provisions once its sleep is over.
    await eventually(async () => (await provisioningsOf(simulator, request.reference)).length === 1);
    const again = await provisioned(request, impatient);
    const rows = await provisioningsOf(simulator, request.reference);
    assert.deepEqual(
      rows.map((row) => row.iccid),
      [again.iccid],
    );
  });
});

describe("injected faults", () => {
  test("timeout_share=1: the adapter times out, the work is done anyway, exactly once", async () => {
    await simulator.control({ timeout_share: 1 });
    const impatient = adapterFor(simulator, SHORT_TIMEOUT_MS);
    const request = provisionRequest();
    assert.equal((await impatient.provisionProfile(request)).kind, "unavailable");
    // A retry while the first call still sleeps also times out, and must not provision a second profile.
    assert.equal((await impatient.provisionProfile(request)).kind, "unavailable");
    await eventually(async () => (await provisioningsOf(simulator, request.reference)).length === 1);

    await simulator.control({ timeout_share: 0 });
    const profile = await provisioned(request);
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
    assert.deepEqual(
      (await provisioningsOf(simulator, request.reference)).map((row) => row.iccid),
      [profile.iccid],
    );
  });

  test("down: every carrier call is unavailable with a 503, nothing recorded, until it is back up", async () => {
    await simulator.control({ down: true });
    const request = provisionRequest();
    assert.equal((await carrier.provisionProfile(request)).kind, "unavailable");
    const raw = await fetch(`${simulator.url}/profiles`, {
      method: "POST",
      headers: { authorization: `Bearer ${simulator.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(request),
    });
    assert.equal(raw.status, 503);
    assert.equal((await provisioningsOf(simulator, request.reference)).length, 0);

    await simulator.control({ down: false });
    await provisioned(request);
    assert.equal((await provisioningsOf(simulator, request.reference)).length, 1);
  });

  test("fail_share=1: unavailable and nothing provisioned", async () => {
    await simulator.control({ fail_share: 1 });
    const request = provisionRequest();
    assert.equal((await carrier.provisionProfile(request)).kind, "unavailable");
    assert.equal((await provisioningsOf(simulator, request.reference)).length, 0);
  });

  test("refuse_share=1 refuses a new reference for good but never a known one", async () => {
    const known = provisionRequest();
    const profile = await provisioned(known);
    await simulator.control({ refuse_share: 1 });
    assert.deepEqual(await provisioned(known), profile);

    const fresh = provisionRequest();
    assert.equal((await carrier.provisionProfile(fresh)).kind, "refused");
    await simulator.control({ refuse_share: 0 });
    assert.equal((await carrier.provisionProfile(fresh)).kind, "refused");
    assert.equal((await provisioningsOf(simulator, fresh.reference)).length, 0);
  });

  test("latency_ms delays every carrier call by at least that much", async () => {
    await simulator.control({ latency_ms: 200 });
    const started = performance.now();
    await provisioned(provisionRequest());
    assert.ok(performance.now() - started >= 190);
  });

  test("POST /control changes only the given settings and GET /control reads them back", async () => {
    const settings = await simulator.control({ refuse_share: 0.25 });
    assert.deepEqual(settings, { ...NO_FAULTS, refuse_share: 0.25 });
    const read = await fetch(`${simulator.url}/control`, {
      headers: { authorization: `Bearer ${simulator.apiKey}` },
    });
    assert.deepEqual(await read.json(), settings);
    await assert.rejects(simulator.control({ refuse_share: 2 }), /HTTP 400/);
  });
});

describe("audit", () => {
  test("since and limit bound what /audit lists, and counts say what was left out", async () => {
    const since = new Date().toISOString();
    const references = [provisionRequest(), provisionRequest(), provisionRequest()];
    for (const request of references) await provisioned(request);
    const page = await simulator.audit({ since, limit: 2 });
    assert.equal(page.counts.provisionings, 3);
    assert.equal(page.provisionings.length, 2);
    assert.equal(page.truncated, true);
    assert.deepEqual(
      page.provisionings.map((row) => row.reference),
      references.slice(0, 2).map((request) => request.reference),
    );
    const future = await simulator.audit({ since: new Date(Date.now() + 60_000).toISOString() });
    assert.deepEqual(future.counts, { provisionings: 0, topups: 0, refusals: 0, cancellations: 0 });
  });
});

describe("top-ups", () => {
  test("a top-up adds its data once per reference, also when retried and sent concurrently", async () => {
    const profile = await provisioned(provisionRequest({ data_mb: 1_000 }));
    const topUp = topUpRequest(profile.iccid, { data_mb: 500 });
    assert.deepEqual(await carrier.topUp(topUp), { kind: "ok", value: { iccid: profile.iccid } });
    assert.deepEqual(await carrier.topUp(topUp), { kind: "ok", value: { iccid: profile.iccid } });
    assert.equal((await simulator.profile(profile.iccid))?.data_mb_total, 1_500);

    const second = topUpRequest(profile.iccid, { data_mb: 250 });
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => carrier.topUp(second)));
    assert.ok(outcomes.every((outcome) => outcome.kind === "ok"));
    const stored = await simulator.profile(profile.iccid);
    assert.equal(stored?.data_mb_total, 1_750);
    assert.deepEqual(
      stored?.topups.map((row) => [row.reference, row.data_mb]),
      [
        [topUp.reference, 500],
        [second.reference, 250],
      ],
    );
  });

  test("an unlimited profile stays unlimited after a top-up", async () => {
    const profile = await provisioned(provisionRequest({ data_mb: null }));
    assert.equal((await carrier.topUp(topUpRequest(profile.iccid))).kind, "ok");
    assert.equal((await simulator.profile(profile.iccid))?.data_mb_total, null);
  });

  test("a top-up of an unknown ICCID is refused, stays refused, and adds nothing", async () => {
    const unknown = iccidFromSerial(MAX_SERIAL);
    const request = topUpRequest(unknown);
    const outcome = await carrier.topUp(request);
    assert.equal(outcome.kind, "refused");
    assert.equal((await carrier.topUp(request)).kind, "refused");
    const audit = await simulator.audit();
    assert.equal(audit.topups.filter((row) => row.reference === request.reference).length, 0);
    assert.deepEqual(
      audit.refusals.filter((row) => row.reference === request.reference).map((row) => row.kind),
      ["topup"],
    );
  });

  test("a declined top-up is refused and adds nothing", async () => {
    const profile = await provisioned(provisionRequest({ data_mb: 1_000 }));
    const outcome = await carrier.topUp(
      topUpRequest(profile.iccid, { end_user_email: "decline@carrier.test" }),
    );
    assert.equal(outcome.kind, "refused");
    assert.equal((await simulator.profile(profile.iccid))?.data_mb_total, 1_000);
  });
});

describe("security", () => {
  test("a wrong API key: the adapter says unavailable, the raw call gets 401, nothing provisioned", async () => {
    const request = provisionRequest();
    const wrong = new HttpCarrier({ base_url: simulator.url, api_key: "not-the-key", timeout_ms: 5_000 });
    const outcome = await wrong.provisionProfile(request);
    assert.equal(outcome.kind, "unavailable");
    assert.match((outcome as { reason: string }).reason, /401/);

    for (const path of ["/profiles", "/topups", "/control", "/audit"]) {
      const raw = await fetch(simulator.url + path, {
        method: path === "/audit" ? "GET" : "POST",
        headers: { authorization: "Bearer not-the-key", "content-type": "application/json" },
        body: path === "/audit" ? undefined : JSON.stringify(request),
      });
      assert.equal(raw.status, 401, path);
    }
    const missing = await fetch(`${simulator.url}/audit`);
    assert.equal(missing.status, 401);
    assert.equal((await provisioningsOf(simulator, request.reference)).length, 0);
  });

  test("a malformed request is rejected with 400, which the adapter reports as unavailable", async () => {
    const request = provisionRequest({ validity_days: 0 });
    assert.equal((await carrier.provisionProfile(request)).kind, "unavailable");
    const badDate = provisionRequest({ start_date: "2030-02-30" });
    assert.equal((await carrier.provisionProfile(badDate)).kind, "unavailable");
    assert.equal((await provisioningsOf(simulator, badDate.reference)).length, 0);
  });
});

/** A fake carrier that answers whatever the current test sets, for the adapter's edge cases. */
type Handler = (response: http.ServerResponse) => void;
let handler: Handler = (response) => response.end();
const fake = http.createServer((request, response) => {
  request.resume();
  request.on("end", () => handler(response));
});
const fakeUrl = await new Promise<string>((resolve) =>
  fake.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(fake.address() as { port: number }).port}`)),
);
after(() => {
  fake.closeAllConnections();
  fake.close();
});
const adapter = new HttpCarrier({ base_url: fakeUrl, api_key: "k", timeout_ms: 2_000 });

describe("the adapter against a misbehaving carrier", () => {
  const json =
    (status: number, body: unknown): Handler =>
    (response) =>
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

  const cases: [string, Handler][] = [
    [
      "a 200 whose ICCID fails the Luhn check",
      json(200, { iccid: "8901260000000000013", smdp_address: "a.b", activation_code: "K2-A" }),
    ],
    ["a 200 without an activation code", json(200, { iccid: "89014103211118510720", smdp_address: "a.b" })],
    ["a 200 that is not JSON", (response) => response.writeHead(200).end("<html>")],
    ["a 200 larger than 64 KiB", json(200, { padding: "x".repeat(100_000) })],
    [
      "a 200 streamed past 64 KiB without a length",
      (response) => {
        response.writeHead(200, { "content-type": "application/json" });
        for (let i = 0; i < 100; i++) response.write("x".repeat(1_024));
        response.end();
      },
    ],
    ["a 422 that does not say refused", json(422, { error: "validation" })],
    ["a redirect", (response) => response.writeHead(302, { location: "http://example.com/" }).end()],
    ["a 500", json(500, { error: "boom" })],
    ["a socket closed without an answer", (response) => response.socket?.destroy()],
  ];
  for (const [name, answer] of cases) {
    test(`${name} is unavailable, never a crash or a refusal`, async () => {
      handler = answer;
      assert.equal((await adapter.provisionProfile(provisionRequest())).kind, "unavailable");
    });
  }

  test("a 422 refusal is passed on with its reason", async () => {
    handler = json(422, { error: "refused", reason: "no coverage" });
    assert.deepEqual(await adapter.provisionProfile(provisionRequest()), {
      kind: "refused",
      reason: "no coverage",
    });
  });

  test("a top-up answer naming another ICCID is unavailable", async () => {
    handler = json(200, { iccid: "8944500102198304826", data_mb_total: 1 });
    assert.equal((await adapter.topUp(topUpRequest("89014103211118510720"))).kind, "unavailable");
  });

  test("a closed port is unavailable", async () => {
    const closed = new HttpCarrier({ base_url: "http://127.0.0.1:9", api_key: "k", timeout_ms: 2_000 });
    const outcome = await closed.provisionProfile(provisionRequest());
    assert.equal(outcome.kind, "unavailable");
    assert.match((outcome as { reason: string }).reason, /unreachable/);
  });
});

describe("the simulator process", () => {
  test("state survives SIGKILL: a new process answers a known reference with the same profile", async () => {
    const own = await startSimulatorProcess({ databaseUrl: database.url });
    const request = provisionRequest();
    const before = await provisioned(request, adapterFor(own));
    await own.kill();
    assert.equal((await adapterFor(own).provisionProfile(request)).kind, "unavailable");

    const restarted = await startSimulatorProcess({ databaseUrl: database.url });
    try {
      assert.deepEqual(await provisioned(request, adapterFor(restarted)), before);
      assert.equal((await provisioningsOf(restarted, request.reference)).length, 1);
    } finally {
      await restarted.stop();
    }
  });

  test("two processes starting at once on an empty database share one state", async () => {
    const fresh = await createTestDatabase();
    const [one, two] = await Promise.all([
      startSimulatorProcess({ databaseUrl: fresh.url, apiKey: "shared-key-1234" }),
      startSimulatorProcess({ databaseUrl: fresh.url, apiKey: "shared-key-1234" }),
    ]);
    try {
      const request = provisionRequest();
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => adapterFor(i % 2 ? one : two).provisionProfile(request)),
      );
      const iccids = new Set(
        outcomes.map((outcome) => (outcome.kind === "ok" ? outcome.value.iccid : outcome.kind)),
      );
      assert.equal(iccids.size, 1);
      assert.equal((await provisioningsOf(one, request.reference)).length, 1);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  });

  test("SIGTERM closes cleanly with exit code 0, also while a slow call sleeps; stop() is idempotent", async () => {
    const own = await startSimulatorProcess({
      databaseUrl: database.url,
      env: { SIMULATOR_SLOW_MS: "60000" },
    });
    const sleeping = adapterFor(own, 10_000).provisionProfile(
      provisionRequest({ end_user_email: "slow@carrier.test" }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    assert.equal(await own.stop(), 0, own.stderr());
    assert.equal(await own.stop(), 0);
    assert.ok(performance.now() - started < 5_000);
    assert.equal((await sleeping).kind, "unavailable");
  });

  test("a missing CARRIER_API_KEY stops start-up with a message", async () => {
    await assert.rejects(
      startSimulatorProcess({ databaseUrl: database.url, apiKey: "", env: {} }),
      /CARRIER_API_KEY is required/,
    );
  });
});

describe("luhn", () => {
  test("computes the check digit of the textbook example", () => {
    assert.equal(luhnCheckDigit("7992739871"), 3);
    assert.ok(hasValidLuhnDigit("79927398713"));
    assert.ok(!hasValidLuhnDigit("79927398710"));
  });

  test("accepts real-world ICCIDs of 19 and 20 digits", () => {
    assert.ok(isValidIccid("89014103211118510720"));
    assert.ok(isValidIccid("8944500102198304826"));
  });

  test("rejects a wrong check digit, a wrong length, a wrong prefix and non-digits", () => {
    for (const bad of [
      "89014103211118510721",
      "8944500102198304825",
      "894450010219830482",
      "890141032111185107200",
      "79927398713",
      "1944500102198304826",
      "8944500102198304826 ",
      "89445001021983O4826",
      "",
    ]) {
      assert.ok(!isValidIccid(bad), bad);
    }
  });

  test("every minted ICCID is valid and changing any one digit makes it invalid", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_SERIAL }),
        fc.nat(18),
        fc.integer({ min: 1, max: 9 }),
        (serial, position, shift) => {
          const iccid = iccidFromSerial(serial);
          assert.equal(iccid.length, 19);
          assert.ok(isValidIccid(iccid));
          const changed = String((Number(iccid[position]) + shift) % 10);
          const mutated = iccid.slice(0, position) + changed + iccid.slice(position + 1);
          // Position 0/1 changes break the "89" prefix; every other change breaks the Luhn digit.
          assert.ok(!isValidIccid(mutated), mutated);
        },
      ),
    );
  });
});
