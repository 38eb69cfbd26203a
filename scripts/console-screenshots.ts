// `npm run console:screenshots`: every page of the web console at desktop and phone width, as PNGs
// under docs/console/ (the README shows them). A throw-away sandbox: its own embedded PostgreSQL,
// the service with its built-in carrier simulator, a partner with a few orders made through the API
// and a webhook endpoint on a local receiver, and people of the partner and of the operator who sign
// in with their passwords (issue 31). Names as arguments shoot only those pages
// (`npm run console:screenshots -- webhooks webhook`); none: every page.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { DESKTOP, launchBrowser, PHONE } from "../test/support/browser.ts";
import { createPartner, END_USER, purchase, topUpBody } from "../test/support/fixtures.ts";
import { bearer, expectStatus, request } from "../test/support/http.ts";
import { addPerson, type Person } from "../test/support/people.ts";
import { startOwnPostgres } from "../test/support/postgres.ts";
import { startServiceProcess } from "../test/support/service.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../test/support/webhook-receiver.ts";

const OUT = path.resolve("docs/console");
const ADMIN_TOKEN = "screenshots-admin-token-0123456789";

type Shot = { name: string; url: string; area: "partner" | "operator" | "none" | "suspended" };

async function seed(base: string) {
  const partner = await createPartner(base, {
    admin_token: ADMIN_TOKEN,
    name: "Acme Travel",
    credit_minor: 50_000,
  });
  const key = partner.api_key;
  const orders = [];
  for (const [package_id, reference] of [
    ["fr-1gb-7d", "booking-1042"],
    ["fr-3gb-15d", "booking-1043"],
    ["de-1gb-7d", "booking-1044"],
  ] as const) {
    orders.push(await purchase(base, key, package_id, { client_reference: reference }));
  }
  const iccid: string = orders[0]!.esim_iccid;
  // A resend to the traveller's hotel: the order page's email log shows it beside the first one.
  const resent = await request(base, "POST", `/v1/orders/${orders[0]!.orderID}/resend-email`, {
    key,
    body: { email: "frontdesk@hotel.example" },
  });
  expectStatus(resent, 202, "resend");
  const offers = await request(base, "GET", `/v1/orders/available-topups/${iccid}`, { key });
  const topup = await request(base, "POST", "/v1/orders/submit-topup", {
    key,
    headers: { "idempotency-key": "screenshots-topup-1" },
    body: topUpBody(iccid, offers.body.data[0], { client_reference: "booking-1042" }),
  });
  expectStatus(topup, 200, "top-up");
  for (const body of [{ event: "install" }, { event: "use_data", data_mb: 700 }]) {
    expectStatus(
      await request(base, "POST", `/v1/sandbox/esims/${iccid}/simulate`, { key, body }),
      200,
      "simulate",
    );
  }
  // Adjustments both ways, so the month's statement and the money page show some.
  for (const body of [
    { amount_minor: -350, reason: "Card fee on the November wire", reference: "screenshots-adj-1" },
    {
      amount_minor: 1_250,
      reason: "Goodwill: the carrier outage of the 3rd",
      reference: "screenshots-adj-2",
    },
  ]) {
    expectStatus(
      await request(base, "POST", `/admin/partners/${partner.partner_id}/wallet/adjustments`, {
        headers: bearer(ADMIN_TOKEN),
        body,
      }),
      201,
      "adjustment",
    );
  }
  await createPartner(base, { admin_token: ADMIN_TOKEN, name: "Globetrotter GmbH", credit_minor: 120_000 });
  expectStatus(
    await request(base, "POST", `/admin/partners/${partner.partner_id}/api-keys`, {
      headers: bearer(ADMIN_TOKEN),
      body: { name: "Reporting", scope: "read_only", allowed_ips: ["203.0.113.0/24", "2001:db8::/48"] },
    }),
    201,
    "second key",
  );
  const receiver = await startWebhookReceiver({ autoClose: false });
  const endpoint_id = await seedWebhooks(base, key, receiver);
  // A pending order (the carrier is down for this magic email) for the operator's Settle form, and a
  // suspended partner for its page and its people's banner.
  const stuck = await purchase(base, key, "fr-1gb-7d", { email: "unavailable@carrier.test" }, [503]);
  const suspended = await createPartner(base, {
    admin_token: ADMIN_TOKEN,
    name: "Nomad Roaming",
    credit_minor: 8_000,
  });
  expectStatus(
    await request(base, "PATCH", `/admin/partners/${suspended.partner_id}`, {
      headers: bearer(ADMIN_TOKEN),
      body: { status: "suspended", reason: "Invoice 2026-10 unpaid; see ticket 4411" },
    }),
    200,
    "suspend",
  );
  return {
    partner,
    order_id: orders[0]!.orderID as string,
    refundable_id: orders[1]!.orderID as string,
    pending_order_id: stuck.order_id as string,
    suspended,
    iccid,
    endpoint_id,
    receiver,
  };
}

