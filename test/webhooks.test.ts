// Webhooks end to end (contract "Webhooks"): real service processes, the carrier simulator, and a
// real HTTP receiver that verifies every delivery with the `standardwebhooks` package. Events are
// made by the real flows: a purchase through the simulator, a declined one, sandbox simulate, an
// operator credit, the low-balance alert, the test route.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { creditWallet } from "./support/fixtures.ts";
import { freePort } from "./support/ports.ts";
import { startWebhookReceiver } from "./support/webhook-receiver.ts";
import {
  ADMIN_TOKEN,
  call,
  createWorld,
  type Json,
  newCart,
  newPartner,
  submit,
  waitFor,
} from "./support/world.ts";

const TIMEOUT_MS = 1_500;
const world = await createWorld({
  env: {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 9).toString("base64"),
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_FIRST_RETRY_DELAY_MS: "200",
    WEBHOOK_POLL_MS: "100",
    USAGE_SYNC_MAX_PER_SECOND: "0",
  },
});
const api = world.services[0]!.url;
const db = createKysely<Database>(world.database.pool);
const receiver = await startWebhookReceiver();

function get(key: string, path: string) {
  return call(api, "GET", path, { key });
}

/** A partner (credited) with one endpoint on the receiver's path `name`, its secret registered there. */
async function subscribed(name: string, body: Json = {}, credit_minor = 100_00) {
  const partner = await newPartner(api, credit_minor);
  const created = await call(api, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: receiver.path(name), description: `receiver ${name}`, ...body },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(created.body.secret.slice(6), "base64").length, 32);
  receiver.setSecrets(name, [created.body.secret]);
  return {
    ...partner,
    endpoint_id: created.body.endpoint_id as string,
    secret: created.body.secret as string,
  };
}

async function buy(key: string, overrides: Json = {}) {
  const cart = await newCart(api, key, "fr-1gb-7d");
  return submit(api, key, cart.cart_key, overrides);
}

function simulate(key: string, iccid: string, body: Json) {
  return call(api, "POST", `/v1/sandbox/esims/${iccid}/simulate`, { key, body });
}

async function deliveries(key: string, endpoint_id: string, query = "") {
  const page = await get(key, `/v1/webhook-endpoints/${endpoint_id}/deliveries?limit=100${query}`);
  assert.equal(page.status, 200, JSON.stringify(page.body));
  return page.body.data as Json[];
}

