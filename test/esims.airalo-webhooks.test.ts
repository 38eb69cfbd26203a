// Airalo's webhooks (src/esims/airalo-webhook.route.ts) end to end over real HTTP: the service
// listening on a port, the Airalo fake (src/simulators/airalo, sending webhooks as Airalo's docs
// describe them) opting our URL in with its HEAD probe and POSTing signed low-data notifications. An
// eSIM bought from Airalo through the partner API (the app's carrier is the Airalo adapter) has its
// usage pulled and applied on each notification, so partners get usage events; an unsigned or
// forged notification is 401 and changes nothing.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { AiraloCarrier } from "../src/carrier/airalo/airalo-carrier.ts";
import { listAiraloPackages } from "../src/carrier/airalo/list-packages.ts";
import { syncSupplierCatalog } from "../src/catalog/sync-supplier-catalog.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { startAiralo } from "../src/simulators/airalo/server.ts";
import { createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { purchase } from "./support/fixtures.ts";

const CLIENT_ID = "webhook-test-client";
const CLIENT_SECRET = "webhook-test-secret-0123456789";
const PACKAGE = "uki-mobile-7days-1gb";

const database = await createTestDatabase({ catalog: true });
const fake = await startAiralo({
  pool: database.pool,
  port: 0,
  host: "127.0.0.1",
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
  log: () => undefined,
});
after(() => fake.close());
const base_url = `${fake.url}/v2`;
const carrier = new AiraloCarrier({
  pool: database.pool,
  base_url,
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
  timeout_ms: 5_000,
});
const service = await createTestApp(
  { airalo_api_url: base_url, airalo_client_id: CLIENT_ID, airalo_client_secret: CLIENT_SECRET },
  { carrier, database },
);
await service.app.listen({ port: 0, host: "127.0.0.1" });
const api = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
const WEBHOOK_URL = `${api}/carrier/airalo/webhooks`;

async function control(route: string, body?: unknown): Promise<any> {
  const response = await fetch(`${fake.url}${route}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${CLIENT_SECRET}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(response.ok, `${route}: ${response.status}`);
  return response.json();
}

async function airalo(path: string, body: unknown): Promise<Response> {
  const token = await fetch(`${base_url}/token`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      grant_type: "client_credentials",
    }),
  });
  const access = ((await token.json()) as any).data.access_token;
  return fetch(`${base_url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${access}`,
      "content-type": "application/json",
      accept: "application/json",
    },
    body: JSON.stringify(body),
  });
}

async function usageEvents(partner_id: string): Promise<any[]> {
  const result = await database.pool.query(
    "select type, data from events where partner_id = $1 and type like 'esim.%' order by seq",
    [partner_id],
  );
  return result.rows;
}

async function usedMb(iccid: string): Promise<number> {
  const result = await database.pool.query("select data_used_mb from esim_bundles where iccid = $1", [iccid]);
  return Number(result.rows[0]?.data_used_mb ?? 0);
}

/** Waits (bounded by attempts, not by a clock in the assertion) until `check` holds. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (await check()) return;
    await sleep(50);
  }
  assert.fail(`never: ${what}`);
}

async function boughtFromAiralo(): Promise<{ partner_id: string; api_key: string; iccid: string }> {
  await control("/control", { disarm: true, reset_rate_limits: true, usage_cache_ms: 0 });
  await control("/control/account", { credit_usd: 100_000 });
  await syncSupplierCatalog(database.pool, {
    supplier: "airalo",
    markup_basis_points: 1_000,
    destination_codes: ["GB"],
    currency: "USD",
    actor: CLI_ACTOR,
    list: () =>
      listAiraloPackages({
        pool: database.pool,
        base_url,
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        timeout_ms: 5_000,
      }),
  });
  const partner = await service.createPartner("Webhook Travel", 100_000);
  const order = await purchase(api, partner.api_key, `airalo-${PACKAGE}`);
  const iccid = order.esim_iccid;
  assert.ok(typeof iccid === "string", JSON.stringify(order));
  return { ...partner, iccid };
}

test("Airalo opts our URL in (its HEAD probe answered 200); a signed low-data notification pulls the eSIM's usage and partners get its usage event", async () => {
  const { partner_id, iccid } = await boughtFromAiralo();
  const head = await fetch(WEBHOOK_URL, { method: "HEAD" });
  assert.equal(head.status, 200);
  const optIn = await airalo("/notifications/opt-in", { type: "webhook_low_data", webhook_url: WEBHOOK_URL });
  assert.equal(optIn.status, 200, await optIn.clone().text());
  const before = (await usageEvents(partner_id)).length;
  // The traveller uses 800 of 1024 MB: Airalo's 75% level is crossed, and it notifies us.
  await control(`/control/sims/${iccid}/usage`, { used_mb: 800 });
  await eventually(async () => (await usedMb(iccid)) === 800, "the eSIM's usage applied");
  const deliveries = (await control("/control/webhooks")).deliveries.filter((d: any) =>
    d.body.includes(iccid),
  );
  assert.equal(deliveries.at(-1).status, 200);
  const events = await usageEvents(partner_id);
  assert.ok(events.length > before, JSON.stringify(events));
  // The same notification again (Airalo may re-send): nothing more changes.
  const again = await fetch(WEBHOOK_URL, {
    method: "POST",
    headers: { "content-type": "application/json", "airalo-signature": deliveries.at(-1).signature },
    body: deliveries.at(-1).body,
  });
  assert.equal(again.status, 200);
  assert.equal(((await again.json()) as any).kind, "low_data");
  assert.equal((await usageEvents(partner_id)).length, events.length, "no second event");
  assert.equal(await usedMb(iccid), 800);
});

test("an unsigned or forged notification is 401 and changes nothing", async () => {
  const { partner_id, iccid } = await boughtFromAiralo();
  await control("/control", { arm: [] });
  // The use happens at Airalo without a notification reaching us (no opt-in for this one's URL).
  await airalo("/notifications/opt-out", { type: "webhook_low_data" });
  await control(`/control/sims/${iccid}/usage`, { used_mb: 900 });
  const body = JSON.stringify({ level: "90%", package_name: PACKAGE, remaining_percentage: 10, iccid });
  const forged = createHmac("sha512", "not-the-secret").update(body).digest("hex");
  const events = (await usageEvents(partner_id)).length;
  for (const headers of [{}, { "airalo-signature": forged }, { "airalo-signature": "abc" }]) {
    const answer = await fetch(WEBHOOK_URL, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
    assert.equal(answer.status, 401);
    assert.equal(((await answer.json()) as any).code, "unauthorized");
  }
  assert.equal(await usedMb(iccid), 0, "nothing pulled");
  assert.equal((await usageEvents(partner_id)).length, events);
  // Signed as Airalo signs (HMAC-SHA512 of the body under the client secret): applied.
  const signed = createHmac("sha512", CLIENT_SECRET).update(body).digest("hex");
  const genuine = await fetch(WEBHOOK_URL, {
    method: "POST",
    headers: { "content-type": "application/json", "airalo-signature": signed },
    body,
  });
  assert.equal(genuine.status, 200);
  assert.equal(await usedMb(iccid), 900);
});

test("a signed body repeated for its eSIM within minutes is acknowledged and not pulled again (a replay spends no Airalo usage calls); another body is", async () => {
  const { iccid } = await boughtFromAiralo();
  await control("/control", { arm: [] });
  await control(`/control/sims/${iccid}/usage`, { used_mb: 300 });
  const post = async (body: string) => {
    const signature = createHmac("sha512", CLIENT_SECRET).update(body).digest("hex");
    const answer = await fetch(WEBHOOK_URL, {
      method: "POST",
      headers: { "content-type": "application/json", "airalo-signature": signature },
      body,
    });
    assert.equal(answer.status, 200);
    return ((await answer.json()) as any).esims[iccid];
  };
  const body = JSON.stringify({ level: "75%", package_name: PACKAGE, remaining_percentage: 25, iccid });
  assert.equal(await post(body), "changed");
  assert.equal(await usedMb(iccid), 300);
  await control(`/control/sims/${iccid}/usage`, { used_mb: 600 });
  assert.equal(await post(body), "repeated");
  assert.equal(await usedMb(iccid), 300, "the replay pulled nothing");
  const next = JSON.stringify({ level: "90%", package_name: PACKAGE, remaining_percentage: 10, iccid });
  assert.equal(await post(next), "changed");
  assert.equal(await usedMb(iccid), 600);
});