/** An endpoint on the receiver with a test event delivered, and one the receiver refuses (410). */
async function seedWebhooks(base: string, key: string, receiver: WebhookReceiver): Promise<string> {
  receiver.path("gone", () => 410);
  const endpoints = [];
  for (const [name, description] of [
    ["gone", "Old booking system"],
    ["bookings", "Bookings system"],
  ] as const) {
    const created = await request(base, "POST", "/v1/webhook-endpoints", {
      key,
      body: { url: receiver.path(name), description, event_types: ["order.completed", "webhook.test"] },
    });
    expectStatus(created, 201, "webhook endpoint");
    const endpoint_id: string = created.body.endpoint_id;
    expectStatus(
      await request(base, "POST", `/v1/webhook-endpoints/${endpoint_id}/test`, { key }),
      202,
      "test",
    );
    endpoints.push(endpoint_id);
  }
  for (let i = 0; i < 100 && receiver.received().length < 2; i++)
    await new Promise((r) => setTimeout(r, 100));
  return endpoints[1]!;
}

/** The people the Team and People pages show: an owner and a few colleagues, and the operator's staff. */
async function seedPeople(
  database_url: string,
  partner_id: string,
  suspended_partner_id: string,
): Promise<{ owner: Person; operator: Person; suspended: Person }> {
  const pool = new pg.Pool({ connectionString: database_url, max: 2 });
  try {
    const owner = await addPerson(pool, {
      realm: "partner",
      role: "owner",
      partner_id,
      email: "olivia@acme-travel.example",
      name: "Olivia Owner",
    });
    for (const [role, email, name] of [
      ["developer", "dev@acme-travel.example", "Dev Patel"],
      ["support", "sam@acme-travel.example", "Sam Support"],
      ["finance", "fiona@acme-travel.example", "Fiona Finance"],
    ] as const)
      await addPerson(pool, { realm: "partner", role, partner_id, email, name });
    const operator = await addPerson(pool, {
      realm: "operator",
      role: "admin",
      email: "ops@esim.example",
      name: "Ops Admin",
    });
    await addPerson(pool, {
      realm: "operator",
      role: "finance",
      email: "money@esim.example",
      name: "Finance Desk",
    });
    const suspended = await addPerson(pool, {
      realm: "partner",
      role: "owner",
      partner_id: suspended_partner_id,
      email: "nina@nomad-roaming.example",
      name: "Nina Nomad",
    });
    return { owner, operator, suspended };
  } finally {
    await pool.end();
  }
}