test("every event type is delivered, signed so that standardwebhooks verifies it, with the API's resource as data", async () => {
  const partner = await subscribed("all");
  // wallet.credited: an operator credit after the endpoint exists.
  await creditWallet(api, ADMIN_TOKEN, partner.partner_id, 5_00, `second-${partner.partner_id}`);
  // wallet.balance_low: a threshold just under the balance, crossed by the purchase.
  const wallet = await get(partner.api_key, "/v1/profile/wallet");
  const alert = await call(api, "PUT", "/v1/profile/wallet/low-balance-alert", {
    key: partner.api_key,
    body: { threshold_minor: wallet.body.balance.amount_minor - 1 },
  });
  assert.equal(alert.status, 200, JSON.stringify(alert.body));
  const bought = await buy(partner.api_key);
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  const iccid: string = bought.body.esim_iccid;
  // order.failed: the simulator declines this address.
  const declined = await buy(partner.api_key, { email: "decline@carrier.test" });
  assert.equal(declined.status, 502, JSON.stringify(declined.body));
  // The eSIM's life through sandbox simulate: the same signal path as a real carrier.
  assert.equal((await simulate(partner.api_key, iccid, { event: "install" })).status, 200);
  assert.equal((await simulate(partner.api_key, iccid, { event: "use_data", data_mb: 520 })).status, 200);
  // The carrier's clock moves on: the bundle now ends in 12 hours, which the next signal carries.
  await sql`update carrier_sim.bundles set expires_at = now() + interval '12 hours'
            where iccid = ${iccid} and status = 'active'`.execute(db);
  assert.equal((await simulate(partner.api_key, iccid, { event: "use_data", data_mb: 320 })).status, 200);
  assert.equal((await simulate(partner.api_key, iccid, { event: "use_data", data_mb: 200 })).status, 200);
  assert.equal((await simulate(partner.api_key, iccid, { event: "expire" })).status, 200);
  assert.equal((await simulate(partner.api_key, iccid, { event: "delete" })).status, 200);
  const tested = await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/test`, {
    key: partner.api_key,
  });
  assert.equal(tested.status, 202, JSON.stringify(tested.body));

  const expected = [
    "wallet.credited",
    "wallet.balance_low",
    "order.completed",
    "order.failed",
    "esim.installed",
    "esim.activated",
    "esim.usage_threshold",
    "esim.expiring",
    "esim.expired",
    "esim.deleted",
    "webhook.test",
  ];
  const recorded = await sql<{ event_id: string; type: string }>`
    select event_id, type from events where partner_id = ${partner.partner_id} and created_at >= (
      select created_at from webhook_endpoints where endpoint_id = ${partner.endpoint_id})`.execute(db);
  assert.deepEqual([...new Set(recorded.rows.map((row) => row.type))].sort(), [...expected].sort());
  await waitFor("every event delivered", async () => {
    const ids = new Set(receiver.succeeded("all").map((entry) => entry.id));
    return recorded.rows.every((row) => ids.has(row.event_id));
  });
  for (const entry of receiver.received("all")) {
    assert.deepEqual(entry.verified_with, [0], `${entry.event.type} verifies with the endpoint's secret`);
    assert.equal(entry.event.id, entry.id, "webhook-id is the event id");
    assert.ok(Math.abs(entry.timestamp - Date.now() / 1000) < 60, "webhook-timestamp is this attempt's");
  }
  const byType = new Map<string, Json>(
    receiver.received("all").map((entry) => [entry.event.type, entry.event]),
  );
  // order.refunded is recorded by the refunds branch (issue 13), not here: its delivery is the same path.
  assert.deepEqual(
    byType.get("order.completed")!.data,
    (await get(partner.api_key, `/v1/orders/${bought.body.orderID}`)).body,
    "the Order as the API returns it",
  );
  assert.equal(byType.get("order.failed")!.data.status, "failed");
  assert.equal(byType.get("esim.deleted")!.data.iccid, iccid);
  const thresholds = receiver
    .received("all")
    .filter((entry) => entry.event.type === "esim.usage_threshold")
    .map((entry) => entry.event.data.threshold_percent)
    .sort((a, b) => a - b);
  assert.deepEqual(thresholds, [50, 80, 100]);
  assert.deepEqual(Object.keys(byType.get("wallet.balance_low")!.data).sort(), ["balance", "threshold"]);
  assert.equal(byType.get("webhook.test")!.id, tested.body.event_id);
  // The log says the same, and GET /v1/events shows each event exactly as it was posted.
  const log = await deliveries(partner.api_key, partner.endpoint_id, "&status=succeeded");
  assert.equal(log.length, recorded.rows.length);
  for (const delivery of log) assert.equal(delivery.attempts, 1);
  const one = byType.get("esim.installed")!;
  assert.deepEqual((await get(partner.api_key, `/v1/events/${one.id}`)).body, one);
});

