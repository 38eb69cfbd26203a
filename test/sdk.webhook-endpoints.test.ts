// The SDK's webhook endpoint and event resources (packages/sdk) against the real service and a real
// HTTP receiver, every call through the real fault proxy: an endpoint created by the SDK receives a
// test event that verifies with the SDK's own helper and with the `standardwebhooks` package;
// deliveries and events iterate over more than two pages with their filters; a rotation verifies
// with both secrets; which calls the SDK repeats after a lost answer, and which it never does.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Webhook } from "standardwebhooks";
import {
  type ApiEvent,
  ConnectionError,
  EsimClient,
  isApiError,
  verifyWebhook,
  type WebhookDelivery,
} from "../packages/sdk/src/index.ts";
import { startFaultProxy } from "./support/fault-proxy.ts";
import { type Received, startWebhookReceiver } from "./support/webhook-receiver.ts";
import { createWorld, newPartner, waitFor } from "./support/world.ts";

const world = await createWorld({
  env: {
    // The receiver listens on loopback, which the service refuses unless told otherwise.
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    WEBHOOK_FIRST_RETRY_DELAY_MS: "200",
    WEBHOOK_POLL_MS: "100",
    USAGE_SYNC_MAX_PER_SECOND: "0",
  },
});
const api = world.services[0]!.url;
const proxy = await startFaultProxy(api);
const receiver = await startWebhookReceiver();

async function partnerClient() {
  const partner = await newPartner(api, 10_00);
  return new EsimClient({ apiKey: partner.api_key, baseUrl: proxy.url });
}

/** A client with one endpoint on the receiver's path `name`, its secret registered there. */
async function subscribed(name: string) {
  const client = await partnerClient();
  const endpoint = await client.webhookEndpoints.create({
    url: receiver.path(name),
    description: `receiver ${name}`,
    event_types: ["webhook.test"],
  });
  receiver.setSecrets(name, [endpoint.secret]);
  return { client, endpoint };
}

const headersOf = (entry: Received) => ({
  "webhook-id": entry.id,
  "webhook-timestamp": String(entry.timestamp),
  "webhook-signature": entry.signature,
});

test("an endpoint created by the SDK gets a test event that verifies with verifyWebhook and with standardwebhooks", async () => {
  const { client, endpoint } = await subscribed("created");
  assert.match(endpoint.secret, /^whsec_/);
  assert.equal(endpoint.status, "enabled");
  assert.deepEqual(endpoint.event_types, ["webhook.test"]);

  const listed = await client.webhookEndpoints.list().toArray();
  assert.deepEqual(
    listed.map((e) => e.endpoint_id),
    [endpoint.endpoint_id],
  );
  const fetched = await client.webhookEndpoints.get(endpoint.endpoint_id);
  assert.equal("secret" in fetched, false, "the secret is shown at creation only");
  assert.equal("secret" in listed[0]!, false);

  const { event_id } = await client.webhookEndpoints.test(endpoint.endpoint_id);
  const entry = await waitFor("the test delivery", async () => receiver.succeeded("created")[0]);
  assert.equal(entry.id, event_id);
  const verified = await verifyWebhook({
    payload: entry.body,
    headers: headersOf(entry),
    secret: endpoint.secret,
  });
  assert.equal(verified.id, event_id);
  assert.equal(verified.type, "webhook.test");
  assert.deepEqual(new Webhook(endpoint.secret).verify(entry.body, headersOf(entry)), verified);
  assert.deepEqual(entry.verified_with, [0], "the receiver's standardwebhooks check passed too");

  const other = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
  await assert.rejects(verifyWebhook({ payload: entry.body, headers: headersOf(entry), secret: other }));

  const event = await client.events.get(event_id);
  assert.equal(event.id, event_id);
  assert.equal(event.type, "webhook.test");
  assert.deepEqual(
    JSON.parse(entry.body),
    event,
    "the delivery's body is the event as GET /v1/events has it",
  );
});

