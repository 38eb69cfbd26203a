// The SDK's profile resource (packages/sdk): branding and notification settings against the real
// service over HTTP and PostgreSQL, a refusal surfacing as a typed ApiError naming the field.
import assert from "node:assert/strict";
import { test } from "node:test";
import { EsimClient, isApiError } from "../packages/sdk/src/index.ts";
import { createTestApp } from "./support/app.ts";
import { makePng } from "./support/png.ts";

const app = await createTestApp();
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });

async function client() {
  const partner = await app.createPartner();
  return new EsimClient({ apiKey: partner.api_key, baseUrl: base });
}

test("profile.setBranding and getBranding: the brand round-trips, the accent is served readable", async () => {
  const sdk = await client();
  const logo = makePng(16, 16).toString("base64");
  const set = await sdk.profile.setBranding({
    display_name: "Wanderlust",
    accent_color: "#FFFF00",
    logo_png_base64: logo,
  });
  assert.equal(set.display_name, "Wanderlust");
  assert.equal(set.accent_color, "#ffff00");
  assert.notEqual(set.accent_color_applied, "#ffff00");
  assert.deepEqual(await sdk.profile.getBranding(), set);
});

test("profile.setBranding: an http support URL is an ApiError invalid_request naming the field", async () => {
  const sdk = await client();
  const error = await sdk.profile
    .setBranding({ support_url: "http://wanderlust.example" })
    .catch((e: unknown) => e);
  assert.ok(isApiError(error), String(error));
  assert.equal(error.status, 400);
  assert.equal(error.code, "invalid_request");
  assert.equal(error.errors?.[0]?.field, "support_url");
  assert.equal((await sdk.profile.getBranding()).support_url, null);
});

test("profile.setNotificationSettings and getNotificationSettings: fields left out keep their value", async () => {
  const sdk = await client();
  assert.deepEqual(await sdk.profile.getNotificationSettings(), {
    confirmation_email: true,
    traveller_usage_emails: false,
    top_up_url: null,
  });
  await sdk.profile.setNotificationSettings({
    traveller_usage_emails: true,
    top_up_url: "https://t.example/{iccid}",
  });
  const after = await sdk.profile.setNotificationSettings({ confirmation_email: false });
  assert.deepEqual(after, {
    confirmation_email: false,
    traveller_usage_emails: true,
    top_up_url: "https://t.example/{iccid}",
  });
  assert.deepEqual(await sdk.profile.getNotificationSettings(), after);
});