test("a receiver that fails, then succeeds, gets the same webhook-id on every attempt", async () => {
  const partner = await subscribed("flaky", { event_types: ["webhook.test"] });
  receiver.path("flaky", (n) => (n < 2 ? 503 : 200));
  const tested = await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/test`, {
    key: partner.api_key,
  });
  // 503, then 5 s (here 200 ms), 503, then 5 minutes: the second retry is brought forward in the database.
  await waitFor("two failed attempts", async () => receiver.received("flaky").length >= 2);
  const [pending] = await deliveries(partner.api_key, partner.endpoint_id);
  assert.equal(pending!.status, "pending");
  assert.equal(pending!.attempts, 2);
  assert.equal(pending!.last_response_status, 503);
  assert.equal(pending!.last_error, "HTTP 503");
  const wait_s = (Date.parse(pending!.next_attempt_at) - Date.parse(pending!.last_attempt_at)) / 1000;
  assert.ok(wait_s >= 299 && wait_s <= 301, `the second retry waits 5 minutes, not ${wait_s} s`);
  await sql`update webhook_deliveries set next_attempt_at = now() where delivery_id = ${pending!.delivery_id}`.execute(
    db,
  );
  await waitFor("the third attempt succeeds", async () => receiver.succeeded("flaky").length === 1);
  const attempts = receiver.received("flaky");
  assert.deepEqual(
    attempts.map((entry) => [entry.id, entry.answered]),
    [
      [tested.body.event_id, 503],
      [tested.body.event_id, 503],
      [tested.body.event_id, 200],
    ],
  );
  for (const entry of attempts) assert.deepEqual(entry.verified_with, [0]);
  // The success is recorded once the receiver has answered (with the others finishing meanwhile).
  await waitFor("the success recorded", async () => {
    const [delivery] = await deliveries(partner.api_key, partner.endpoint_id);
    return delivery!.status === "succeeded";
  });
  const failing = await sql<{ failing_since: Date | null }>`
    select failing_since from webhook_endpoints where endpoint_id = ${partner.endpoint_id}`.execute(db);
  assert.equal(failing.rows[0]!.failing_since, null, "healthy again after a success");
  const [done] = await deliveries(partner.api_key, partner.endpoint_id);
  assert.deepEqual([done!.status, done!.attempts, done!.next_attempt_at], ["succeeded", 3, null]);
  // A manual retry sends it once more, same id, and the log says pending until then.
  const retried = await call(
    api,
    "POST",
    `/v1/webhook-endpoints/${partner.endpoint_id}/deliveries/${done!.delivery_id}/retry`,
    { key: partner.api_key },
  );
  assert.equal(retried.status, 202, JSON.stringify(retried.body));
  await waitFor("the manual retry", async () => receiver.succeeded("flaky").length === 2);
  assert.equal(receiver.succeeded("flaky")[1]!.id, tested.body.event_id);
});

test("a receiver that answers 410 Gone disables its endpoint at once; nothing more is sent", async () => {
  const partner = await subscribed("gone");
  receiver.path("gone", () => 410);
  const first = await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/test`, {
    key: partner.api_key,
  });
  assert.equal(first.status, 202);
  await waitFor("the endpoint disabled", async () => {
    const endpoint = await get(partner.api_key, `/v1/webhook-endpoints/${partner.endpoint_id}`);
    return endpoint.body.status === "disabled" && endpoint.body;
  });
  const endpoint = (await get(partner.api_key, `/v1/webhook-endpoints/${partner.endpoint_id}`)).body;
  assert.match(endpoint.disabled_reason, /410/);
  const [failed] = await deliveries(partner.api_key, partner.endpoint_id);
  assert.deepEqual([failed!.status, failed!.last_response_status, failed!.attempts], ["failed", 410, 1]);
  // New events are not delivered while it is disabled; enabling it sends what waits.
  await creditWallet(api, ADMIN_TOKEN, partner.partner_id, 1_00, `gone-${partner.partner_id}`);
  await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/test`, { key: partner.api_key });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.equal(receiver.received("gone").length, 1, "nothing sent to a disabled endpoint");
  receiver.path("gone", () => 200);
  const enabled = await call(api, "PATCH", `/v1/webhook-endpoints/${partner.endpoint_id}`, {
    key: partner.api_key,
    body: { status: "enabled" },
  });
  assert.deepEqual([enabled.body.status, enabled.body.disabled_reason], ["enabled", null]);
  await waitFor("the waiting test event", async () => receiver.succeeded("gone").length === 1);
  assert.equal(receiver.succeeded("gone")[0]!.event.type, "webhook.test");
});

test("an endpoint whose every attempt failed for 5 days is disabled by the next failure", async () => {
  const partner = await subscribed("failing", { event_types: ["webhook.test"] });
  receiver.path("failing", () => 500);
  await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/test`, { key: partner.api_key });
  await waitFor("a failed attempt", async () => receiver.received("failing").length >= 1);
  await waitFor("the failure run started", async () => {
    const row = await sql<{ failing_since: Date | null }>`
      select failing_since from webhook_endpoints where endpoint_id = ${partner.endpoint_id}`.execute(db);
    return row.rows[0]!.failing_since !== null;
  });
  await sql`update webhook_endpoints set failing_since = now() - interval '5 days 1 minute'
            where endpoint_id = ${partner.endpoint_id}`.execute(db);
  await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/test`, { key: partner.api_key });
  await waitFor("disabled", async () => {
    const endpoint = await get(partner.api_key, `/v1/webhook-endpoints/${partner.endpoint_id}`);
    return endpoint.body.status === "disabled";
  });
  const endpoint = (await get(partner.api_key, `/v1/webhook-endpoints/${partner.endpoint_id}`)).body;
  assert.match(endpoint.disabled_reason, /5 days/);
});

test("after a rotation both secrets verify every delivery until the overlap ends", async () => {
  const partner = await subscribed("rotated", { event_types: ["webhook.test"] });
  const rotated = await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/rotate-secret`, {
    key: partner.api_key,
  });
  assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
  assert.notEqual(rotated.body.secret, partner.secret);
  receiver.setSecrets("rotated", [partner.secret, rotated.body.secret]);
  await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/test`, { key: partner.api_key });
  await waitFor("the delivery", async () => receiver.succeeded("rotated").length === 1);
  const during = receiver.received("rotated")[0]!;
  assert.equal(during.signature.split(" ").length, 2, "two space-separated signatures");
  assert.deepEqual(during.verified_with, [0, 1], "the old and the new secret both verify");
  // The overlap over (24 hours, moved forward here): only the new secret signs.
  await sql`update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second'
            where endpoint_id = ${partner.endpoint_id}`.execute(db);
  await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/test`, { key: partner.api_key });
  await waitFor("the second delivery", async () => receiver.succeeded("rotated").length === 2);
  const afterwards = receiver.received("rotated")[1]!;
  assert.equal(afterwards.signature.split(" ").length, 1);
  assert.deepEqual(afterwards.verified_with, [1]);
});