test("update changes only the fields given; disabling holds deliveries as pending and enabling sends them", async () => {
  const { client, endpoint } = await subscribed("updated");
  const described = await client.webhookEndpoints.update(endpoint.endpoint_id, { description: "renamed" });
  assert.equal(described.description, "renamed");
  assert.deepEqual(described.event_types, ["webhook.test"], "left out, left as it was");
  assert.deepEqual(
    JSON.parse(proxy.seen("PATCH", `/v1/webhook-endpoints/${endpoint.endpoint_id}`).at(-1)!.body),
    {
      description: "renamed",
    },
  );
  const disabled = await client.webhookEndpoints.update(endpoint.endpoint_id, { status: "disabled" });
  assert.equal(disabled.status, "disabled");
  await client.webhookEndpoints.test(endpoint.endpoint_id);
  const pending = await client.webhookEndpoints
    .deliveries(endpoint.endpoint_id, { status: "pending" })
    .toArray();
  assert.equal(pending.length, 1);
  assert.equal(receiver.received("updated").length, 0, "nothing sent to a disabled endpoint");
  await client.webhookEndpoints.update(endpoint.endpoint_id, { status: "enabled" });
  await waitFor("the held delivery", async () => receiver.succeeded("updated").length === 1);
  assert.equal(receiver.succeeded("updated")[0]!.id, pending[0]!.event_id);
});

test("deliveries and events iterate over more than two pages, filtered by status and by type", async () => {
  const { client, endpoint } = await subscribed("paged");
  const sent: string[] = [];
  for (let i = 0; i < 3; i++) sent.push((await client.webhookEndpoints.test(endpoint.endpoint_id)).event_id);
  await waitFor("three deliveries", async () => receiver.succeeded("paged").length === 3);
  await client.webhookEndpoints.update(endpoint.endpoint_id, { status: "disabled" });
  for (let i = 0; i < 2; i++) sent.push((await client.webhookEndpoints.test(endpoint.endpoint_id)).event_id);

  const deliveriesPath = `/v1/webhook-endpoints/${endpoint.endpoint_id}/deliveries`;
  const before = proxy.seen("GET", deliveriesPath).length;
  const all: WebhookDelivery[] = [];
  for await (const delivery of client.webhookEndpoints.deliveries(endpoint.endpoint_id, { limit: 2 })) {
    all.push(delivery);
  }
  assert.equal(proxy.seen("GET", deliveriesPath).length - before, 3, "three pages of two");
  assert.deepEqual(
    all.map((d) => d.event_id),
    [...sent].reverse(),
    "newest first",
  );
  const by = async (status: "pending" | "succeeded" | "failed") =>
    (await client.webhookEndpoints.deliveries(endpoint.endpoint_id, { status, limit: 1 }).toArray()).map(
      (d) => d.event_id,
    );
  assert.deepEqual(await by("succeeded"), sent.slice(0, 3).reverse());
  assert.deepEqual(await by("pending"), sent.slice(3).reverse());
  assert.deepEqual(await by("failed"), []);
  const page = await client.webhookEndpoints.deliveriesPage(endpoint.endpoint_id, { limit: 4 });
  assert.equal(page.data.length, 4);
  assert.equal(page.has_more, true);

  const eventsBefore = proxy.seen("GET", "/v1/events").length;
  const events: ApiEvent[] = [];
  for await (const event of client.events.list({ type: "webhook.test", limit: 2 })) events.push(event);
  assert.equal(proxy.seen("GET", "/v1/events").length - eventsBefore, 3, "three pages of two");
  assert.deepEqual(
    events.map((e) => e.id),
    [...sent].reverse(),
  );
  assert.ok(events.every((e) => e.type === "webhook.test"));
  const everything = await client.events.list({ limit: 100 }).toArray();
  assert.ok(everything.length >= sent.length, "the unfiltered list has them and any other event");
  assert.deepEqual((await client.events.list({ type: "order.completed" }).toArray()).length, 0);
  assert.equal((await client.events.list().toArray({ limit: 2 })).length, 2, "toArray stops at its bound");
});

