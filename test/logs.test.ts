// Log hygiene (issue 5): every line an app and real service processes log during a full flow
// (purchases, a retry, carrier failures, top-ups and their replay, validation errors, wrong keys,
// an unexpected database error, a failed email delivery) is captured, at the most verbose level.
// API keys (whole, or the part after the prefix), end users' emails and phone numbers and the
// admin token never appear; every request is one JSON line with its request id, partner id,
// route, status and duration.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { sql } from "kysely";
import { pino } from "pino";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { generateApiKey } from "../src/partners/api-keys.ts";
import { loggerOptions } from "../src/server/app.ts";
import { ADMIN_TOKEN, createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { endUser } from "./support/fixtures.ts";
import { request as send } from "./support/http.ts";
import { startSimulatorProcess } from "./support/simulator.ts";
import {
  call,
  createWorld,
  type Json,
  newPartner,
  ADMIN_TOKEN as WORLD_ADMIN_TOKEN,
} from "./support/world.ts";

type Line = Record<string, any>;

/** Every request below sends its own X-Request-Id: these are the ids whose lines we expect. */
type Sent = { request_id: string; partner_id: string | null; status: number; route: string };

const PHONES = ["+14155550123", "+33612345678"];
const EMAILS = [
  "ana.secret@example.com",
  "decline@carrier.test",
  "unavailable@carrier.test",
  "leak-probe@example.com",
  "Bad.Address@",
];
const END_USER = endUser({ email: EMAILS[0]!, phone: PHONES[0]! });

function parseLines(text: string): { lines: Line[]; raw: string[] } {
  const raw = text.split("\n").filter((line) => line.trim() !== "");
  const lines: Line[] = [];
  for (const line of raw) {
    try {
      lines.push(JSON.parse(line));
    } catch {
      // Not JSON (a start-up banner): still searched for secrets below.
    }
  }
  return { lines, raw };
}

/** The secrets of a key: all of it, and the random part after `sand_`/`prod_`. */
function keyParts(api_key: string): string[] {
  return [api_key, api_key.slice(5)];
}

function assertNoSecrets(text: string, secrets: string[], where: string): void {
  for (const secret of secrets) {
    assert.ok(!text.includes(secret), `${where}: the logs contain ${JSON.stringify(secret)}`);
    // Also escaped, as JSON would write it (a `+` phone or an `@` stays as is; quotes would not).
    assert.ok(
      !text.includes(JSON.stringify(secret).slice(1, -1)),
      `${where}: the logs contain ${secret} escaped`,
    );
  }
  for (const phone of PHONES) {
    assert.ok(!text.includes(phone.slice(1)), `${where}: the logs contain the digits of ${phone}`);
  }
}

function assertRequestLines(lines: Line[], sent: Sent[], where: string): void {
  for (const request of sent) {
    const mine = lines.filter((line) => line.request_id === request.request_id && line.msg === "request");
    assert.equal(mine.length, 1, `${where}: one line for request ${request.request_id} (${request.route})`);
    const line = mine[0]!;
    assert.equal(line.partner_id, request.partner_id, `${where}: partner_id of ${request.route}`);
    assert.equal(line.status, request.status, `${where}: status of ${request.route}`);
    assert.equal(line.route, request.route, `${where}: route of ${request.request_id}`);
    assert.equal(typeof line.duration_ms, "number", `${where}: duration_ms of ${request.route}`);
    assert.ok(line.duration_ms >= 0);
  }
}

test("an app logs one line per request, with ids, and no keys, emails or phone numbers", async () => {
  const output: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      output.push(chunk.toString("utf8"));
      done();
    },
  });
  // The production logger configuration (redaction, error serializer), at its most verbose level.
  const logger = pino(loggerOptions("trace") as object, stream);
  const database = await createTestDatabase({ catalog: true });
  const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
  const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
  const app = await createTestApp({ log_level: "trace" }, { loggerInstance: logger, database, carrier });

  const sent: Sent[] = [];
  let sequence = 0;
  const request = async (
    method: string,
    url: string,
    options: {
      key?: string;
      headers?: Record<string, string>;
      payload?: Json;
      partner_id?: string | null;
    } = {},
  ) => {
    const request_id = `logs-${sequence++}`;
    const answer = await send(app.app, method, url, {
      key: options.key,
      headers: { "x-request-id": request_id, ...options.headers },
      // A string is a body sent as it is (malformed JSON on purpose).
      ...(typeof options.payload === "string" ? { raw_body: options.payload } : { body: options.payload }),
    });
    const route = url.split("?")[0]!;
    sent.push({
      request_id,
      partner_id: options.partner_id ?? null,
      status: answer.status,
      route: routeOf(method, route),
    });
    return { status: answer.status, body: answer.body as Json };
  };
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  const created = await request("POST", "/admin/partners", {
    headers: admin,
    payload: { name: "Log Travel" },
  });
  const partner = created.body as { partner_id: string; api_key: string; key_id: string };
  const as = { key: partner.api_key, partner_id: partner.partner_id };
  await request("POST", `/admin/partners/${partner.partner_id}/wallet/credits`, {
    headers: admin,
    payload: { amount_minor: 1_000_000, reference: "logs-credit" },
  });
  const second = await request("POST", `/admin/partners/${partner.partner_id}/api-keys`, { headers: admin });
  await request("DELETE", `/admin/api-keys/${second.body.key_id}`, { headers: admin });

  // Wrong keys of every kind, in both headers, and a key where none belongs.
  const production_key = generateApiKey("production").api_key;
  const unknown_key = generateApiKey("sandbox").api_key;
  await request("GET", "/v1/profile/wallet", { key: second.body.api_key });
  await request("GET", "/v1/profile/wallet", { key: production_key });
  await request("GET", "/v1/profile/wallet", { key: unknown_key });
  await request("GET", "/v1/profile/wallet", { headers: { "x-api-key": unknown_key } });
  await request("GET", "/v1/profile/wallet", { headers: { authorization: `Basic ${partner.api_key}` } });
  await request("GET", `/v1/profile/wallet?api_key=${partner.api_key}`, {});
  await request("POST", "/admin/partners", { key: partner.api_key, payload: { name: "x" } });

  // A purchase, its retry, refusals by the carrier, validation errors carrying personal data.
  await request("GET", "/v1/esim/destination/FR/packages", as);
  const cart = async () =>
    (await request("POST", "/v1/orders/cart", { ...as, payload: { package_id: "fr-1gb-7d" } })).body.cart_key;
  const cart_key = await cart();
  const bought = await request("POST", "/v1/orders/submit", { ...as, payload: { cart_key, ...END_USER } });
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  await request("POST", "/v1/orders/submit", { ...as, payload: { cart_key, ...END_USER } });
  const declined = await request("POST", "/v1/orders/submit", {
    ...as,
    payload: { cart_key: await cart(), ...END_USER, email: "decline@carrier.test" },
  });
  assert.equal(declined.status, 502);
  const unavailable = await request("POST", "/v1/orders/submit", {
    ...as,
    payload: { cart_key: await cart(), ...END_USER, email: "unavailable@carrier.test", phone: PHONES[1] },
  });
  assert.equal(unavailable.status, 503);
  await request("POST", "/v1/orders/submit", {
    ...as,
    payload: { cart_key: await cart(), ...END_USER, email: "Bad.Address@" },
  });
  await request("POST", "/v1/orders/submit", {
    ...as,
    payload: { cart_key: await cart(), ...END_USER, phone: "+10000000000" },
  });
  await request("POST", "/v1/orders/submit", {
    ...as,
    payload: "{not json" as unknown as Json,
    headers: { "content-type": "application/json" },
  });

  // A top-up under an Idempotency-Key, its replay, and the same key with another body.
  const iccid = bought.body.purchases[0].iccid;
  await request("GET", `/v1/orders/available-topups/${iccid}`, as);
  const topup = { iccid, package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D", ...END_USER };
  const keyed = { ...as, headers: { "idempotency-key": "logs-topup-1" } };
  assert.equal((await request("POST", "/v1/orders/submit-topup", { ...keyed, payload: topup })).status, 200);
  await request("POST", "/v1/orders/submit-topup", { ...keyed, payload: topup });
  await request("POST", "/v1/orders/submit-topup", { ...keyed, payload: { ...topup, first_name: "Other" } });
  await request("GET", `/v1/orders/${bought.body.orderID}`, as);
  await request("GET", "/v1/profile/orders?client_reference=booking-1", as);

  // An unexpected database error whose PostgreSQL detail carries the whole row, email and phone
  // included: the 500 is logged, the row is not.
  await sql`alter table orders add constraint logs_probe check (email <> 'leak-probe@example.com') not valid`.execute(
    app.db,
  );
  const failed = await request("POST", "/v1/orders/submit", {
    ...as,
    payload: { cart_key: await cart(), ...END_USER, email: "leak-probe@example.com" },
  });
  assert.equal(failed.status, 500);
  await sql`alter table orders drop constraint logs_probe`.execute(app.db);

  logger.flush();
  const { lines, raw } = parseLines(output.join(""));
  const text = raw.join("\n");
  assert.ok(
    lines.some((line) => line.msg === "unhandled error" && line.err),
    "the 500 was logged with its error",
  );
  assertNoSecrets(
    text,
    [
      ...keyParts(partner.api_key),
      ...keyParts(second.body.api_key),
      ...keyParts(production_key),
      ...keyParts(unknown_key),
      ADMIN_TOKEN,
      ...EMAILS,
      ...PHONES,
    ],
    "app",
  );
  assertRequestLines(lines, sent, "app");
});

