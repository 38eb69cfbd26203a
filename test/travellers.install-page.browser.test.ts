// The install page in a real browser (Debian's Chromium through playwright-core, no network but the
// service): at a phone's width (390 px) it has no horizontal overflow, axe-core finds nothing
// serious, its inline style runs under its own strict CSP (the hash is right), it makes no request
// but the page itself, and Arabic is laid out right to left. For the three states a traveller
// meets: not installed yet, installed and used, refunded.
import assert from "node:assert/strict";
import { test } from "node:test";
import { browserForFile, PHONE, seriousViolations } from "./support/browser.ts";
import { call, createWorld, newCart, newPartner, submit } from "./support/world.ts";

const world = await createWorld();
const base = world.services[0]!.url;
const browser = await browserForFile();
const partner = await newPartner(base, 100_00);

async function buy(language: string): Promise<{ path: string; iccid: string; order_id: string }> {
  const cart = await newCart(base, partner.api_key);
  const bought = await submit(base, partner.api_key, cart.cart_key, { language });
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  const iccid: string = bought.body.esim_iccid;
  const esim = await call(base, "GET", `/v1/esims/${iccid}`, { key: partner.api_key });
  return {
    path: new URL(esim.body.installation.install_page_url).pathname,
    iccid,
    order_id: bought.body.orderID,
  };
}

const released = await buy("en");
const installed = await buy("ja");
for (const body of [{ event: "install" }, { event: "use_data", data_mb: 700 }]) {
  const simulated = await call(base, "POST", `/v1/sandbox/esims/${installed.iccid}/simulate`, {
    key: partner.api_key,
    body,
  });
  assert.equal(simulated.status, 200, JSON.stringify(simulated.body));
}
const refunded = await buy("es");
const refund = await call(base, "POST", `/v1/orders/${refunded.order_id}/refund`, { key: partner.api_key });
assert.equal(refund.status, 200, JSON.stringify(refund.body));

const pages = [
  { name: "released, English", path: released.path },
  { name: "released, Arabic", path: `${released.path}?lang=ar` },
  { name: "released, Japanese", path: `${released.path}?lang=ja` },
  { name: "released, Spanish", path: `${released.path}?lang=es` },
  { name: "installed, Japanese", path: installed.path },
  { name: "installed, Arabic", path: `${installed.path}?lang=ar` },
  { name: "refunded, Spanish", path: refunded.path },
  { name: "missing, Korean", path: `/install/${"0".repeat(64)}?lang=ko` },
];

for (const shown of pages) {
  test(`the ${shown.name} page at 390 px: no overflow, no serious axe finding, its style applied, nothing fetched`, async () => {
    const context = await browser.newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      const requested: string[] = [];
      page.on("request", (request) => requested.push(request.url()));
      const violations: string[] = [];
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      const response = await page.goto(`${base}${shown.path}`);
      assert.ok(response, "an answer");
      assert.equal(response.status(), shown.name.startsWith("missing") ? 404 : 200);
      const overflow = await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
      );
      assert.equal(overflow, 0, "no horizontal scrolling at a phone's width");
      assert.deepEqual(await seriousViolations(page), []);
      // The inline style ran: the brand bar has the accent colour (a wrong hash would leave it unstyled).
      const background = await page.evaluate(
        "getComputedStyle(document.querySelector('header')).backgroundColor",
      );
      assert.equal(background, "rgb(31, 95, 191)");
      assert.deepEqual(violations, [], "nothing refused by the page's CSP");
      assert.deepEqual(
        requested.filter((url) => !url.startsWith("data:")),
        [`${base}${shown.path}`],
        "no request but the page",
      );
      const direction = await page.evaluate("getComputedStyle(document.body).direction");
      assert.equal(direction, shown.name.endsWith("Arabic") ? "rtl" : "ltr");
    } finally {
      await context.close();
    }
  });
}