test("rotateSecret: deliveries carry both signatures and verify with the old and the new secret", async () => {
  const { client, endpoint } = await subscribed("rotated");
  const { secret } = await client.webhookEndpoints.rotateSecret(endpoint.endpoint_id);
  assert.notEqual(secret, endpoint.secret);
  receiver.setSecrets("rotated", [endpoint.secret, secret]);
  await client.webhookEndpoints.test(endpoint.endpoint_id);
  const entry = await waitFor("the delivery", async () => receiver.succeeded("rotated")[0]);
  assert.equal(entry.signature.split(" ").length, 2);
  assert.deepEqual(entry.verified_with, [0, 1], "standardwebhooks verifies with either");
  for (const key of [endpoint.secret, secret]) {
    const event = await verifyWebhook({ payload: entry.body, headers: headersOf(entry), secret: key });
    assert.equal(event.id, entry.id);
  }
});

test("retryDelivery sends a delivered event again under the same webhook-id", async () => {
  const { client, endpoint } = await subscribed("again");
  const { event_id } = await client.webhookEndpoints.test(endpoint.endpoint_id);
  await waitFor("the delivery", async () => receiver.succeeded("again").length === 1);
  const [delivery] = await client.webhookEndpoints.deliveries(endpoint.endpoint_id).toArray();
  assert.equal(delivery!.status, "succeeded");
  const retried = await client.webhookEndpoints.retryDelivery(endpoint.endpoint_id, delivery!.delivery_id);
  assert.equal(retried.delivery_id, delivery!.delivery_id);
  assert.equal(retried.status, "pending");
  await waitFor("the second send", async () => receiver.succeeded("again").length === 2);
  assert.deepEqual(
    receiver.succeeded("again").map((r) => r.id),
    [event_id, event_id],
  );
});

test("404s are typed by code: unknown endpoint, delivery and event, and another partner's endpoint", async () => {
  const { client, endpoint } = await subscribed("mine");
  const stranger = await partnerClient();
  const notFound = (code: string) => (error: unknown) => {
    assert.ok(isApiError(error), String(error));
    assert.equal(error.status, 404);
    assert.equal(error.code, code);
    return true;
  };
  const unknown = "whe_unknown";
  await assert.rejects(
    stranger.webhookEndpoints.get(endpoint.endpoint_id),
    notFound("webhook_endpoint_not_found"),
  );
  await assert.rejects(client.webhookEndpoints.get(unknown), notFound("webhook_endpoint_not_found"));
  await assert.rejects(
    client.webhookEndpoints.update(unknown, { description: "x" }),
    notFound("webhook_endpoint_not_found"),
  );
  await assert.rejects(client.webhookEndpoints.delete(unknown), notFound("webhook_endpoint_not_found"));
  await assert.rejects(client.webhookEndpoints.rotateSecret(unknown), notFound("webhook_endpoint_not_found"));
  await assert.rejects(client.webhookEndpoints.test(unknown), notFound("webhook_endpoint_not_found"));
  await assert.rejects(
    client.webhookEndpoints.deliveries(unknown).toArray(),
    notFound("webhook_endpoint_not_found"),
  );
  await assert.rejects(
    client.webhookEndpoints.retryDelivery(endpoint.endpoint_id, "dlv_unknown"),
    notFound("delivery_not_found"),
  );
  await assert.rejects(client.events.get("evt_unknown"), notFound("event_not_found"));
  await assert.rejects(
    client.webhookEndpoints.create({ url: "https://user:pass@127.0.0.1/hooks/x" }),
    (error: unknown) => isApiError(error, "invalid_webhook_url"),
  );
});

