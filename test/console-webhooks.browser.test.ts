// The console's webhooks page (issue 17) in headless Chromium against the real service process, a
// real PostgreSQL and a real HTTP receiver that verifies every delivery with the `standardwebhooks`
// package: the partner adds an endpoint (its secret shown once), sends a test event and sees it
// succeed on the page and verified at the receiver, rotates the secret and retries the delivery,
// which the receiver verifies with the new one; a 410 fails a delivery and disables the endpoint,
// the overview counts it, the page enables it again and deletes it; a change without the CSRF token
// does nothing; and the pages pass axe-core at desktop and phone width.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { browserForFile, DESKTOP, PHONE, seriousViolations } from "./support/browser.ts";
import { addPerson, signInPage } from "./support/people.ts";
import { startWebhookReceiver } from "./support/webhook-receiver.ts";
import { call, createWorld, newPartner, waitFor } from "./support/world.ts";

const world = await createWorld({
  env: {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    WEBHOOK_TIMEOUT_MS: "1500",
    WEBHOOK_FIRST_RETRY_DELAY_MS: "200",
    WEBHOOK_POLL_MS: "100",
  },
});
const base = world.services[0]!.url;
const browser = await browserForFile();
const receiver = await startWebhookReceiver();
const partner = await newPartner(base, 10_000, "Hook Travel");

const context = await browser.newContext({ viewport: DESKTOP });
const page = await context.newPage();
const owner = await addPerson(world.database.pool, {
  realm: "partner",
  role: "owner",
  partner_id: partner.partner_id,
});
await signInPage(page, base, owner);

