// The secret box's core moved to src/lib/secret-box.ts so that people (SSO client secrets) seal
// with it too (issue 31). Webhook secrets sealed before the move must still open: the vector below
// was sealed by the webhook box as it was before (key: 32 bytes of 7). A sealed SSO secret opens
// only for its partner and only under its own purpose.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sealingBox } from "../src/lib/secret-box.ts";
import { ssoSecrets } from "../src/people/configure-sso.ts";
import { secretsOf } from "../src/webhooks/secrets.ts";

const KEY = Buffer.alloc(32, 7).toString("base64");
const SEALED_BEFORE_THE_MOVE =
  "v1:V4C8iWktxFkPcH0AJ8t4tNN4fuxgBVK8VJx+an282lgpRsnnto2swLIdJ7gwv4Yjb3a/4RgTVBH/TR1ZAHBgzHrH";

test("a webhook secret sealed before the box moved to shared/ still opens, and new ones round-trip", () => {
  const box = secretsOf({ webhook_secret_key: KEY });
  assert.equal(box.open("we_legacy", SEALED_BEFORE_THE_MOVE), "whsec_c2VhbGVkLWJlZm9yZS10aGUtbW92ZQ==");
  assert.throws(() => box.open("we_other", SEALED_BEFORE_THE_MOVE), "bound to its endpoint");
  const sealed = box.seal("we_1", "whsec_new");
  assert.match(sealed, /^v1:[A-Za-z0-9+/]+=*$/);
  assert.equal(box.open("we_1", sealed), "whsec_new");
});

test("an SSO client secret opens only for its partner and only under the SSO purpose", () => {
  const sso = ssoSecrets({ webhook_secret_key: KEY });
  const sealed = sso.seal("ptn_a", "client-secret-of-a");
  assert.ok(!sealed.toString("latin1").includes("client-secret-of-a"));
  assert.equal(sso.open("ptn_a", sealed), "client-secret-of-a");
  assert.throws(() => sso.open("ptn_b", sealed), "a row copied to another partner does not open");
  assert.throws(() => sealingBox(KEY, "webhook-secrets-v1").open("ptn_a", sealed), "another purpose's key");
  assert.throws(() => ssoSecrets({ webhook_secret_key: null }), /WEBHOOK_SECRET_KEY is not set/);
});
