// The support search in the partner console (issue 32), in headless Chromium against the real
// service process, the carrier simulator and PostgreSQL: a support person signs in, types a
// traveller's email in capitals and finds exactly that traveller's order (not another partner's
// with the same address); the `refunded` filter shows only the refunded order, on orders and on
// eSIMs; the filters survive the pager; at phone width the pages do not scroll sideways; and the
// operator's support finds the same order among that partner's orders.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { browserForFile, DESKTOP, PHONE, seriousViolations } from "./support/browser.ts";
import { addPerson, signInPage } from "./support/people.ts";
import { call, createWorld, newCart, newPartner, submit } from "./support/world.ts";

const world = await createWorld();
const base = world.services[0]!.url;
const browser = await browserForFile();

const partner = await newPartner(base, 100_000, "Acme Travel");
const rival = await newPartner(base, 100_000, "Rival Trips");

/** An eSIM bought through the API for this traveller, as the partner's systems would. */
async function buy(key: string, email: string, last_name: string, client_reference: string): Promise<string> {
  const cart = await newCart(base, key);
  const bought = await submit(base, key, cart.cart_key, { email, last_name, client_reference });
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  return bought.body.orderID;
}

const mila = await buy(partner.api_key, "mila.novak@example.com", "Novák", "trip-7001");
const others = [
  await buy(partner.api_key, "jon.berg@example.com", "Berg", "trip-7002"),
  await buy(partner.api_key, "mila.novak@example.org", "Novak", "trip-7003"),
];
// The same traveller also bought from another partner: never shown here.
await buy(rival.api_key, "mila.novak@example.com", "Novák", "trip-7001");
const refunded = others[0]!;
const answer = await call(base, "POST", `/v1/orders/${refunded}/refund`, { key: partner.api_key });
assert.equal(answer.status, 200, JSON.stringify(answer.body));

const support = await addPerson(world.database.pool, {
  realm: "partner",
  role: "support",
  partner_id: partner.partner_id,
});

/** The order ids listed in the page's orders table. */
async function listedOrders(page: Page): Promise<string[]> {
  return page.locator("main table tbody tr td:first-child").allInnerTexts();
}

/** [scrollWidth, innerWidth] of the page, then [scrollWidth, clientWidth] of each table's wrapper. */
async function overflow(page: Page): Promise<{ page: number[]; tables: number[][] }> {
  // A string: the test's TypeScript has no DOM types, the page has.
  return (await page.evaluate(`({
    page: [document.documentElement.scrollWidth, window.innerWidth],
    tables: [...document.querySelectorAll(".table-wrap")].map((wrap) => [wrap.scrollWidth, wrap.clientWidth]),
  })`)) as { page: number[]; tables: number[][] };
}

test("support types the traveller's email in capitals and finds exactly that order", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInPage(page, base, support);
  // From the overview's box, then again from the orders page's own form.
  await page.getByLabel("Find an order").fill("MILA.NOVAK@EXAMPLE.COM");
  await page.getByRole("button", { name: "Find" }).click();
  await page.waitForURL(/\/console\/orders\?q=MILA.NOVAK%40EXAMPLE.COM/);
  assert.deepEqual(await listedOrders(page), [mila]);
  await page.getByRole("navigation").getByRole("link", { name: "Orders", exact: true }).click();
  await page.getByLabel("Search", { exact: true }).fill("MILA.NOVAK@EXAMPLE.COM");
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForURL(/q=MILA.NOVAK%40EXAMPLE.COM/);
  assert.deepEqual(await listedOrders(page), [mila]);
  // The last name's start, any case, accents kept: both Nováks of this partner, not the Novak.
  await page.getByLabel("Search", { exact: true }).fill("NOVÁ");
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForURL(/q=NOV%C3%81/);
  assert.deepEqual(await listedOrders(page), [mila]);
  assert.deepEqual(await seriousViolations(page), []);
  await context.close();
});

test("the refunded filter shows only the refunded order, on orders and on eSIMs", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInPage(page, base, support);
  await page.goto(`${base}/console/orders`);
  await page.getByLabel("Status").selectOption("refunded");
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForURL(/status=refunded/);
  assert.deepEqual(await listedOrders(page), [refunded]);
  assert.match(await page.locator("main table").innerText(), /refunded/);
  await page.goto(`${base}/console/esims?status=cancelled`);
  assert.equal(await page.locator("main table tbody tr").count(), 1, "the refunded order's eSIM, cancelled");
  // A bad value is the API's 400 shown beside the form, the form's values kept.
  await page.goto(`${base}/console/orders?from=2026-03-02&to=2026-03-01&status=refunded`);
  assert.match(await page.getByRole("alert").innerText(), /from is after to/);
  assert.equal(await page.getByLabel("Status").inputValue(), "refunded");
  await context.close();
});

test("the filters survive the pager", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInPage(page, base, support);
  // 25 orders a page: 26 of one traveller make a second page.
  for (let n = 0; n < 26; n++) await buy(partner.api_key, "pager@example.com", "Page", `pager-${n}`);
  await page.goto(`${base}/console/orders?q=PAGER%40example.com&type=esim`);
  assert.equal((await listedOrders(page)).length, 25);
  await page.getByRole("link", { name: "Older orders" }).click();
  const kept = new URL(page.url()).searchParams;
  assert.deepEqual([kept.get("q"), kept.get("type")], ["PAGER@example.com", "esim"]);
  assert.equal((await listedOrders(page)).length, 1);
  assert.equal(await page.getByLabel("Search", { exact: true }).inputValue(), "PAGER@example.com");
  await context.close();
});

test("at phone width the orders and eSIMs pages do not scroll sideways, nor do their tables", async () => {
  const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  await signInPage(page, base, support);
  for (const path of ["/console/orders", "/console/esims", "/console/orders?q=nov"]) {
    await page.goto(`${base}${path}`);
    const measured = await overflow(page);
    assert.ok(measured.page[0]! <= measured.page[1]!, `${path}: page ${measured.page}`);
    for (const [scroll, client] of measured.tables)
      assert.ok(scroll! <= client!, `${path}: table ${scroll} > ${client}`);
    assert.ok((await page.locator("main table tbody tr").count()) > 0, path);
  }
  assert.deepEqual(await seriousViolations(page), []);
  await context.close();
});

test("the operator's support finds the traveller among one partner's orders, the partner's search and filters", async () => {
  const person = await addPerson(world.database.pool, { realm: "operator", role: "support" });
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInPage(page, base, person);
  await page.goto(`${base}/console/admin/partners/${partner.partner_id}`);
  await page.getByRole("link", { name: /^Orders/ }).click();
  await page.waitForURL(`${base}/console/admin/partners/${partner.partner_id}/orders`);
  await page.getByLabel("Search", { exact: true }).fill("Mila.Novak@Example.COM");
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForURL(/q=Mila.Novak%40Example.COM/);
  assert.deepEqual(await listedOrders(page), [mila], "this partner's order, not the rival's");
  await page.getByRole("link", { name: mila, exact: true }).click();
  await page.waitForURL(`${base}/console/admin/orders/${mila}`);
  await page.goto(`${base}/console/admin/partners/${partner.partner_id}/orders?status=refunded`);
  assert.deepEqual(await listedOrders(page), [refunded]);
  const unknown = await page.goto(`${base}/console/admin/partners/ptr_AAAAAAAAAAAAAAAAAAAAAA/orders`);
  assert.equal(unknown?.status(), 404);
  await context.close();
});