/** The route template Fastify reports for a path we sent. */
function routeOf(method: string, path: string): string {
  const templates = [
    "/admin/partners/:partner_id/wallet/credits",
    "/admin/partners/:partner_id/api-keys",
    "/admin/api-keys/:key_id",
    "/admin/partners",
    "/v1/esim/destination/:destination_code/packages",
    "/v1/orders/available-topups/:iccid",
    "/v1/orders/submit-topup",
    "/v1/orders/submit",
    "/v1/orders/cart",
    "/v1/profile/orders",
    "/v1/profile/wallet",
    "/v1/orders/:orderID",
  ];
  for (const template of templates) {
    const pattern = new RegExp(`^${template.replace(/:[A-Za-z_]+/g, "[^/]+")}$`);
    if (pattern.test(path)) return template;
  }
  throw new Error(`no route for ${method} ${path}`);
}

test("real service processes log no keys, emails or phone numbers through a whole flow", async () => {
  // Two processes, the worker included, at the most verbose level; emails really sent over SMTP,
  // one delivery failing first (the job is retried and logs the failure).
  const world = await createWorld({ services: 2, env: { LOG_LEVEL: "trace" } });
  const [api, api2] = world.services.map((service) => service.url) as [string, string];
  const sent: Array<Sent & { process: 0 | 1 }> = [];
  let sequence = 0;
  const request = async (
    process: 0 | 1,
    method: string,
    path: string,
    options: {
      key?: string;
      body?: unknown;
      headers?: Record<string, string>;
      partner_id?: string | null;
    } = {},
  ) => {
    const request_id = `world-logs-${sequence++}`;
    const answer = await call(process === 0 ? api : api2, method, path, {
      key: options.key,
      body: options.body,
      headers: { "x-request-id": request_id, ...options.headers },
    });
    sent.push({
      process,
      request_id,
      partner_id: options.partner_id ?? null,
      status: answer.status,
      route: routeOf(method, path.split("?")[0]!),
    });
    return answer;
  };

  const partner = await newPartner(api, 1_000_000, "World Log Travel");
  const as = { key: partner.api_key, partner_id: partner.partner_id };
  world.smtp.failNext(1);
  const cart = async (process: 0 | 1) =>
    (await request(process, "POST", "/v1/orders/cart", { ...as, body: { package_id: "fr-1gb-7d" } })).body
      .cart_key;
  const cart_key = await cart(0);
  const bought = await request(0, "POST", "/v1/orders/submit", { ...as, body: { cart_key, ...END_USER } });
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  // The retry lands on the other process.
  assert.equal(
    (await request(1, "POST", "/v1/orders/submit", { ...as, body: { cart_key, ...END_USER } })).status,
    200,
  );
  const declined = await request(1, "POST", "/v1/orders/submit", {
    ...as,
    body: { cart_key: await cart(1), ...END_USER, email: "decline@carrier.test" },
  });
  assert.equal(declined.status, 502);
  await request(0, "POST", "/v1/orders/submit", {
    ...as,
    body: { cart_key: await cart(0), ...END_USER, phone: "+10000000000" },
  });
  const iccid = bought.body.purchases[0].iccid;
  const topup = { iccid, package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D", ...END_USER };
  const keyed = { ...as, headers: { "idempotency-key": "world-logs-topup" } };
  assert.equal((await request(0, "POST", "/v1/orders/submit-topup", { ...keyed, body: topup })).status, 200);
  await request(1, "POST", "/v1/orders/submit-topup", { ...keyed, body: topup });
  await request(1, "POST", "/v1/orders/submit-topup", { ...keyed, body: { ...topup, phone: PHONES[1] } });

  // Wrong keys.
  const production_key = generateApiKey("production").api_key;
  const unknown_key = generateApiKey("sandbox").api_key;
  await request(0, "GET", "/v1/profile/wallet", { key: production_key });
  await request(1, "GET", "/v1/profile/wallet", { key: unknown_key });
  await request(0, "GET", "/v1/profile/wallet", { headers: { "x-api-key": `${partner.api_key}x` } });
  await request(1, "POST", "/admin/partners", { key: partner.api_key, body: { name: "x" } });

  // Both emails delivered (the first after its failed attempt was retried by the worker).
  await world.smtp.waitFor(1, 30_000);
  const logs = world.services.map((service) => service.logs());
  for (const [index, output] of logs.entries()) {
    assertNoSecrets(
      output,
      [
        ...keyParts(partner.api_key),
        ...keyParts(production_key),
        ...keyParts(unknown_key),
        WORLD_ADMIN_TOKEN,
        ...EMAILS,
        ...PHONES,
      ],
      `service ${index}`,
    );
    const { lines } = parseLines(output);
    assertRequestLines(
      lines,
      sent.filter((request) => request.process === index),
      `service ${index}`,
    );
  }
});