async function signedIn(
  browser: Browser,
  base: string,
  area: "partner" | "operator",
  person: Person,
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: DESKTOP, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(`${base}/console${area === "operator" ? "/admin" : ""}/sign-in`);
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${base}/console${area === "operator" ? "/admin" : ""}`);
  await page.close();
  return context;
}

async function shoot(page: Page, base: string, shot: Shot): Promise<void> {
  for (const [width, viewport] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.goto(`${base}${shot.url}`);
    await page.screenshot({ path: path.join(OUT, `${shot.name}-${width}.png`), fullPage: true });
  }
  console.error(`docs/console/${shot.name}-{desktop,phone}.png`);
}

async function main(): Promise<void> {
  await mkdir(OUT, { recursive: true });
  const postgres = await startOwnPostgres();
  const service = await startServiceProcess({
    DATABASE_URL: postgres.url,
    ADMIN_TOKEN,
    LOG_LEVEL: "info",
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  });
  const only = process.argv.slice(2);
  const browser = await launchBrowser();
  try {
    const base = service.url;
    const { partner, order_id, refundable_id, pending_order_id, suspended, iccid, endpoint_id, receiver } =
      await seed(base);
    const people = await seedPeople(postgres.url, partner.partner_id, suspended.partner_id);
    const shots: Shot[] = [
      { name: "sign-in", url: "/console/sign-in", area: "none" },
      { name: "sso", url: "/console/sso", area: "none" },
      { name: "team-sso", url: "/console/team/sso", area: "partner" },
      { name: "overview", url: "/console", area: "partner" },
      { name: "orders", url: "/console/orders", area: "partner" },
      {
        name: "orders-search",
        url: `/console/orders?q=${encodeURIComponent(END_USER.email.toUpperCase())}&type=esim`,
        area: "partner",
      },
      { name: "order", url: `/console/orders/${order_id}`, area: "partner" },
      { name: "order-refundable", url: `/console/orders/${refundable_id}`, area: "partner" },
      { name: "esims", url: "/console/esims", area: "partner" },
      { name: "esim", url: `/console/esims/${iccid}`, area: "partner" },
      { name: "wallet", url: "/console/wallet", area: "partner" },
      { name: "wallet-monthly", url: "/console/wallet/monthly", area: "partner" },
      { name: "api-keys", url: "/console/keys", area: "partner" },
      { name: "webhooks", url: "/console/webhooks", area: "partner" },
      { name: "webhook", url: `/console/webhooks/${endpoint_id}`, area: "partner" },
      { name: "team", url: "/console/team", area: "partner" },
      { name: "audit-log", url: "/console/audit-log", area: "partner" },
      { name: "two-factor", url: "/console/account/two-factor", area: "partner" },
      { name: "password-reset", url: "/console/password-reset", area: "none" },
      { name: "admin-partners", url: "/console/admin", area: "operator" },
      { name: "admin-partner", url: `/console/admin/partners/${partner.partner_id}`, area: "operator" },
      {
        name: "admin-partner-money",
        url: `/console/admin/partners/${partner.partner_id}/money`,
        area: "operator",
      },
      {
        name: "admin-partner-orders",
        url: `/console/admin/partners/${partner.partner_id}/orders?q=booking-104`,
        area: "operator",
      },
      { name: "admin-pending-orders", url: "/console/admin/orders?older_than_minutes=0", area: "operator" },
      { name: "admin-catalog", url: "/console/admin/catalog", area: "operator" },
      { name: "admin-ledger", url: "/console/admin/ledger", area: "operator" },
      { name: "admin-people", url: "/console/admin/people", area: "operator" },
      { name: "admin-audit-log", url: "/console/admin/audit-log", area: "operator" },
      {
        name: "admin-partner-suspended",
        url: `/console/admin/partners/${suspended.partner_id}`,
        area: "operator",
      },
      { name: "admin-order", url: `/console/admin/orders/${order_id}`, area: "operator" },
      { name: "admin-order-pending", url: `/console/admin/orders/${pending_order_id}`, area: "operator" },
      { name: "suspended-overview", url: "/console", area: "suspended" },
    ];
    const contexts = {
      none: await browser.newContext({ deviceScaleFactor: 1 }),
      partner: await signedIn(browser, base, "partner", people.owner),
      operator: await signedIn(browser, base, "operator", people.operator),
      suspended: await signedIn(browser, base, "partner", people.suspended),
    };
    for (const shot of shots.filter((s) => only.length === 0 || only.includes(s.name))) {
      const page = await contexts[shot.area].newPage();
      await shoot(page, base, shot);
      await page.close();
    }
    await receiver.close();
  } finally {
    await browser.close();
    await service.stop();
    await postgres.stop();
  }
}

await main();