test("rotations within 24 hours keep each replaced secret signing its own 24 hours, five at most", async () => {
  const partner = await subscribed("rotated-often", { event_types: ["webhook.test"] });
  const secrets = [partner.secret];
  const rotate = async () => {
    const rotated = await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/rotate-secret`, {
      key: partner.api_key,
    });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    secrets.push(rotated.body.secret);
  };
  const delivered = async () => {
    const before = receiver.succeeded("rotated-often").length;
    await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/test`, { key: partner.api_key });
    await waitFor("the delivery", async () => receiver.succeeded("rotated-often").length === before + 1);
    const got = receiver.received("rotated-often").at(-1)!;
    return { signatures: got.signature.split(" ").length, verified_with: got.verified_with };
  };
  // The first secret (a receiver still on it) signs on after the second rotation: three signatures.
  await rotate();
  await rotate();
  receiver.setSecrets("rotated-often", secrets);
  assert.deepEqual(await delivered(), { signatures: 3, verified_with: [0, 1, 2] });
  // The first replacement's 24 hours over (moved forward here): the first secret stops, the second signs on.
  await sql`update webhook_endpoints set earlier_secrets = jsonb_set(earlier_secrets, '{0,expires_at}',
              to_jsonb(now() - interval '1 second')) where endpoint_id = ${partner.endpoint_id}`.execute(db);
  assert.deepEqual(await delivered(), { signatures: 2, verified_with: [1, 2] });
  // Four more rotations: the current secret and the four replaced last sign.
  for (let i = 0; i < 4; i++) await rotate();
  receiver.setSecrets("rotated-often", secrets);
  // Secret 1, the oldest still within its 24 hours, went: five signatures at most.
  assert.deepEqual(await delivered(), { signatures: 5, verified_with: [2, 3, 4, 5, 6] });
});

