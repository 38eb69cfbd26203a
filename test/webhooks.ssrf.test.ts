// The SSRF rules of the contract ("Webhooks", Targets): no loopback, private, link-local or other
// non-public address is ever connected to unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, checked on
// the address the socket actually connects to (after DNS), at creation (422 invalid_webhook_url)
// and again at every attempt (a failed attempt with last_error). No redirect is followed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { claimDueDeliveries, deliverOnce } from "../src/webhooks/deliver-webhooks.ts";
import { MAX_RESPONSE_BYTES, sendWebhook } from "../src/webhooks/send-webhook.ts";
import { isPublicAddress } from "../src/webhooks/target-address.ts";
import { createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { request } from "./support/http.ts";
import { startWebhookReceiver } from "./support/webhook-receiver.ts";

const receiver = await startWebhookReceiver();
const port = new URL(receiver.url).port;

test("non-public addresses are told from public ones, IPv4-mapped and NAT64 forms included", () => {
  const refused = [
    "127.0.0.1",
    "127.255.0.9",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "198.18.0.1",
    "::",
    "::1",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "fd12:3456::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:8.8.8.8",
    "64:ff9b::7f00:1",
    "2002:7f00:1::1",
    "3fff::1", // documentation (RFC 9637), inside 2000::/3
    "5f00::1", // SRv6 segment ids (RFC 9602): routed inside operators' networks only
    "4000::1", // outside 2000::/3, the only block IANA hands out as global unicast
    "not an address",
  ];
  for (const address of refused) assert.equal(isPublicAddress(address), false, address);
  for (const address of ["8.8.8.8", "1.1.1.1", "203.0.114.1", "2606:4700:4700::1111", "2a00:1450:4001::1"]) {
    assert.equal(isPublicAddress(address), true, address);
  }
});

test("at send time, without the flag: http, loopback literals and a name resolving to loopback are refused before connecting", async () => {
  const attempt = (url: string) =>
    sendWebhook({ url, headers: {}, body: "{}", timeout_ms: 2_000, allow_private: false });
  const before = receiver.received().length;
  const plain = await attempt(`http://127.0.0.1:${port}/hooks/x`);
  assert.equal(plain.kind, "failed");
  assert.match((plain as { error: string }).error, /only https/);
  for (const url of [
    `https://127.0.0.1:${port}/hooks/x`,
    `https://[::1]:${port}/hooks/x`,
    `https://[::ffff:127.0.0.1]:${port}/hooks/x`,
  ]) {
    const answer = await attempt(url);
    assert.equal(answer.kind, "failed", url);
    assert.match((answer as { error: string }).error, /not a public address/, url);
  }
  // localhost is a name: the lookup resolves it, sees loopback and refuses the connection.
  const named = await attempt(`https://localhost:${port}/hooks/x`);
  assert.equal(named.kind, "failed");
  assert.match(
    (named as { error: string }).error,
    /localhost resolves to (127\.0\.0\.1|::1), not a public address/,
  );
  assert.equal(receiver.received().length, before, "the receiver was never reached");
  // With the flag, the same loopback receiver is called.
  const allowed = await sendWebhook({
    url: receiver.path("allowed"),
    headers: {},
    body: '{"id":"evt_x"}',
    timeout_ms: 2_000,
    allow_private: true,
  });
  assert.deepEqual(allowed, { kind: "succeeded", status: 204 });
});

test("a redirect is a failed attempt, never followed; a large answer is cut at the byte cap", async () => {
  const redirected = await sendWebhook({
    url: receiver.path("redirect", () => 302),
    headers: {},
    body: '{"id":"evt_r"}',
    timeout_ms: 2_000,
    allow_private: true,
  });
  assert.deepEqual(redirected, {
    kind: "failed",
    status: 302,
    error: "HTTP 302: redirects are not followed",
  });
  assert.equal(receiver.received("redirect").length, 1);
  // A receiver streaming an endless body: the attempt ends once the cap is read, 2xx kept.
  const http = await import("node:http");
  const endless = http.createServer((_request, response) => {
    response.writeHead(200);
    const chunk = Buffer.alloc(16 * 1024, 97);
    const pump = () => {
      while (response.write(chunk)) {
        /* keep writing until the socket pushes back */
      }
    };
    response.on("drain", pump);
    pump();
  });
  await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
  const address = endless.address() as { port: number };
  const started = Date.now();
  const big = await sendWebhook({
    url: `http://127.0.0.1:${address.port}/`,
    headers: {},
    body: "{}",
    timeout_ms: 5_000,
    allow_private: true,
  });
  assert.deepEqual(big, { kind: "succeeded", status: 200 });
  assert.ok(Date.now() - started < 5_000, "ended by the cap, not the timeout");
  assert.ok(MAX_RESPONSE_BYTES <= 1024 * 1024);
  endless.closeAllConnections();
  endless.close();
});

test("creation refuses non-public and non-https targets with 422 invalid_webhook_url", async () => {
  const app = await createTestApp();
  const partner = await app.createPartner();
  for (const url of [
    `http://127.0.0.1:${port}/hooks/x`,
    `https://127.0.0.1:${port}/hooks/x`,
    `https://localhost:${port}/hooks/x`,
    "https://[::1]/hook",
    "https://[::ffff:10.0.0.1]/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://10.0.0.5/hook",
    "https://192.168.0.10/hook",
    "https://100.64.1.1/hook",
    "https://user:secret@203.0.114.1/hook",
    "ftp://203.0.114.1/hook",
    "not a url",
    "https://203.0.114.1/my hook",
    "https://203.0.114.1/hook#section",
    "https://203.0.114.1/hook#",
  ]) {
    const answer = await request(app.app, "POST", "/v1/webhook-endpoints", {
      key: partner.api_key,
      body: { url },
    });
    assert.deepEqual([answer.status, answer.body.code], [422, "invalid_webhook_url"], url);
  }
  const count = await sql<{ n: number }>`select count(*)::int as n from webhook_endpoints`.execute(app.db);
  assert.equal(count.rows[0]!.n, 0);
  // The same public address with the space percent-encoded and no fragment is taken.
  const taken = await request(app.app, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: "https://203.0.114.1/my%20hook" },
  });
  assert.equal(taken.status, 201, JSON.stringify(taken.body));
});

test("an endpoint accepted where private networks were allowed is refused at send time where they are not", async () => {
  const database = await createTestDatabase({ catalog: true });
  const open = await createTestApp({ webhook_allow_private_networks: true }, { database });
  const closed = await createTestApp({}, { database });
  const partner = await open.createPartner();
  const created = await request(open.app, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: `https://localhost:${port}/hooks/never` },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const tested = await request(open.app, "POST", `/v1/webhook-endpoints/${created.body.endpoint_id}/test`, {
    key: partner.api_key,
  });
  assert.equal(tested.status, 202);
  const [claim] = await claimDueDeliveries(closed.ctx, 1);
  assert.ok(claim, "the test event's delivery is due");
  const result = await deliverOnce(closed.ctx, claim, "{}");
  assert.equal(result.kind, "failed");
  const log = await request(
    closed.app,
    "GET",
    `/v1/webhook-endpoints/${created.body.endpoint_id}/deliveries`,
    {
      key: partner.api_key,
    },
  );
  const [delivery] = log.body.data;
  assert.equal(delivery.status, "pending", "retried later: DNS may change");
  assert.equal(delivery.attempts, 1);
  assert.equal(delivery.last_response_status, null);
  assert.match(delivery.last_error, /localhost resolves to .*not a public address/);
  assert.equal(receiver.received("never").length, 0);
});