test("after a lost answer create, rotateSecret, test and retryDelivery are not repeated; update and delete are", async () => {
  const { client, endpoint } = await subscribed("lost");
  const base = `/v1/webhook-endpoints/${endpoint.endpoint_id}`;
  const attempts = async (method: string, path: string, run: () => Promise<unknown>) => {
    const before = proxy.seen(method, path).length;
    await run();
    return proxy.seen(method, path).length - before;
  };
  const lost = (method: string, path: string) => proxy.inject(method, path, { kind: "drop_response" });

  lost("POST", `${base}/rotate-secret`);
  const rotations = await attempts("POST", `${base}/rotate-secret`, () =>
    assert.rejects(client.webhookEndpoints.rotateSecret(endpoint.endpoint_id), ConnectionError),
  );
  assert.equal(rotations, 1, "a second rotation would retire the secret the receiver holds");
  lost("POST", `${base}/test`);
  const tests = await attempts("POST", `${base}/test`, () =>
    assert.rejects(client.webhookEndpoints.test(endpoint.endpoint_id), ConnectionError),
  );
  assert.equal(tests, 1);
  await waitFor("the lost call's test event", async () => receiver.received("lost").length === 1);
  const [delivery] = await client.webhookEndpoints.deliveries(endpoint.endpoint_id).toArray();
  lost("POST", `${base}/deliveries/${delivery!.delivery_id}/retry`);
  const retries = await attempts("POST", `${base}/deliveries/${delivery!.delivery_id}/retry`, () =>
    assert.rejects(
      client.webhookEndpoints.retryDelivery(endpoint.endpoint_id, delivery!.delivery_id),
      ConnectionError,
    ),
  );
  assert.equal(retries, 1);
  lost("POST", "/v1/webhook-endpoints");
  const creations = await attempts("POST", "/v1/webhook-endpoints", () =>
    assert.rejects(client.webhookEndpoints.create({ url: receiver.path("lost-2") }), ConnectionError),
  );
  assert.equal(creations, 1);
  assert.equal(
    (await client.webhookEndpoints.list().toArray()).length,
    2,
    "the lost creation made one endpoint",
  );

  // An answer that says nothing was done is retried even for these: 429 rate_limited, then the rotation.
  proxy.inject("POST", `${base}/rotate-secret`, {
    kind: "respond",
    status: 429,
    headers: { "retry-after": "0" },
    body: { status: 429, code: "rate_limited", detail: "slow down", request_id: "req_1" },
  });
  let rotated = "";
  const limited = await attempts("POST", `${base}/rotate-secret`, async () => {
    rotated = (await client.webhookEndpoints.rotateSecret(endpoint.endpoint_id)).secret;
  });
  assert.equal(limited, 2);
  assert.match(rotated, /^whsec_/);
  proxy.inject("POST", `${base}/test`, {
    kind: "respond",
    status: 503,
    headers: { "retry-after": "0" },
    body: { status: 503, code: "service_unavailable", detail: "busy", request_id: "req_2" },
  });
  const busy = await attempts("POST", `${base}/test`, () =>
    client.webhookEndpoints.test(endpoint.endpoint_id),
  );
  assert.equal(busy, 2, "503 service_unavailable: nothing was done, so it is repeated");
  // A 503 that is not the API's own "nothing was done" (a proxy's page, no code) is not.
  proxy.inject("POST", `${base}/test`, { kind: "respond", status: 503 });
  const unknown503 = await attempts("POST", `${base}/test`, () =>
    assert.rejects(client.webhookEndpoints.test(endpoint.endpoint_id), (error: unknown) => isApiError(error)),
  );
  assert.equal(unknown503, 1);

  lost("PATCH", base);
  const patches = await attempts("PATCH", base, async () => {
    const updated = await client.webhookEndpoints.update(endpoint.endpoint_id, { description: "again" });
    assert.equal(updated.description, "again");
  });
  assert.equal(patches, 2, "the same change twice is the same endpoint");

  lost("DELETE", base);
  const deletes = await attempts("DELETE", base, () => client.webhookEndpoints.delete(endpoint.endpoint_id));
  assert.equal(deletes, 2, "the retry found it gone, which is what the lost attempt did: resolved");
  await assert.rejects(client.webhookEndpoints.get(endpoint.endpoint_id), (error: unknown) =>
    isApiError(error, "webhook_endpoint_not_found"),
  );
  await assert.rejects(client.webhookEndpoints.delete(endpoint.endpoint_id), (error: unknown) =>
    isApiError(error, "webhook_endpoint_not_found"),
  );
});