test("a receiver that never answers delays another endpoint's deliveries by at most one attempt timeout", async () => {
  const partner = await subscribed("silent", { event_types: ["webhook.test"] });
  receiver.path("silent", () => "hang");
  const other = await subscribed("lively", { event_types: ["webhook.test"] });
  for (let i = 0; i < 20; i++) {
    await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/test`, { key: partner.api_key });
  }
  await waitFor("the silent receiver is called", async () => receiver.received("silent").length >= 1);
  const started = Date.now();
  await call(api, "POST", `/v1/webhook-endpoints/${other.endpoint_id}/test`, { key: other.api_key });
  await waitFor("the lively delivery", async () => receiver.succeeded("lively").length === 1);
  const took_ms = receiver.succeeded("lively")[0]!.at_ms - started;
  assert.ok(took_ms < TIMEOUT_MS, `delivered after ${took_ms} ms, within one attempt timeout`);
  // The silent endpoint never had more than its share of calls in flight at once.
  assert.ok(receiver.received("silent").length <= 2, `${receiver.received("silent").length} calls at once`);
  await waitFor("the silent attempts time out", async () => {
    const log = await deliveries(partner.api_key, partner.endpoint_id, "&status=pending");
    return log.some((delivery) => delivery.last_error === `no answer within ${TIMEOUT_MS} ms`);
  });
  await call(api, "DELETE", `/v1/webhook-endpoints/${partner.endpoint_id}`, { key: partner.api_key });
});

test("GET /v1/events: newest first by pages, filtered by type, the last 30 days only", async () => {
  const partner = await subscribed("events", { event_types: ["wallet.credited"] });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const tested = await call(api, "POST", `/v1/webhook-endpoints/${partner.endpoint_id}/test`, {
      key: partner.api_key,
    });
    ids.push(tested.body.event_id);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: Json = await get(
      partner.api_key,
      `/v1/events?type=webhook.test&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
    );
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.ok(page.body.data.length <= 2);
    seen.push(...page.body.data.map((event: Json) => event.id));
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  assert.deepEqual(seen, [...ids].reverse());
  const all = await get(partner.api_key, "/v1/events?limit=100");
  assert.ok(
    all.body.data.some((event: Json) => event.type === "wallet.credited"),
    "the initial credit",
  );
  // Older than 30 days: gone from the list and from GET one.
  await sql`update events set created_at = now() - interval '31 days' where event_id = ${ids[0]!}`.execute(
    db,
  );
  const recent = await get(partner.api_key, "/v1/events?type=webhook.test&limit=100");
  assert.deepEqual(
    recent.body.data.map((event: Json) => event.id),
    ids.slice(1).reverse(),
  );
  const old = await get(partner.api_key, `/v1/events/${ids[0]!}`);
  assert.deepEqual([old.status, old.body.code], [404, "event_not_found"]);
  const bad = await get(partner.api_key, "/v1/events?cursor=nonsense");
  assert.deepEqual([bad.status, bad.body.code], [400, "invalid_request"]);
});

