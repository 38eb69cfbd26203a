// The eSIM Go fake (src/simulators/esimgo) as a process of its own, against a real PostgreSQL,
// driven with plain HTTP exactly as eSIM Go's documentation shows the wire (X-API-Key, JSON
// bodies, {message} errors): never through an adapter of ours. Assertions read the platform's own
// records back (orders, eSIMs, balance), so a fault that loses an answer is checked to have left
// exactly one order.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import http from "node:http";
import { after, beforeEach, describe, test } from "node:test";
import { hasValidLuhnDigit } from "../src/lib/luhn.ts";
import { createTestDatabase } from "./support/db.ts";
import { type EsimGoProcess, startEsimGoProcess } from "./support/esimgo-simulator.ts";

const database = await createTestDatabase();
// A generous rate limit for the file; the rate-limit test lowers it.
const fake = await startEsimGoProcess({
  databaseUrl: database.url,
  env: { ESIMGO_SIM_RATE_LIMIT: "100000", ESIMGO_SIM_BALANCE: "500.00" },
  stopAfterTests: true,
});

type Reply = { status: number; headers: Headers; body: any; text: string };

async function call(
  target: EsimGoProcess,
  method: string,
  path: string,
  options: { body?: unknown; key?: string | null; accept?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (options.key !== null) headers["X-API-Key"] = options.key ?? target.apiKey;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  if (options.accept) headers.Accept = options.accept;
  const url = path.startsWith("/sandbox") ? `${target.url}${path}` : `${target.base}${path}`;
  const response = await fetch(url, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  let body: any = text;
  if ((response.headers.get("content-type") ?? "").includes("json")) body = JSON.parse(text);
  return { status: response.status, headers: response.headers, body, text };
}

const api = (method: string, path: string, options?: Parameters<typeof call>[3]) =>
  call(fake, method, path, options);
const control = (patch: object) => api("POST", "/sandbox/control", { body: patch });

function bundleOrder(item: string, quantity = 1, extra: object = {}, type = "transaction") {
  return { type, assign: true, order: [{ type: "bundle", quantity, item, ...extra }] };
}

async function balance(): Promise<number> {
  const answer = await api("GET", "/organisation");
  assert.equal(answer.status, 200, answer.text);
  return answer.body.organisations[0].balance;
}

async function buyOne(item = "esim_1GB_7D_GB_V2") {
  const answer = await api("POST", "/orders", { body: bundleOrder(item) });
  assert.equal(answer.status, 200, answer.text);
  return { order: answer.body, iccid: answer.body.order[0].esims[0].iccid as string };
}

beforeEach(async () => {
  await control({
    clear_faults: true,
    latency_ms: 0,
    rate_limit_per_second: 100_000,
    async_ms: 5_000,
    callback_url: null,
  });
  await api("POST", "/sandbox/organisation", { body: { balance: 500, refundsEnabled: false } });
});

describe("authentication and rate limits", () => {
  test("a call without X-API-Key is 401 and a wrong key 403, both {message}", async () => {
    const missing = await api("GET", "/catalogue", { key: null });
    assert.equal(missing.status, 401);
    assert.equal(typeof missing.body.message, "string");
    const wrong = await api("GET", "/catalogue", { key: "not-the-key-at-all" });
    assert.equal(wrong.status, 403);
    assert.equal(typeof wrong.body.message, "string");
  });

  test("every answer carries the X-Ratelimit headers; past the limit a 429 {message} with Retry-After: 1", async () => {
    const answer = await api("GET", "/organisation");
    for (const name of [
      "x-ratelimit-limit",
      "x-ratelimit-remaining",
      "x-ratelimit-reset",
      "x-ratelimit-cost",
    ]) {
      assert.ok(answer.headers.get(name), name);
    }
    assert.ok(!Number.isNaN(Date.parse(answer.headers.get("x-ratelimit-reset")!)));
    await control({ rate_limit_per_second: 1 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => api("GET", "/catalogue/bundle/esim_1GB_7D_GB_V2")),
    );
    const limited = answers.filter((reply) => reply.status === 429);
    assert.ok(limited.length > 0, "some calls are refused");
    assert.deepEqual(limited[0]!.body, { message: "Rate limit exceeded" });
    assert.equal(limited[0]!.headers.get("retry-after"), "1");
    assert.equal(limited[0]!.headers.get("x-ratelimit-remaining"), "0");
    assert.equal(limited[0]!.headers.get("x-ratelimit-limit"), "1");
  });
});

describe("catalogue", () => {
  test("lists a few dozen bundles of countries, regions and the world, with MB, days and net prices", async () => {
    const answer = await api("GET", "/catalogue?perPage=500");
    assert.equal(answer.status, 200);
    assert.ok(answer.body.rows >= 30);
    const names = answer.body.bundles.map((bundle: { name: string }) => bundle.name);
    assert.ok(names.includes("esim_1GB_7D_GB_V2"));
    assert.ok(
      answer.body.bundles.some((bundle: { countries: unknown[] }) => bundle.countries.length > 6),
      "a global one",
    );
    const gb = answer.body.bundles.find((bundle: { name: string }) => bundle.name === "esim_1GB_7D_GB_V2");
    assert.deepEqual(
      { dataAmount: gb.dataAmount, duration: gb.duration, price: gb.price, iso: gb.countries[0].iso },
      { dataAmount: 1000, duration: 7, price: 1.99, iso: "GB" },
    );
    const japan = await api("GET", "/catalogue?countries=JP");
    assert.ok(
      japan.body.bundles.every((bundle: { countries: { iso: string }[] }) =>
        bundle.countries.some((c) => c.iso === "JP"),
      ),
    );
  });

  test("a bundle by its case-sensitive name; an unknown name is a 400 {message}", async () => {
    const known = await api("GET", "/catalogue/bundle/esim_5GB_30D_REUP_V2");
    assert.equal(known.status, 200);
    assert.equal(known.body.dataAmount, 5000);
    const folded = await api("GET", "/catalogue/bundle/ESIM_5GB_30D_REUP_V2");
    assert.equal(folded.status, 400);
    assert.match(folded.body.message, /Bundle not found/);
  });
});

describe("orders", () => {
  test("validate prices the order and checks it without charging or recording anything", async () => {
    const since = new Date(Date.now() - 1).toISOString();
    const answer = await api("POST", "/orders", {
      body: bundleOrder("esim_3GB_30D_FR_V2", 2, {}, "validate"),
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.valid, true);
    assert.equal(answer.body.total, 8.98);
    assert.equal(answer.body.currency, "USD");
    assert.equal(await balance(), 500);
    assert.deepEqual((await api("GET", `/orders?createdAt=gte:${since}`)).body, []);
  });

  test("a transaction charges the balance and answers the order with its eSIMs (Luhn ICCIDs, LPA parts)", async () => {
    const answer = await api("POST", "/orders", { body: bundleOrder("esim_1GB_7D_GB_V2", 2) });
    assert.equal(answer.status, 200, answer.text);
    const order = answer.body;
    assert.equal(order.status, "completed");
    assert.equal(order.total, 3.98);
    assert.equal(order.currency, "USD");
    assert.equal(order.assigned, true);
    assert.ok(!Number.isNaN(Date.parse(order.createdDate)));
    assert.match(order.orderReference, /^[0-9a-f-]{36}$/);
    const [line] = order.order;
    assert.deepEqual(
      [line.item, line.quantity, line.pricePerUnit, line.subTotal],
      ["esim_1GB_7D_GB_V2", 2, 1.99, 3.98],
    );
    assert.equal(line.esims.length, 2);
    assert.deepEqual(
      line.iccids,
      line.esims.map((esim: { iccid: string }) => esim.iccid),
    );
    for (const esim of line.esims) {
      assert.match(esim.iccid, /^89\d{17}$/);
      assert.ok(hasValidLuhnDigit(esim.iccid));
      assert.match(`LPA:1$${esim.smdpAddress}$${esim.matchingId}`, /^LPA:1\$[a-z.]+\$[A-Z0-9-]+$/);
    }
    assert.equal(await balance(), 496.02);
  });

  test("install details are CSV by default and JSON when asked for", async () => {
    const { order, iccid } = await buyOne();
    const csv = await api("GET", `/esims/assignments?reference=${order.orderReference}`);
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get("content-type")!, /text\/csv/);
    const [header, row] = csv.text.trim().split("\r\n");
    assert.equal(header, '"ICCID","Matching ID","RSP URL","Bundle"');
    assert.ok(row!.startsWith(`"${iccid}"`));
    const json = await api("GET", `/esims/assignments?reference=${order.orderReference}`, {
      accept: "application/json",
    });
    assert.equal(json.status, 200);
    assert.equal(json.body.iccid, iccid);
    assert.equal(json.body.profileStatus, "Released");
    assert.equal(json.body.matchingId, order.order[0].esims[0].matchingId);
  });

  test("a top-up is an order carrying the eSIM's ICCID: the bundle goes on that eSIM", async () => {
    const { iccid } = await buyOne();
    const topUp = await api("POST", "/orders", {
      body: bundleOrder("esim_3GB_30D_GB_V2", 1, { iccids: [iccid] }),
    });
    assert.equal(topUp.status, 200, topUp.text);
    assert.deepEqual(topUp.body.order[0].iccids, [iccid]);
    const bundles = await api("GET", `/esims/${iccid}/bundles`);
    const names = bundles.body.bundles.map((bundle: { name: string }) => bundle.name).sort();
    assert.deepEqual(names, ["esim_1GB_7D_GB_V2", "esim_3GB_30D_GB_V2"]);
    const topped = bundles.body.bundles.find(
      (bundle: { name: string }) => bundle.name === "esim_3GB_30D_GB_V2",
    );
    assert.equal(topped.assignments[0].bundleState, "queued");
    assert.equal(topped.assignments[0].initialQuantity, 3_000_000_000);
  });

  test("the documented usage rules refuse with 400 {message}, charging nothing", async () => {
    const { iccid } = await buyOne();
    const start = await balance();
    const refusals = [
      bundleOrder("esim_1GB_7D_GB_V2", 2, { iccids: [iccid] }),
      {
        type: "transaction",
        assign: false,
        order: [{ type: "bundle", quantity: 1, item: "esim_1GB_7D_GB_V2", iccids: [iccid] }],
      },
      bundleOrder("esim_1GB_7D_GB_V2", 1, { iccids: ["8944523000000000000"] }),
      bundleOrder("esim_1gb_7d_gb_v2"),
      { type: "transaction", assign: true, quantity: 1, item: "esim_1GB_7D_GB_V2" },
    ];
    for (const body of refusals) {
      const answer = await api("POST", "/orders", { body });
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(typeof answer.body.message, "string");
    }
    assert.equal(await balance(), start);
  });

  test("an incompatible eSIM is refused, or with allowReassign the bundle goes on a new ICCID", async () => {
    const { iccid } = await buyOne();
    assert.equal(
      (await api("POST", `/sandbox/esims/${iccid}`, { body: { incompatible: true } })).status,
      200,
    );
    const refused = await api("POST", "/orders", {
      body: bundleOrder("esim_1GB_7D_GB_V2", 1, { iccids: [iccid] }),
    });
    assert.equal(refused.status, 400);
    const moved = await api("POST", "/orders", {
      body: bundleOrder("esim_1GB_7D_GB_V2", 1, { iccids: [iccid], allowReassign: true }),
    });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.order[0].iccids.length, 1);
    assert.notEqual(moved.body.order[0].iccids[0], iccid);
  });

  test("assign: false buys into inventory: charged, recorded, no eSIMs", async () => {
    const start = await balance();
    const answer = await api("POST", "/orders", {
      body: {
        type: "transaction",
        assign: false,
        order: [{ type: "bundle", quantity: 2, item: "esim_1GB_7D_ES_V2" }],
      },
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.assigned, false);
    assert.deepEqual(answer.body.order[0].esims, []);
    assert.equal(await balance(), Math.round((start - 3.98) * 100) / 100);
  });

  test("an order the balance cannot pay is refused and leaves no order", async () => {
    await api("POST", "/sandbox/organisation", { body: { balance: 1 } });
    const before = (await api("GET", "/orders?limit=200")).body.length;
    const answer = await api("POST", "/orders", { body: bundleOrder("esim_1GB_7D_GB_V2") });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.message, "Insufficient balance");
    assert.equal(await balance(), 1);
    assert.equal((await api("GET", "/orders?limit=200")).body.length, before);
  });

  test("more than 5 bundles are processed asynchronously: no eSIM data in the answer, fetched later", async () => {
    await control({ async_ms: 600_000 });
    const slow = await api("POST", "/orders", { body: bundleOrder("esim_1GB_7D_NL_V2", 6) });
    assert.equal(slow.status, 200, slow.text);
    assert.equal(slow.body.status, "processing");
    assert.deepEqual(slow.body.order[0].esims, []);
    const pending = await api("GET", `/esims/assignments?reference=${slow.body.orderReference}`);
    assert.equal(pending.status, 503);
    assert.ok(pending.headers.get("retry-after"));
    await control({ async_ms: 0 });
    const ready = await api("POST", "/orders", { body: bundleOrder("esim_1GB_7D_NL_V2", 6) });
    assert.deepEqual(ready.body.order[0].esims, []);
    const later = await api("GET", `/orders/${ready.body.orderReference}`);
    assert.equal(later.body.status, "completed");
    assert.equal(later.body.order[0].esims.length, 6);
    assert.ok(!Number.isNaN(Date.parse(later.body.createDate)));
  });

  test("orders are listed in a createdAt window and looked up by reference; unknown references are 400", async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    const { order } = await buyOne("esim_5GB_30D_JP_V2");
    const listed = await api(
      "GET",
      `/orders?createdAt=gte:${since}&createdAt=lte:${new Date(Date.now() + 60_000).toISOString()}`,
    );
    assert.equal(listed.status, 200);
    assert.ok(Array.isArray(listed.body));
    const mine = listed.body.find(
      (entry: { orderReference: string }) => entry.orderReference === order.orderReference,
    );
    assert.equal(mine.order[0].item, "esim_5GB_30D_JP_V2");
    assert.equal(mine.total, order.total);
    const found = await api("GET", `/orders/${order.orderReference}`);
    assert.equal(found.body.order[0].esims[0].iccid, order.order[0].esims[0].iccid);
    assert.equal((await api("GET", "/orders/no-such-order")).status, 400);
  });
});