/** The page's axe-core serious violations and phone-width overflow, at both widths, as text. */
async function accessibilityProblems(p: Page, what: string, reload = true): Promise<string[]> {
  const found: string[] = [];
  for (const viewport of [DESKTOP, PHONE]) {
    await p.setViewportSize(viewport);
    if (reload) assert.equal((await p.reload())?.status(), 200, what);
    for (const v of await seriousViolations(p))
      found.push(
        `${what} ${viewport.width}px: ${v.id} ${v.help} (${v.nodes.map((n) => n.target.join(" "))})`,
      );
    const overflow = (await p.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number;
    if (overflow > 0) found.push(`${what} ${viewport.width}px overflows by ${overflow}px`);
  }
  await p.setViewportSize(DESKTOP);
  return found;
}

/** Reloads the endpoint's page (it has no script) until its newest delivery shows `status`. */
async function newestDeliveryShows(status: string): Promise<void> {
  await waitFor(
    `the newest delivery shows ${status}`,
    async () => {
      // The click that sent the event navigates (POST, 303, GET): let that page load before a
      // reload, which would otherwise race it ("Not attached to an active page").
      await page.waitForLoadState("load");
      await page.reload();
      const cell = page
        .getByRole("region", { name: "Deliveries" })
        .locator("tbody tr")
        .first()
        .locator(".status");
      return (await cell.count()) > 0 && (await cell.textContent()) === status;
    },
    15_000,
  );
}

async function addEndpoint(name: string, description: string, types: string[]): Promise<string> {
  await page.goto(`${base}/console/webhooks`);
  await page.getByLabel("URL").fill(receiver.path(name));
  await page.getByLabel("Description (optional)").fill(description);
  for (const type of types) await page.getByLabel(type, { exact: true }).check();
  await page.getByRole("button", { name: "Add endpoint" }).click();
  await page.getByText(/Endpoint added for we_/).waitFor();
  const secret = (await page.locator(".secret").textContent())!.trim();
  assert.match(secret, /^whsec_/);
  receiver.setSecrets(name, [secret]);
  return secret;
}

function endpointIdIn(url: string): string {
  return /\/console\/webhooks\/(we_[^/?]+)/.exec(url)?.[1] ?? "";
}

let endpoint_id = "";

test("the partner adds an endpoint, sends a test event, and sees it succeed on the page and verified at the receiver", async () => {
  await page.getByRole("navigation").getByRole("link", { name: "Webhooks" }).click();
  await page.getByText("No webhook endpoints yet.").waitFor();
  const secret = await addEndpoint("console", "Bookings system", ["webhook.test", "order.completed"]);
  const problems = await accessibilityProblems(page, "the page with the new secret", false);

  const listed = await call(base, "GET", "/v1/webhook-endpoints", { key: partner.api_key });
  assert.equal(listed.body.data.length, 1);
  endpoint_id = listed.body.data[0].endpoint_id;
  assert.deepEqual(listed.body.data[0].event_types.sort(), ["order.completed", "webhook.test"]);
  assert.equal(listed.body.data[0].description, "Bookings system");

  await page.getByRole("button", { name: "Send test event" }).click();
  await page.waitForURL(/\?tested=evt_/);
  const event_id = new URL(page.url()).searchParams.get("tested");
  assert.equal(endpointIdIn(page.url()), endpoint_id);
  assert.ok(!(await page.content()).includes(secret), "the secret is shown once, not after a redirect");
  await newestDeliveryShows("succeeded");
  const row = await page.getByRole("region", { name: "Deliveries" }).locator("tbody tr").first().innerText();
  assert.match(row, new RegExp(`webhook\\.test[\\s\\S]*${event_id}[\\s\\S]*HTTP 204`));

  const got = receiver.succeeded("console");
  assert.equal(got.length, 1);
  assert.equal(got[0]!.id, event_id);
  assert.equal(got[0]!.event.type, "webhook.test");
  assert.deepEqual(got[0]!.verified_with, [0], "verified with the secret the page showed");
  problems.push(...(await accessibilityProblems(page, `/console/webhooks/${endpoint_id}`)));
  await page.goto(`${base}/console/webhooks`);
  problems.push(...(await accessibilityProblems(page, "/console/webhooks")));
  assert.deepEqual(problems, []);
});

test("a rotated secret (shown once) signs the retried delivery, which the receiver verifies with it", async () => {
  await page.goto(`${base}/console/webhooks/${endpoint_id}`);
  await page.getByRole("button", { name: "Rotate secret" }).click();
  await page.getByText(/New signing secret for/).waitFor();
  const rotated = (await page.locator(".secret").textContent())!.trim();
  receiver.setSecrets("console", [rotated]);
  const delivery = await page
    .getByRole("region", { name: "Deliveries" })
    .locator("tbody tr td")
    .first()
    .textContent();
  await page.getByRole("button", { name: `Retry delivery ${delivery}` }).click();
  await page.waitForURL(new RegExp(`\\?retried=${delivery}$`));
  await waitFor(
    "the retried delivery arrives",
    async () => receiver.succeeded("console").length === 2,
    15_000,
  );
  const again = receiver.succeeded("console")[1]!;
  assert.equal(again.id, receiver.succeeded("console")[0]!.id, "the same webhook-id");
  assert.deepEqual(again.verified_with, [0], "verified with the rotated secret");
  assert.equal(again.signature.split(" ").length, 2, "the previous secret still signs beside it");
  await newestDeliveryShows("succeeded");
});

test("a 410 fails the delivery and disables the endpoint; the overview counts it; enable, then delete", async () => {
  await addEndpoint("gone", "", []);
  const gone_id = ((await page.locator("h1").textContent()) ?? "").replace("Webhook endpoint ", "");
  assert.match(gone_id, /^we_/);
  receiver.path("gone", () => 410);
  await page.goto(`${base}/console/webhooks/${gone_id}`);
  assert.match(await page.locator("main").innerText(), /all events/);
  await page.getByRole("button", { name: "Send test event" }).click();
  await newestDeliveryShows("failed");
  assert.match(await page.locator("main").innerText(), /disabled\s+The endpoint answered 410 Gone\./);

  await page.getByRole("navigation").getByRole("link", { name: "Overview" }).click();
  assert.match(await page.locator(".card").nth(4).innerText(), /Failed deliveries\s+1\b/);

  receiver.path("gone", () => 204);
  await page.goto(`${base}/console/webhooks/${gone_id}`);
  await page.getByRole("button", { name: "Enable" }).click();
  await page.getByText("The endpoint is enabled").waitFor();
  const after = await call(base, "GET", `/v1/webhook-endpoints/${gone_id}`, { key: partner.api_key });
  assert.equal(after.body.status, "enabled");
  await page.getByRole("button", { name: "Delete endpoint" }).click();
  await page.getByText("The endpoint is deleted").waitFor();
  const deleted = await call(base, "GET", `/v1/webhook-endpoints/${gone_id}`, { key: partner.api_key });
  assert.equal(deleted.status, 404);
  assert.match(await page.locator("main").innerText(), new RegExp(endpoint_id));
  assert.doesNotMatch(await page.locator("main").innerText(), new RegExp(gone_id));
});

test("a webhook change without the session's CSRF token is refused and sends nothing", async () => {
  const before = receiver.received("console").length;
  const answer = await context.request.post(`${base}/console/webhooks/${endpoint_id}/test`, {
    form: { _csrf: "not-the-token" },
    headers: { origin: base },
    maxRedirects: 0,
  });
  assert.equal(answer.status(), 403);
  const foreign = await context.request.post(`${base}/console/webhooks/${endpoint_id}/delete`, {
    form: {},
    headers: { origin: "https://evil.example" },
    maxRedirects: 0,
  });
  assert.equal(foreign.status(), 403);
  const deliveries = await call(base, "GET", `/v1/webhook-endpoints/${endpoint_id}/deliveries`, {
    key: partner.api_key,
  });
  assert.equal(deliveries.body.data.length, 1, "still the one test event's delivery");
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(receiver.received("console").length, before);
});
