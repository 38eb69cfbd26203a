// The sandbox without WEBHOOK_SECRET_KEY: the service makes a key once, keeps it in DATA_DIR (owner
// read/write only) and uses it again after a restart, so secrets sealed before still sign.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { startWebhookReceiver } from "./support/webhook-receiver.ts";
import { call, createWorld, newPartner, waitFor } from "./support/world.ts";

const data_dir = await mkdtemp(path.join(tmpdir(), "webhook-key-"));
after(() => rm(data_dir, { recursive: true, force: true }));
const world = await createWorld({
  services: 0,
  env: { DATA_DIR: data_dir, WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_POLL_MS: "100" },
});
const receiver = await startWebhookReceiver();

test("the sandbox keeps its generated webhook key in DATA_DIR and signs with it after a restart", async () => {
  const first = await world.startService();
  const file = path.join(data_dir, "webhook-secret-key");
  const key = (await readFile(file, "utf8")).trim();
  assert.equal(Buffer.from(key, "base64").length, 32);
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  assert.ok(!first.logs().includes(key), "the key is never logged");
  const partner = await newPartner(first.url, 0);
  const created = await call(first.url, "POST", "/v1/webhook-endpoints", {
    key: partner.api_key,
    body: { url: receiver.path("kept") },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  receiver.setSecrets("kept", [created.body.secret]);
  await first.stop();
  const second = await world.startService();
  assert.equal((await readFile(file, "utf8")).trim(), key, "the same key after the restart");
  await call(second.url, "POST", `/v1/webhook-endpoints/${created.body.endpoint_id}/test`, {
    key: partner.api_key,
  });
  await waitFor("the delivery", async () => receiver.succeeded("kept").length === 1);
  assert.deepEqual(receiver.received("kept")[0]!.verified_with, [0]);
});