describe("eSIMs after the sale", () => {
  test("our own id lives in customerRef: set with PUT /esims, found with GET /esims?filterBy=customerRef", async () => {
    const { iccid } = await buyOne();
    const set = await api("PUT", "/esims", { body: { iccid, customerRef: "ord_0001_ours" } });
    assert.deepEqual([set.status, set.body], [200, { status: "success" }]);
    const found = await api("GET", "/esims?filterBy=customerRef&filter=eq:ord_0001_ours");
    assert.equal(found.status, 200);
    assert.deepEqual(
      found.body.esims.map((esim: { iccid: string }) => esim.iccid),
      [iccid],
    );
    assert.equal(found.body.esims[0].customerRef, "ord_0001_ours");
    const wildcard = await api("GET", "/esims?filterBy=customerRef&filter=ord_0001*");
    assert.equal(wildcard.body.esims.length, 1);
    assert.equal(
      (await api("PUT", "/esims", { body: { iccid: "8944523999999999990", customerRef: "x" } })).status,
      400,
    );
  });

  test("eSIM details; an unknown ICCID is a 400, not a 404", async () => {
    const { iccid } = await buyOne();
    const details = await api("GET", `/esims/${iccid}`);
    assert.equal(details.status, 200);
    assert.equal(details.body.iccid, iccid);
    assert.equal(details.body.profileStatus, "Released");
    assert.match(details.body.pin, /^\d{4}$/);
    assert.equal((await api("GET", "/esims/8944523999999999990")).status, 400);
  });

  /** A receiver of callbacks on an ephemeral port: what it got, and its URL. */
  async function callbackReceiver() {
    const received: { body: string; signature: string }[] = [];
    const receiver = http.createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        received.push({ body, signature: String(request.headers["x-signature-sha256"]) });
        response.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    after(() => receiver.close());
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/esimgo`;
    // Polls until `count` callbacks arrived (or gives up after 500 polls, and the test fails on what it has).
    const arrived = async (count: number) => {
      for (let poll = 0; poll < 500 && received.length < count; poll++)
        await new Promise((r) => setTimeout(r, 20));
      return received;
    };
    return { url, arrived };
  }

  test("data use starts the bundle and lowers its remaining bytes; V3 callbacks arrive signed (base64)", async () => {
    const receiver = await callbackReceiver();
    await control({ callback_url: receiver.url });
    const { iccid } = await buyOne();
    const used = await api("POST", `/sandbox/esims/${iccid}/events`, {
      body: { event: "use_data", bytes: 600_000_000 },
    });
    assert.equal(used.status, 200, used.text);
    const bundles = await api("GET", `/esims/${iccid}/bundles`);
    const assignment = bundles.body.bundles[0].assignments[0];
    assert.deepEqual([assignment.bundleState, assignment.remainingQuantity], ["active", 400_000_000]);
    assert.equal((await api("GET", `/esims/${iccid}`)).body.profileStatus, "Installed");
    const received = await receiver.arrived(2);
    const alerts = received.map((delivery) => JSON.parse(delivery.body));
    assert.deepEqual(alerts.map((alert) => alert.alertType).sort(), ["FirstUse", "Utilisation"]);
    assert.equal(alerts[0].iccid, iccid);
    assert.equal(alerts[0].bundle.remainingQuantity, 400_000_000);
    assert.equal(alerts[0].bundle.reference, assignment.assignmentReference);
    for (const delivery of received) {
      assert.equal(
        delivery.signature,
        createHmac("sha256", fake.apiKey).update(delivery.body).digest("base64"),
      );
    }
  });

  test("the signature's encoding switches to hex", async () => {
    const receiver = await callbackReceiver();
    await control({ callback_url: receiver.url, signature_encoding: "hex" });
    try {
      const { iccid } = await buyOne();
      await api("POST", `/sandbox/esims/${iccid}/events`, { body: { event: "use_data", bytes: 1_000 } });
      const [delivery] = await receiver.arrived(1);
      assert.equal(JSON.parse(delivery!.body).alertType, "FirstUse");
      assert.equal(
        delivery!.signature,
        createHmac("sha256", fake.apiKey).update(delivery!.body).digest("hex"),
      );
    } finally {
      await control({ signature_encoding: "base64" });
    }
  });

  test("a used-up bundle is depleted; includeUsed lists it", async () => {
    const { iccid } = await buyOne();
    await api("POST", `/sandbox/esims/${iccid}/events`, {
      body: { event: "use_data", bytes: 1_000_000_000 },
    });
    assert.deepEqual((await api("GET", `/esims/${iccid}/bundles`)).body.bundles, []);
    const all = await api("GET", `/esims/${iccid}/bundles?includeUsed=true`);
    assert.equal(all.body.bundles[0].assignments[0].bundleState, "depleted");
    assert.equal(all.body.bundles[0].assignments[0].remainingQuantity, 0);
  });

  test("a deactivated eSIM's install details are 410 Gone", async () => {
    const { order, iccid } = await buyOne();
    await api("POST", `/sandbox/esims/${iccid}`, { body: { deactivated: true } });
    const gone = await api("GET", `/esims/assignments?reference=${order.orderReference}`);
    assert.equal(gone.status, 410);
    assert.equal(typeof gone.body.message, "string");
  });
});

describe("revoke and refund", () => {
  test("with refunds off (the default) an unused bundle is only revoked: nothing credited", async () => {
    const { iccid } = await buyOne();
    const start = await balance();
    const answer = await api(
      "DELETE",
      `/esims/${iccid}/bundles/esim_1GB_7D_GB_V2?type=transaction&refundToBalance=true`,
    );
    assert.deepEqual([answer.status, answer.body], [200, { status: "revoked" }]);
    assert.equal(await balance(), start);
    const all = await api("GET", `/esims/${iccid}/bundles?includeUsed=true`);
    assert.equal(all.body.bundles[0].assignments[0].bundleState, "revoked");
  });

  test("with refunds on, an unused bundle is refunded to the balance; validate changes nothing", async () => {
    await api("POST", "/sandbox/organisation", { body: { refundsEnabled: true } });
    const { iccid } = await buyOne("esim_3GB_30D_DE_V2");
    const start = await balance();
    const path = `/esims/${iccid}/bundles/esim_3GB_30D_DE_V2`;
    const validate = await api("DELETE", `${path}?type=validate&refundToBalance=true`);
    assert.deepEqual(validate.body, { status: "refundable" });
    assert.equal(await balance(), start);
    const refund = await api("DELETE", `${path}?refundToBalance=true`);
    assert.deepEqual(refund.body, { status: "refunded" });
    assert.equal(await balance(), start + 4.49);
    assert.equal((await api("DELETE", `${path}?refundToBalance=true`)).status, 400, "nothing left to revoke");
  });

  test("a bundle that has carried data is revoked without refund", async () => {
    await api("POST", "/sandbox/organisation", { body: { refundsEnabled: true } });
    const { iccid } = await buyOne();
    await api("POST", `/sandbox/esims/${iccid}/events`, { body: { event: "use_data", bytes: 1_000 } });
    const start = await balance();
    const answer = await api("DELETE", `/esims/${iccid}/bundles/esim_1GB_7D_GB_V2?refundToBalance=true`);
    assert.deepEqual(answer.body, { status: "revoked" });
    assert.equal(await balance(), start);
  });
});

describe("in-process", () => {
  test("startEsimGoSimulator serves the same API from the sandbox's own pool", async () => {
    const { startEsimGoSimulator } = await import("../src/simulators/esimgo/server.ts");
    const running = await startEsimGoSimulator({
      pool: database.pool,
      port: 0,
      host: "127.0.0.1",
      apiKey: fake.apiKey,
    });
    try {
      const inProcess = { ...fake, url: running.url, base: `${running.url}/v2.4` };
      const answer = await call(inProcess, "GET", "/catalogue/bundle/esim_1GB_7D_GB_V2");
      assert.equal(answer.status, 200);
      assert.equal(answer.body.name, "esim_1GB_7D_GB_V2");
    } finally {
      await running.close();
    }
  });
});

describe("faults", () => {
  async function ordersSince(since: string): Promise<{ orderReference: string }[]> {
    return (await api("GET", `/orders?createdAt=gte:${since}`)).body;
  }

  test("commit_then_500: the order is made and charged, the answer is a 500; the list shows exactly one", async () => {
    const since = new Date(Date.now() - 1).toISOString();
    const start = await balance();
    await control({ faults: [{ kind: "commit_then_500", method: "POST", path: "/orders" }] });
    const answer = await api("POST", "/orders", { body: bundleOrder("esim_10GB_30D_US_V2") });
    assert.equal(answer.status, 500);
    assert.equal(typeof answer.body.message, "string");
    const made = await ordersSince(since);
    assert.equal(made.length, 1);
    assert.equal(await balance(), Math.round((start - 16.79) * 100) / 100);
    const lookup = await api("GET", `/orders/${made[0]!.orderReference}`);
    assert.equal(lookup.body.order[0].item, "esim_10GB_30D_US_V2");
  });

  test("drop_after_commit: the connection is cut after the order committed; the list shows exactly one", async () => {
    const since = new Date(Date.now() - 1).toISOString();
    await control({ faults: [{ kind: "drop_after_commit", method: "POST", path: "/orders" }] });
    await assert.rejects(api("POST", "/orders", { body: bundleOrder("esim_1GB_7D_TH_V2") }));
    const made = await ordersSince(since);
    assert.equal(made.length, 1);
  });

  test("drop: the connection is cut before anything is done; no order", async () => {
    const since = new Date(Date.now() - 1).toISOString();
    await control({ faults: [{ kind: "drop", method: "POST", path: "/orders" }] });
    await assert.rejects(api("POST", "/orders", { body: bundleOrder("esim_1GB_7D_TH_V2") }));
    assert.equal((await ordersSince(since)).length, 0);
  });

  test("delay: the call is held, then done normally", async () => {
    await control({ faults: [{ kind: "delay", delay_ms: 50, path: "/catalogue" }] });
    assert.equal((await api("GET", "/catalogue/bundle/esim_1GB_7D_GB_V2")).status, 200);
  });

  test("every documented status on demand, with {message}, doing nothing", async () => {
    const since = new Date(Date.now() - 1).toISOString();
    for (const status of [400, 401, 403, 404, 410, 429, 500, 503]) {
      await control({ faults: [{ kind: "error", status, method: "POST", path: "/orders" }] });
      const answer = await api("POST", "/orders", { body: bundleOrder("esim_1GB_7D_GB_V2") });
      assert.equal(answer.status, status);
      assert.equal(typeof answer.body.message, "string");
      if (status === 429 || status === 503) assert.equal(answer.headers.get("retry-after"), "1");
    }
    assert.equal((await ordersSince(since)).length, 0);
  });

  test("a malformed body is a 400 {message}; an unknown path a 404 {message}", async () => {
    const bad = await api("POST", "/orders", { body: { type: "transaction", order: "nope" } });
    assert.equal(bad.status, 400);
    assert.equal(typeof bad.body.message, "string");
    const unknown = await api("GET", "/nothing-here");
    assert.equal(unknown.status, 404);
    assert.equal(typeof unknown.body.message, "string");
  });

  test("orders and the balance survive a crash of the fake", async () => {
    const { order } = await buyOne();
    const start = await balance();
    // The last test: the fake every other test used is killed like a crash, and a new one starts.
    await fake.kill();
    const again = await startEsimGoProcess({ databaseUrl: database.url, apiKey: fake.apiKey });
    try {
      const found = await call(again, "GET", `/orders/${order.orderReference}`);
      assert.equal(found.status, 200);
      assert.equal(found.body.order[0].esims[0].iccid, order.order[0].esims[0].iccid);
      assert.equal((await call(again, "GET", "/organisation")).body.organisations[0].balance, start);
      assert.equal(await again.stop(), 0, "SIGTERM is a clean exit");
    } finally {
      await again.stop();
    }
  });
});