test("another partner's endpoint, delivery and event ids answer 404 like unknown ones", async () => {
  const owner = await subscribed("owner");
  const tested = await call(api, "POST", `/v1/webhook-endpoints/${owner.endpoint_id}/test`, {
    key: owner.api_key,
  });
  await waitFor("the owner's delivery", async () => receiver.succeeded("owner").length === 1);
  const [delivery] = await deliveries(owner.api_key, owner.endpoint_id);
  const intruder = await subscribed("intruder");
  const hook = `/v1/webhook-endpoints/${owner.endpoint_id}`;
  const cases: Array<[string, string, Json | undefined, string]> = [
    ["GET", hook, undefined, "webhook_endpoint_not_found"],
    ["PATCH", hook, { status: "disabled" }, "webhook_endpoint_not_found"],
    ["DELETE", hook, undefined, "webhook_endpoint_not_found"],
    ["POST", `${hook}/rotate-secret`, undefined, "webhook_endpoint_not_found"],
    ["POST", `${hook}/test`, undefined, "webhook_endpoint_not_found"],
    ["GET", `${hook}/deliveries`, undefined, "webhook_endpoint_not_found"],
    ["POST", `${hook}/deliveries/${delivery!.delivery_id}/retry`, undefined, "webhook_endpoint_not_found"],
    [
      "POST",
      `/v1/webhook-endpoints/${intruder.endpoint_id}/deliveries/${delivery!.delivery_id}/retry`,
      undefined,
      "delivery_not_found",
    ],
    ["GET", `/v1/events/${tested.body.event_id}`, undefined, "event_not_found"],
  ];
  for (const [method, path, body, code] of cases) {
    const answer = await call(api, method, path, { key: intruder.api_key, body });
    assert.deepEqual([answer.status, answer.body.code], [404, code], `${method} ${path}`);
  }
  const still = await get(owner.api_key, hook);
  assert.deepEqual([still.status, still.body.status], [200, "enabled"]);
});

test("at most 10 endpoints per partner; the secret is shown once and stored only encrypted", async () => {
  const partner = await subscribed("limit-0");
  for (let i = 1; i < 10; i++) {
    const created = await call(api, "POST", "/v1/webhook-endpoints", {
      key: partner.api_key,
      body: { url: receiver.path(`limit-${i}`) },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
  }
  const eleventh = await call(api, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: receiver.path("limit-10") },
  });
  assert.deepEqual([eleventh.status, eleventh.body.code], [409, "webhook_endpoint_limit_reached"]);
  const list = await get(partner.api_key, "/v1/webhook-endpoints");
  assert.equal(list.body.data.length, 10);
  assert.ok(!JSON.stringify(list.body).includes("whsec_"), "no secret in the list");
  const stored = await sql<{ secret_sealed: string }>`
    select secret_sealed from webhook_endpoints where endpoint_id = ${partner.endpoint_id}`.execute(db);
  const sealed = stored.rows[0]!.secret_sealed;
  assert.ok(!sealed.includes(partner.secret.slice(6)) && !sealed.includes("whsec_"), "sealed, not plain");
  assert.ok(!world.services[0]!.logs().includes(partner.secret.slice(6)), "never logged");
});

test("the README's receiver verifies and logs a real delivery, as it does listen's", async () => {
  // The receiver of "On your laptop" (test/docs.snippets.test.ts runs it behind esim-partner listen):
  // the same code verifies what the service itself delivers.
  const readme = await readFile("README.md", "utf8");
  const code = /cat > receiver\.mjs <<'EOF'\n(.*?)\nEOF\n/s.exec(readme)?.[1];
  assert.ok(code, "the receiver example exists");
  const port = await freePort();
  const file = path.resolve(`readme-receiver-${process.pid}.mjs`);
  const sdk = pathToFileURL(path.resolve("packages/sdk/src/index.ts")).href;
  await writeFile(
    file,
    code
      .replace('"@esim-partner/sdk"', JSON.stringify(sdk))
      .replace(".listen(4242)", `.listen(${port}, "127.0.0.1")`),
  );
  after(() => rm(file, { force: true }));
  const partner = await newPartner(api, 0);
  const created = await call(api, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: `http://127.0.0.1:${port}/` },
  });
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, WEBHOOK_SECRET: created.body.secret },
  });
  after(() => child.kill());
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  await waitFor("the receiver listens", async () => {
    const probe = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "{}" }).catch(() => null);
    return probe?.status === 400;
  });
  await call(api, "POST", `/v1/webhook-endpoints/${created.body.endpoint_id}/test`, { key: partner.api_key });
  await waitFor("the receiver logs the event", async () => output.includes("webhook.test"));
  const [delivery] = await deliveries(partner.api_key, created.body.endpoint_id);
  assert.deepEqual([delivery!.status, delivery!.last_response_status], ["succeeded", 204]);
});
