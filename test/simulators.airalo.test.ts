// The Airalo fake (src/simulators/airalo/) driven with plain HTTP exactly as Airalo's docs send
// it (multipart forms as the curl examples, urlencoded as the PHP/Python SDKs, JSON as the Node SDK),
// against a real PostgreSQL; and, once, through Airalo's own Node SDK (npm airalo-sdk 1.2.2) over
// HTTPS, the proof that the fake speaks Airalo's wire format. Assertions read the fake's records
// back (the order list, the credit), not only statuses.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, beforeEach, describe, test } from "node:test";
import { hasValidLuhnDigit } from "../src/lib/luhn.ts";
import { DOCUMENTED_LIMITS } from "../src/simulators/airalo/rate-limit.ts";
import { startAiralo } from "../src/simulators/airalo/server.ts";
import { createTestDatabase } from "./support/db.ts";
import { spawnNode, waitForOutput } from "./support/processes.ts";
import { makeCertificates } from "./support/tls.ts";

const CLIENT_ID = "test-client";
const CLIENT_SECRET = "test-secret-1234";
const PACKAGE = "uki-mobile-7days-1gb";

const database = await createTestDatabase();
const fake = await startAiralo({
  pool: database.pool,
  port: 0,
  host: "127.0.0.1",
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
  log: (message) => console.error(message),
});
after(() => fake.close());

type Reply = { status: number; body: any; headers: Headers };
type Body = {
  json?: unknown;
  form?: Record<string, string | string[]>;
  multipart?: Record<string, string | string[]>;
  plain?: string;
};

