// The SDK's Standard Webhooks helper (WebCrypto) against the reference implementation, the
// `standardwebhooks` npm package, both ways: what one signs the other verifies, and tampering,
// stale timestamps and foreign secrets are refused.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { Webhook } from "standardwebhooks";
import { signWebhook, verifyWebhook, WebhookVerificationError } from "../packages/sdk/src/index.ts";

const secret = `whsec_${randomBytes(32).toString("base64")}`;
const otherSecret = `whsec_${randomBytes(32).toString("base64")}`;
const event = {
  id: "evt_01JDZ6Q0S6Y2N8V1",
  type: "order.completed",
  created_at: "2026-11-23T10:00:00Z",
  data: { orderID: "ord_1", status: "completed", note: "caf\u00e9 \u{1f600}" },
};
const payload = JSON.stringify(event);

test("a delivery signed by the standardwebhooks package verifies with the SDK", async () => {
  const now = new Date();
  const signature = new Webhook(secret).sign(event.id, now, payload);
  const headers = {
    "webhook-id": event.id,
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
    "webhook-signature": signature,
  };
  assert.deepEqual(await verifyWebhook({ payload, headers, secret }), event);
  // A fetch Headers object and the raw bytes work the same.
  const bytes = new TextEncoder().encode(payload);
  assert.deepEqual(await verifyWebhook({ payload: bytes, headers: new Headers(headers), secret }), event);
});

test("a delivery signed by the SDK verifies with the standardwebhooks package", async () => {
  const headers = await signWebhook({ id: event.id, payload, secret });
  assert.deepEqual(new Webhook(secret).verify(payload, headers), event);
});

test("during a rotation either of two space-separated signatures is accepted", async () => {
  const now = new Date();
  const old = new Webhook(otherSecret).sign(event.id, now, payload);
  const current = new Webhook(secret).sign(event.id, now, payload);
  const headers = {
    "webhook-id": event.id,
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
    "webhook-signature": `${old} ${current}`,
  };
  assert.deepEqual(await verifyWebhook({ payload, headers, secret }), event);
  assert.deepEqual(await verifyWebhook({ payload, headers, secret: otherSecret }), event);
});

test("a changed body, another secret, a stale timestamp or missing headers are refused", async () => {
  const headers = await signWebhook({ id: event.id, payload, secret });
  const refused = (input: Parameters<typeof verifyWebhook>[0]) =>
    assert.rejects(verifyWebhook(input), WebhookVerificationError);
  await refused({ payload: payload.replace("completed", "failed"), headers, secret });
  await refused({ payload, headers, secret: otherSecret });
  await refused({ payload, headers: { ...headers, "webhook-id": "evt_other" }, secret });
  const stale = await signWebhook({
    id: event.id,
    payload,
    secret,
    timestampSeconds: Math.floor(Date.now() / 1000) - 301,
  });
  await refused({ payload, headers: stale, secret });
  assert.throws(() => new Webhook(secret).verify(payload, stale), "the reference refuses it too");
  await refused({ payload, headers: { "webhook-id": event.id }, secret });
  // The tolerance is both ways: a timestamp from the future is refused as well.
  const future = await signWebhook({
    id: event.id,
    payload,
    secret,
    timestampSeconds: Math.floor(Date.now() / 1000) + 301,
  });
  await refused({ payload, headers: future, secret });
  // Within tolerance of a given `now`, the same stale delivery is fine.
  const nowSeconds = Number(stale["webhook-timestamp"]) + 10;
  assert.deepEqual(await verifyWebhook({ payload, headers: stale, secret, nowSeconds }), event);
});

test("a tolerance that is not a number of seconds is refused, so it cannot wave an old delivery through", async () => {
  const headers = await signWebhook({ id: event.id, payload, secret, timestampSeconds: 1_000_000 });
  await assert.rejects(verifyWebhook({ payload, headers, secret, toleranceSeconds: Number.NaN }), RangeError);
});