/** One call the way the docs make it: Accept: application/json, a bearer token, the body as asked. */
async function call(
  method: string,
  route: string,
  options: Body & { token?: string | null } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { accept: "application/json" };
  const token = options.token === undefined ? accessToken : options.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | FormData | undefined;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(options.form))
      for (const one of [value].flat()) search.append(Array.isArray(value) ? `${name}[]` : name, one);
    body = search.toString();
  } else if (options.multipart) {
    body = new FormData();
    for (const [name, value] of Object.entries(options.multipart))
      for (const one of [value].flat()) body.append(Array.isArray(value) ? `${name}[]` : name, one);
  } else if (options.plain !== undefined) {
    headers["content-type"] = "text/plain";
    body = options.plain;
  }
  const response = await fetch(`${fake.url}${route}`, {
    method,
    headers,
    body,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
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

async function token(): Promise<string> {
  const answer = await call("POST", "/v2/token", {
    token: null,
    multipart: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, grant_type: "client_credentials" },
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data.access_token;
}

const accessToken = await token();

async function order(description: string, quantity = 1, packageId = PACKAGE): Promise<any> {
  const answer = await call("POST", "/v2/orders", {
    multipart: { quantity: String(quantity), package_id: packageId, type: "sim", description },
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data;
}

async function ordersDescribed(description: string): Promise<any[]> {
  const answer = await call(
    "GET",
    `/v2/orders?include=sims,status&filter[description]=${encodeURIComponent(description)}`,
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data;
}

const ourId = () => `ord_${randomUUID()}`;

beforeEach(async () => {
  await control("/control", {
    disarm: true,
    reset_rate_limits: true,
    rate_limits: DOCUMENTED_LIMITS,
    latency_ms: 0,
    usage_cache_ms: 0,
    webhook_url: null,
  });
  await control("/control/account", { credit_usd: 100_000 });
});

describe("authentication", () => {
  test("POST /v2/token answers the documented token to a multipart, an urlencoded and a JSON body", async () => {
    const credentials = {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      grant_type: "client_credentials",
    };
    for (const body of [{ multipart: credentials }, { form: credentials }, { json: credentials }]) {
      const answer = await call("POST", "/v2/token", { token: null, ...body });
      assert.equal(answer.status, 200);
      assert.equal(answer.body.data.token_type, "Bearer");
      assert.equal(answer.body.data.expires_in, 31622400);
      assert.equal(answer.body.meta.message, "success");
      const packages = await call("GET", "/v2/packages", { token: answer.body.data.access_token });
      assert.equal(packages.status, 200);
    }
  });

  test("wrong credentials, missing fields, and a missing or forged bearer are refused", async () => {
    const wrong = await call("POST", "/v2/token", {
      token: null,
      json: { client_id: CLIENT_ID, client_secret: "nope-nope", grant_type: "client_credentials" },
    });
    assert.equal(wrong.status, 401);
    const missing = await call("POST", "/v2/token", {
      token: null,
      form: { grant_type: "client_credentials" },
    });
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body.meta, { message: "the parameter is invalid" });
    assert.equal(missing.body.data.client_id, "The client id field is required.");
    for (const bad of [null, "forged.token", `${accessToken.split(".")[0]}.AAAA`]) {
      const answer = await call("GET", "/v2/packages", { token: bad });
      assert.equal(answer.status, 401, String(bad));
    }
  });

  test("the token endpoint is rate limited: 3 a minute, then 429 with the documented headers", async () => {
    const credentials = {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      grant_type: "client_credentials",
    };
    for (let index = 0; index < 3; index++)
      assert.equal((await call("POST", "/v2/token", { token: null, json: credentials })).status, 200);
    const limited = await call("POST", "/v2/token", { token: null, json: credentials });
    assert.equal(limited.status, 429);
    assert.deepEqual(limited.body, { message: "Too Many Attempts." });
    assert.equal(limited.headers.get("x-ratelimit-limit"), "3");
    assert.equal(limited.headers.get("x-ratelimit-remaining"), "0");
    assert.ok(Number(limited.headers.get("retry-after")) > 0);
    assert.ok(Number(limited.headers.get("x-ratelimit-reset")) > Date.now() / 1000);
  });
});

describe("catalogue", () => {
  test("the tree has countries, regions and a global offer; include=topup adds the -topup packages", async () => {
    const plain = await call("GET", "/v2/packages?limit=1000");
    assert.equal(plain.status, 200);
    assert.equal(plain.body.pricing.model, "net_pricing");
    const ids = plain.body.data.flatMap((entry: any) =>
      entry.operators.flatMap((op: any) => op.packages.map((p: any) => p.id)),
    );
    assert.ok(ids.length >= 30, `${ids.length} packages`);
    assert.ok(ids.every((id: string) => !id.endsWith("-topup")));
    const withTopups = await call("GET", "/v2/packages?include=topup&limit=1000");
    const all = withTopups.body.data.flatMap((entry: any) =>
      entry.operators.flatMap((op: any) => op.packages),
    );
    assert.ok(all.some((p: any) => p.type === "topup" && p.id.endsWith("-topup")));
    const pkg = all.find((p: any) => p.id === PACKAGE);
    assert.equal(typeof pkg.net_price, "number");
    assert.ok(pkg.net_price < pkg.price, "net (wholesale) below retail");
    assert.equal(pkg.prices.net_price.USD, pkg.net_price);
  });

  test("filters by type and country, pages like Laravel, and refuses a limit that is not an integer", async () => {
    const global = await call("GET", "/v2/packages?filter[type]=global");
    assert.deepEqual(global.body.data.map((entry: any) => entry.slug).sort(), ["asia", "europe", "world"]);
    assert.ok(global.body.data.every((entry: any) => entry.country_code === ""));
    const japan = await call("GET", "/v2/packages?filter[type]=local&filter[country]=JP");
    assert.deepEqual(
      japan.body.data.map((entry: any) => entry.country_code),
      ["JP"],
    );
    const unlimited = japan.body.data[0].operators[0].packages.find((p: any) => p.is_unlimited);
    assert.equal(unlimited.data, "Unlimited");
    const page = await call("GET", "/v2/packages?filter[type]=local&limit=4&page=3");
    assert.equal(page.body.data.length, 2);
    assert.equal(page.body.meta.current_page, 3);
    assert.equal(page.body.meta.last_page, 3);
    assert.equal(page.body.meta.per_page, "4");
    const bad = await call("GET", "/v2/packages?limit=many");
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body, {
      data: { limit: "The limit must be an integer." },
      meta: { message: "the parameter is invalid" },
    });
  });
});

describe("orders", () => {
  test("an order answers its eSIMs with Luhn-valid ICCIDs and LPA codes, and takes the net price from the credit", async () => {
    const before = (await control("/control/account")).credit_usd;
    const placed = await order(ourId(), 2);
    assert.equal(placed.type, "sim");
    assert.equal(placed.quantity, 2);
    assert.equal(placed.sims.length, 2);
    for (const sim of placed.sims) {
      assert.ok(hasValidLuhnDigit(sim.iccid) && sim.iccid.startsWith("89"), sim.iccid);
      assert.equal(sim.qrcode, `LPA:1$${sim.lpa}$${sim.matching_id}`);
      assert.match(sim.direct_apple_installation_url, /carddata=LPA:1\$/);
    }
    const after = (await control("/control/account")).credit_usd;
    assert.equal(Math.round((before - after) * 100), Math.round(placed.net_price * 2 * 100));
  });

  test("the same description twice makes two orders (no idempotency), both found by filter[description]", async () => {
    const description = ourId();
    const first = await order(description);
    const second = await order(description);
    assert.notEqual(first.id, second.id);
    const found = await ordersDescribed(description);
    assert.deepEqual(found.map((o) => o.id).sort(), [first.id, second.id].sort());
    // A LIKE %x% search: a part of the description finds it too.
    assert.equal((await ordersDescribed(description.slice(4, 20))).length, 2);
  });

  test("documented validation errors: invalid package, quantity over 50, unknown brand, short stock", async () => {
    const both = await call("POST", "/v2/orders", { json: { package_id: "no-such-package", quantity: 51 } });
    assert.equal(both.status, 422);
    assert.deepEqual(both.body, {
      data: {
        package_id: "The selected package is invalid.",
        quantity: "The quantity may not be greater than 50.",
      },
      meta: { message: "the parameter is invalid" },
    });
    const brand = await call("POST", "/v2/orders", {
      json: { package_id: PACKAGE, quantity: 1, brand_settings_name: "Nobody" },
    });
    assert.deepEqual(brand.body.data, { brand_settings_name: "Brand settings name doesn't exist." });
    await control("/control", { stock: { [PACKAGE]: 9 } });
    const stock = await call("POST", "/v2/orders", { json: { package_id: PACKAGE, quantity: 10 } });
    assert.deepEqual(stock.body.data, { quantity: "SIM quantity is not available. Available quantity: 9." });
    await control("/control", { stock: { [PACKAGE]: null } });
  });

  test("too little credit is code 11 and orders nothing", async () => {
    await control("/control/account", { credit_usd: 1 });
    const description = ourId();
    const answer = await call("POST", "/v2/orders", {
      json: { package_id: PACKAGE, quantity: 1, description },
    });
    assert.equal(answer.status, 422);
    assert.equal(answer.body.code, 11);
    assert.match(answer.body.reason, /^Insufficient Airalo Credit: /);
    assert.deepEqual(await ordersDescribed(description), []);
  });

  test("every documented business error code can be asked for, as 422 {code, reason}, with nothing ordered", async () => {
    for (const code of [11, 13, 14, 23, 33, 34, 43, 53, 73]) {
      await control("/control", { arm: [{ operation: "order", kind: "error", code, additional: "x1" }] });
      const description = ourId();
      const answer = await call("POST", "/v2/orders", {
        json: { package_id: PACKAGE, quantity: 1, description },
      });
      assert.equal(answer.status, 422, String(code));
      assert.deepEqual(Object.keys(answer.body).sort(), ["code", "reason"]);
      assert.equal(answer.body.code, code);
      assert.ok(answer.body.reason.length > 10);
      assert.deepEqual(await ordersDescribed(description), []);
    }
    const maintenance = await control("/control", { arm: [{ operation: "order", kind: "error", code: 13 }] });
    assert.equal(maintenance.armed.length, 1);
    const answer = await call("POST", "/v2/orders", { json: { package_id: PACKAGE, quantity: 1 } });
    assert.equal(
      answer.body.reason,
      "The requested operator is currently undergoing maintenance. Please try again later.",
    );
  });

  test("the list and the lookup show orders with sims, status and Laravel paging; another id is unauthorized", async () => {
    const description = ourId();
    const placed = await order(description);
    const iccid = placed.sims[0].iccid;
    const [listed] = await ordersDescribed(description);
    assert.equal(listed.price, placed.price.toFixed(2));
    assert.equal(typeof listed.validity, "string");
    assert.deepEqual(listed.status, { name: "Completed", slug: "completed" });
    assert.equal(listed.sims[0].iccid, iccid);
    const byIccid = await call("GET", `/v2/orders?filter[iccid]=${iccid}`);
    assert.deepEqual(
      byIccid.body.data.map((o: any) => o.id),
      [placed.id],
    );
    const byCode = await call("GET", `/v2/orders?filter[code]=${placed.code}&filter[order_status]=completed`);
    assert.deepEqual(
      byCode.body.data.map((o: any) => o.id),
      [placed.id],
    );
    const page = await call("GET", "/v2/orders?limit=1&page=1");
    assert.equal(page.body.meta.per_page, "1");
    assert.ok(page.body.meta.total >= 1);
    assert.ok(page.body.links.first.endsWith("page=1"));
    const one = await call("GET", `/v2/orders/${placed.id}?include=sims,status,user`);
    assert.equal(one.body.data.description, description);
    assert.equal(one.body.data.user.company.length > 0, true);
    const other = await call("GET", "/v2/orders/999999999");
    assert.equal(other.status, 401);
    assert.deepEqual(other.body, { data: [], meta: { message: "This action is unauthorized." } });
    const bad = await call("GET", "/v2/orders?limit=x&page=y");
    assert.deepEqual(bad.body.data, {
      limit: "The limit must be an integer.",
      page: "The page must be an integer.",
    });
  });
});

describe("after the sale", () => {
  test("eSIM details, top-up list, a top-up adding data, and usage as a device spends it", async () => {
    const description = ourId();
    const iccid = (await order(description)).sims[0].iccid;
    const details = await call("GET", `/v2/sims/${iccid}?include=order,order.status`);
    assert.equal(details.status, 200);
    assert.equal(details.body.data.recycled, false);
    assert.equal(details.body.data.simable.description, description);
    const fresh = await call("GET", `/v2/sims/${iccid}/usage`);
    assert.equal(fresh.body.data.status, "NOT_ACTIVE");
    assert.equal(fresh.body.data.total, 1024);
    const topups = await call("GET", `/v2/sims/${iccid}/topups`);
    assert.ok(topups.body.data.length > 0);
    assert.ok(topups.body.data.every((p: any) => p.id.endsWith("-topup") && p.type === "topup"));
    const topupId = topups.body.data[0].id;
    const topped = await call("POST", "/v2/orders/topups", {
      form: { package_id: topupId, iccid, description: `${description}-t1` },
    });
    assert.equal(topped.status, 200, JSON.stringify(topped.body));
    assert.equal(topped.body.data.type, "topup");
    assert.equal(topped.body.data.sims, undefined);
    assert.equal(topped.body.data.description, `${description}-t1`);
    const used = await control(`/control/sims/${iccid}/usage`, { used_mb: 500 });
    assert.equal(used.status, "ACTIVE");
    const usage = await call("GET", `/v2/sims/${iccid}/usage`);
    assert.equal(usage.body.meta.message, "api.succes");
    assert.equal(usage.body.data.total, 1024 + topups.body.data[0].amount);
    assert.equal(usage.body.data.remaining, usage.body.data.total - 500);
    const history = await call("GET", `/v2/sims/${iccid}/packages`);
    assert.equal(history.body.data.length, 2);
    const wrong = await call("POST", "/v2/orders/topups", {
      json: { package_id: "hallo-mobil-7days-1gb-topup", iccid },
    });
    assert.deepEqual(wrong.body, {
      data: { package_id: "invalid topup package" },
      meta: { message: "the parameter is invalid" },
    });
    const empty = await call("POST", "/v2/orders/topups", { json: {} });
    assert.deepEqual(empty.body.data, {
      iccid: "The iccid field is required.",
      package_id: "The package id field is required.",
    });
  });

  test("usage is cached, unlimited reports 0/0, and an unknown ICCID is 404", async () => {
    await control("/control", { usage_cache_ms: 3_600_000 });
    const iccid = (await order(ourId())).sims[0].iccid;
    await call("GET", `/v2/sims/${iccid}/usage`);
    await control(`/control/sims/${iccid}/usage`, { used_mb: 100 });
    const cached = await call("GET", `/v2/sims/${iccid}/usage`);
    assert.equal(cached.body.data.status, "NOT_ACTIVE", "served from the cache");
    const unlimited = (await order(ourId(), 1, "moshi-moshi-7days-unlimited")).sims[0].iccid;
    await control(`/control/sims/${unlimited}/usage`, { used_mb: 5000 });
    const answer = await call("GET", `/v2/sims/${unlimited}/usage`);
    assert.deepEqual(
      [answer.body.data.total, answer.body.data.remaining, answer.body.data.is_unlimited],
      [0, 0, true],
    );
    for (const route of ["/usage", "/topups", ""]) {
      const unknown = await call("GET", `/v2/sims/8944465400999999990${route}`);
      assert.equal(unknown.status, 404);
      assert.deepEqual(unknown.body, { data: [], meta: { message: "messages.resource_not_found" } });
    }
  });

  test("usage is limited to 10 a minute per ICCID", async () => {
    const iccid = (await order(ourId())).sims[0].iccid;
    // The company-wide 5 a second would trip first on a fast machine; this test is about the per-ICCID limit.
    await control("/control", { rate_limits: { usage_per_company: { limit: 1000, window_ms: 1000 } } });
    for (let index = 0; index < 10; index++) {
      const answer = await call("GET", `/v2/sims/${iccid}/usage`);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get("x-ratelimit-limit"), "10");
    }
    const limited = await call("GET", `/v2/sims/${iccid}/usage`);
    assert.equal(limited.status, 429);
    assert.deepEqual(limited.body, { message: "Too Many Attempts." });
    assert.ok(limited.headers.get("retry-after"));
    const other = (await order(ourId())).sims[0].iccid;
    assert.equal((await call("GET", `/v2/sims/${other}/usage`)).status, 200);
  });

  test("a recycled eSIM is code 73 for its top-ups and RECYCLED in its usage", async () => {
    const iccid = (await order(ourId())).sims[0].iccid;
    await control(`/control/sims/${iccid}/recycle`, {});
    const list = await call("GET", `/v2/sims/${iccid}/topups`);
    assert.deepEqual(list.body, {
      code: 73,
      reason: `The eSIM with iccid ${iccid} has been recycled. It can no longer be used or topped up.`,
    });
    const topup = await call("POST", "/v2/orders/topups", {
      json: { package_id: "uki-mobile-7days-1gb-topup", iccid },
    });
    assert.equal(topup.body.code, 73);
    const usage = await call("GET", `/v2/sims/${iccid}/usage`);
    assert.equal(usage.body.data.status, "RECYCLED");
    assert.equal((await call("GET", `/v2/sims/${iccid}`)).body.data.recycled, true);
  });
});

describe("refunds", () => {
  test("a request answers 202 and changes nothing until a review approves it: then the order is refunded and the credit back", async () => {
    const placed = await order(ourId(), 2);
    const credit = (await control("/control/account")).credit_usd;
    const requested = await call("POST", "/v2/refund", {
      json: { iccids: [placed.sims[0].iccid], reason: "INSTALLATION_FAILURE", email: "ops@example.com" },
    });
    assert.equal(requested.status, 202);
    assert.equal(typeof requested.body.data.refund_id, "string");
    assert.match(requested.body.data.created_at, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    const pending = await call("GET", `/v2/orders/${placed.id}?include=status`);
    assert.equal(pending.body.data.status.slug, "completed");
    const reviewed = await control(`/control/refunds/${requested.body.data.refund_id}/review`, {
      outcome: "approved",
    });
    assert.equal(reviewed.status, "approved");
    const partly = await call("GET", `/v2/orders/${placed.id}?include=status`);
    assert.equal(partly.body.data.status.slug, "partially_refunded");
    assert.equal(
      Math.round(((await control("/control/account")).credit_usd - credit) * 100),
      Math.round(placed.net_price * 100),
    );
    await control("/control", { reset_rate_limits: true });
    const rest = await call("POST", "/v2/refund", {
      plain: JSON.stringify({ iccids: [placed.sims[1].iccid], reason: "OTHERS", notes: "trip cancelled" }),
    });
    assert.equal(rest.status, 202, JSON.stringify(rest.body));
    await control(`/control/refunds/${rest.body.data.refund_id}/review`, { outcome: "approved" });
    const refunded = await ordersDescribed(placed.description);
    assert.equal(refunded[0].status.slug, "refunded");
    const listed = await call("GET", "/v2/orders?filter[order_status]=refunded");
    assert.ok(listed.body.data.some((o: any) => o.id === placed.id));
  });

  test("a rejected review leaves the order and the credit alone", async () => {
    const placed = await order(ourId());
    const credit = (await control("/control/account")).credit_usd;
    const requested = await call("POST", "/v2/refund", {
      multipart: { iccids: [placed.sims[0].iccid], reason: "CHANGE_OF_PLAN" },
    });
    assert.equal(requested.status, 202, JSON.stringify(requested.body));
    const reviewed = await control(`/control/refunds/${requested.body.data.refund_id}/review`, {
      outcome: "rejected",
    });
    assert.equal(reviewed.status, "rejected");
    assert.equal((await control("/control/account")).credit_usd, credit);
    assert.equal((await ordersDescribed(placed.description))[0].status.slug, "completed");
  });

  test("refund validation errors and the 1-per-5-minutes limit", async () => {
    const iccid = (await order(ourId())).sims[0].iccid;
    await control("/control", { rate_limits: { refund: { limit: 100, window_ms: 300_000 } } });
    const missing = await call("POST", "/v2/refund", { json: { reason: "OTHERS" } });
    assert.deepEqual(missing.body, { data: [], meta: { message: "The iccids field is required." } });
    const reason = await call("POST", "/v2/refund", { json: { iccids: [iccid], reason: "BORED" } });
    assert.equal(reason.status, 422);
    assert.match(
      reason.body.data.reason,
      /^The selected reason is invalid\. It must be one of the following: /,
    );
    const notes = await call("POST", "/v2/refund", { json: { iccids: [iccid], reason: "OTHERS" } });
    assert.ok(notes.body.data.notes);
    const foreign = await call("POST", "/v2/refund", {
      json: { iccids: ["894000000000001"], reason: "NO_COVERAGE" },
    });
    assert.deepEqual(foreign.body, {
      data: [],
      meta: { message: "The following ICCIDs do not belong to your company: 894000000000001" },
    });
    await control("/control", { rate_limits: { refund: DOCUMENTED_LIMITS.refund }, reset_rate_limits: true });
    assert.equal(
      (await call("POST", "/v2/refund", { json: { iccids: [iccid], reason: "NO_COVERAGE" } })).status,
      202,
    );
    const limited = await call("POST", "/v2/refund", { json: { iccids: [iccid], reason: "NO_COVERAGE" } });
    assert.equal(limited.status, 429);
    assert.deepEqual(limited.body, { message: "Too Many Attempts." });
  });
});

describe("faults", () => {
  test("commit then 500: the order is made, the answer is a 500, and the list shows the one order", async () => {
    await control("/control", { arm: [{ operation: "order", kind: "commit_then_500" }] });
    const description = ourId();
    const answer = await call("POST", "/v2/orders", {
      json: { package_id: PACKAGE, quantity: 1, description },
    });
    assert.equal(answer.status, 500);
    const found = await ordersDescribed(description);
    assert.equal(found.length, 1);
    assert.equal(found[0].sims.length, 1);
  });

  test("a connection dropped after the commit leaves one order; one dropped before leaves none", async () => {
    for (const [kind, expected] of [
      ["drop_after_commit", 1],
      ["drop", 0],
    ] as const) {
      await control("/control", { arm: [{ operation: "order", kind }] });
      const description = ourId();
      await assert.rejects(
        call("POST", "/v2/orders", { json: { package_id: PACKAGE, quantity: 1, description } }),
      );
      assert.equal((await ordersDescribed(description)).length, expected, kind);
    }
  });

  test("a delayed call still answers; an injected 503 does nothing; a top-up can fail after its commit too", async () => {
    await control("/control", {
      arm: [
        { operation: "order", kind: "delay", delay_ms: 50 },
        { operation: "order", kind: "status", status: 503 },
      ],
    });
    const description = ourId();
    assert.equal(
      (await call("POST", "/v2/orders", { json: { package_id: PACKAGE, quantity: 1, description } })).status,
      200,
    );
    assert.equal(
      (await call("POST", "/v2/orders", { json: { package_id: PACKAGE, quantity: 1, description } })).status,
      503,
    );
    const [placed] = await ordersDescribed(description);
    await control("/control", { arm: [{ operation: "topup", kind: "commit_then_500" }] });
    const topup = await call("POST", "/v2/orders/topups", {
      json: {
        package_id: "uki-mobile-7days-1gb-topup",
        iccid: placed.sims[0].iccid,
        description: `${description}-t`,
      },
    });
    assert.equal(topup.status, 500);
    const listed = await call("GET", `/v2/orders?filter[description]=${description}-t`);
    assert.equal(listed.body.data.length, 1);
    assert.equal(listed.body.data[0].type, "topup");
  });
});

describe("webhooks", async () => {
  type Hook = { method: string; headers: http.IncomingHttpHeaders; body: string };
  const hooks: Hook[] = [];
  const receiver = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      hooks.push({ method: request.method!, headers: request.headers, body });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  after(() => new Promise((resolve) => receiver.close(resolve)));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/airalo`;
  const sdkSignature = createRequire(import.meta.url)("airalo-sdk/src/helpers/Signature");

  async function nextHook(count: number): Promise<Hook> {
    for (
      let attempt = 0;
      attempt < 500 && hooks.filter((hook) => hook.method === "POST").length < count;
      attempt++
    )
      await new Promise((resolve) => setTimeout(resolve, 20));
    const posts = hooks.filter((hook) => hook.method === "POST");
    assert.ok(posts.length >= count, "no webhook arrived");
    return posts[count - 1]!;
  }

  function assertSigned(hook: Hook): void {
    const expected = createHmac("sha512", CLIENT_SECRET).update(hook.body).digest("hex");
    assert.equal(hook.headers["airalo-signature"], expected);
    assert.equal(new sdkSignature(CLIENT_SECRET).checkSignature(expected, hook.body), true);
  }

  test("an async order answers 202 with a request_id, then POSTs the order with it, signed", async () => {
    const noUrl = await call("POST", "/v2/orders-async", { json: { package_id: PACKAGE, quantity: 1 } });
    assert.deepEqual(noUrl.body, { reason: "User is not opted in and no webhook URL provided." });
    const description = ourId();
    const accepted = await call("POST", "/v2/orders-async", {
      multipart: { package_id: PACKAGE, quantity: "1", description, webhook_url: hookUrl },
    });
    assert.equal(accepted.status, 202);
    assert.match(accepted.body.data.request_id, /^[0-9A-Za-z]{25}$/);
    const hook = await nextHook(1);
    assertSigned(hook);
    const payload = JSON.parse(hook.body);
    assert.equal(payload.request_id, accepted.body.data.request_id);
    assert.equal(payload.data.description, description);
    assert.equal(payload.data.sims.length, 1);
    assert.equal((await ordersDescribed(description)).length, 1);
  });

  test("opt-in probes with HEAD; a crossed data level and the simulator endpoint send the low-data webhook", async () => {
    const optedIn = await call("POST", "/v2/notifications/opt-in", {
      json: { type: "webhook_low_data", webhook_url: hookUrl },
    });
    assert.equal(optedIn.status, 200, JSON.stringify(optedIn.body));
    assert.deepEqual(optedIn.body.data.notification, { type: "webhook_low_data", contact_point: hookUrl });
    assert.ok(hooks.some((hook) => hook.method === "HEAD"));
    const before = hooks.filter((hook) => hook.method === "POST").length;
    const iccid = (await order(ourId())).sims[0].iccid;
    await control(`/control/sims/${iccid}/usage`, { used_mb: 800 });
    const hook = await nextHook(before + 1);
    assertSigned(hook);
    assert.deepEqual(JSON.parse(hook.body), {
      level: "75%",
      package_name: PACKAGE,
      remaining_percentage: 22,
      iccid,
    });
    const simulated = await call("POST", "/v2/simulator/webhook", {
      json: { event: "low_data_notification", type: "expire_1", iccid },
    });
    assert.deepEqual(simulated.body, { success: "Notification sent" });
    assert.equal(JSON.parse((await nextHook(before + 2)).body).level, "1days");
    const dead = await call("POST", "/v2/notifications/opt-in", {
      json: { type: "async_orders", webhook_url: "http://127.0.0.1:1/nothing" },
    });
    assert.equal(dead.status, 422);
    assert.equal(
      (await call("POST", "/v2/notifications/opt-out", { json: { type: "webhook_low_data" } })).status,
      200,
    );
  });
});

describe("the fake as a process", () => {
  test("an order and the token outlive a crash of the fake: after a restart the list still shows the order", async () => {
    const start = () => {
      const child = spawnNode({
        name: "airalo fake",
        script: "src/simulators/airalo/main.ts",
        env: { DATABASE_URL: database.url, AIRALO_SIM_PORT: "0", SIMULATOR_EXIT_ON_STDIN_CLOSE: "1" },
      });
      after(() => child.stop(5_000));
      return child;
    };
    const listening = /^airalo fake listening on (http:\/\/\S+)$/m;
    const first = start();
    const firstUrl = await waitForOutput(first, listening, 15_000);
    const issued = await fetch(`${firstUrl}/v2/token`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({
        client_id: "sandbox-client",
        client_secret: "sandbox-secret-0000",
        grant_type: "client_credentials",
      }),
    });
    const sandboxToken = ((await issued.json()) as any).data.access_token;
    const description = ourId();
    const form = new FormData();
    for (const [name, value] of Object.entries({ package_id: PACKAGE, quantity: "1", description }))
      form.append(name, value);
    const placed = await fetch(`${firstUrl}/v2/orders`, {
      method: "POST",
      headers: { authorization: `Bearer ${sandboxToken}`, accept: "application/json" },
      body: form,
    });
    assert.equal(placed.status, 200);
    await first.kill();
    const second = start();
    const secondUrl = await waitForOutput(second, listening, 15_000);
    const listed = await fetch(`${secondUrl}/v2/orders?filter[description]=${description}`, {
      headers: { authorization: `Bearer ${sandboxToken}`, accept: "application/json" },
    });
    assert.equal(listed.status, 200);
    assert.equal(((await listed.json()) as any).data.length, 1);
    assert.equal(await second.stop(5_000), 0);
  });
});

describe("the official Node SDK (airalo-sdk 1.2.2) against the fake as a process over HTTPS", () => {
  test("token, packages, an order, the eSIM's usage and top-ups, and a top-up", async () => {
    const certificates = makeCertificates();
    const process_ = spawnNode({
      name: "airalo fake",
      script: "src/simulators/airalo/main.ts",
      env: {
        DATABASE_URL: database.url,
        AIRALO_SIM_PORT: "0",
        AIRALO_SIM_CLIENT_ID: "sdk-client",
        AIRALO_SIM_CLIENT_SECRET: "sdk-secret-5678",
        AIRALO_SIM_TLS_CERT: certificates.server.cert_file,
        AIRALO_SIM_TLS_KEY: certificates.server.key_file,
        SIMULATOR_EXIT_ON_STDIN_CLOSE: "1",
      },
    });
    after(() => process_.stop(5_000));
    const url = await waitForOutput(process_, /^airalo fake listening on (https:\/\/\S+)$/m, 15_000);
    const cache = mkdtempSync(path.join(tmpdir(), "airalo-sdk-cache-"));
    after(() => rmSync(cache, { recursive: true, force: true }));
    const description = ourId();
    const result = await runSdk(url, cache, certificates.ca_file, description);
    assert.equal(
      result.packages.some((p: any) => p.package_id === PACKAGE),
      true,
    );
    assert.equal(result.order.data.description, description);
    assert.ok(hasValidLuhnDigit(result.order.data.sims[0].iccid));
    assert.equal(result.usage.data.status, "NOT_ACTIVE");
    assert.ok(result.topups.data.length > 0);
    assert.equal(result.topup.data.type, "topup");
    // The process shares the database: the in-process fake finds what the SDK ordered.
    assert.equal((await ordersDescribed(description)).length, 1);
    assert.equal(await process_.stop(5_000), 0);
  });
});

/** The SDK in a child process: NODE_EXTRA_CA_CERTS is read at start-up, and its base URL is patched before use. */
async function runSdk(url: string, cache: string, ca_file: string, description: string): Promise<any> {
  const script = `
    const Config = require("airalo-sdk/src/core/Config");
    Config.prototype.getUrl = () => ${JSON.stringify(`${url}/v2/`)};
    const { Airalo, Cached } = require("airalo-sdk");
    Cached.setCachePath(${JSON.stringify(cache)});
    (async () => {
      const airalo = new Airalo({ client_id: "sdk-client", client_secret: "sdk-secret-5678" });
      await airalo.initialize();
      const packages = (await airalo.getAllPackages(true)).data;
      const order = await airalo.order(${JSON.stringify(PACKAGE)}, 1, ${JSON.stringify(description)});
      const iccid = order.data.sims[0].iccid;
      const usage = await airalo.getSimUsage(iccid);
      const topups = await airalo.getSimTopups(iccid);
      const topup = await airalo.topup(topups.data[0].id, iccid);
      process.stdout.write(JSON.stringify({ packages, order, usage, topups, topup }));
    })().catch((error) => { console.error(error.message); process.exit(1); });`;
  const child = spawn(process.execPath, ["--input-type=commonjs", "-e", script], {
    cwd: process.cwd(),
    env: { ...process.env, NODE_EXTRA_CA_CERTS: ca_file },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.on("close", resolve));
  assert.equal(code, 0, stderr);
  return JSON.parse(stdout);
}
