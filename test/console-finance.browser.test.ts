// Finance in the consoles (issue 32) in headless Chromium against the real service process, the
// carrier simulator and PostgreSQL: an operator finance user adjusts a partner's wallet both ways
// from the partner's money page (a double click posts one adjustment); then the partner's finance
// user opens the wallet's monthly statement, sees the totals the API answers, downloads the month's
// PDF, and pdftotext of it lists every transaction of the month (by its order id or reference, and
// its amount) with the adjustments' reasons. Both pages pass axe-core at desktop and phone width.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import { majorUnits } from "../src/lib/major-units.ts";
import { browserForFile, DESKTOP, PHONE, seriousViolations } from "./support/browser.ts";
import { addPerson, type Person, signInPage } from "./support/people.ts";
import { ADMIN_TOKEN, call, createWorld, newCart, newPartner, submit } from "./support/world.ts";

const world = await createWorld();
const base = world.services[0]!.url;
const browser = await browserForFile();

// A partner with 100.00 USD, one purchase kept and one refunded, bought through the API.
const partner = await newPartner(base, 10_000, "Ledger Travel");
const kept = await submit(base, partner.api_key, (await newCart(base, partner.api_key)).cart_key, {
  client_reference: "booking-7",
});
assert.equal(kept.status, 200, JSON.stringify(kept.body));
const returned = await submit(base, partner.api_key, (await newCart(base, partner.api_key)).cart_key);
assert.equal(returned.status, 200, JSON.stringify(returned.body));
const refund = await call(base, "POST", `/v1/orders/${returned.body.orderID}/refund`, {
  key: partner.api_key,
});
assert.equal(refund.status, 200, JSON.stringify(refund.body));

const operatorFinance = await addPerson(world.database.pool, { realm: "operator", role: "finance" });
const partnerFinance = await addPerson(world.database.pool, {
  realm: "partner",
  role: "finance",
  partner_id: partner.partner_id,
});
const month = new Date().toISOString().slice(0, 7);

async function signedIn(person: Person, viewport = DESKTOP): Promise<Page> {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  await signInPage(page, base, person);
  return page;
}

async function adjustmentsWithReason(reason: string): Promise<number> {
  const { rows } = await world.database.pool.query(
    "select count(*)::int as n from ledger_transfers where kind = 'adjustment' and reason = $1",
    [reason],
  );
  return rows[0].n;
}

test("an operator finance user adjusts the wallet both ways; a double click posts one adjustment", async () => {
  const page = await signedIn(operatorFinance);
  const money = `${base}/console/admin/partners/${partner.partner_id}/money`;
  await page.goto(money);
  await page.getByLabel("Direction").selectOption("debit");
  await page.getByLabel(/^Amount \(USD/).fill("3.50");
  await page.getByLabel(/^Reason/).fill("Card fee for the November wire");
  await page.getByRole("button", { name: "Adjust" }).dblclick();
  await page.waitForURL(/done=(adjusted|already)/);
  assert.equal(await adjustmentsWithReason("Card fee for the November wire"), 1, "one adjustment");
  await page.getByLabel("Direction").selectOption("credit");
  await page.getByLabel(/^Amount \(USD/).fill("12.25");
  await page.getByLabel(/^Reason/).fill("Goodwill: the outage of the 3rd");
  await page.getByRole("button", { name: "Adjust" }).click();
  await page.waitForURL(/done=adjusted/);
  assert.match(await page.getByRole("status").innerText(), /adjustment is posted/);
  const wallet = await call(base, "GET", "/v1/profile/wallet", { key: partner.api_key });
  const statement = await call(base, "GET", `/v1/profile/wallet/statements/${month}`, {
    key: partner.api_key,
  });
  assert.equal(statement.body.adjustments.amount_minor, 1_225 - 350);
  assert.equal(
    await page.getByTestId("closing_balance").innerText(),
    `$${(statement.body.closing_balance.amount_minor / 100).toFixed(2)}`,
    "the operator's page shows the month's totals",
  );
  assert.equal(wallet.body.balance.amount_minor, statement.body.closing_balance.amount_minor);
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    assert.deepEqual(await seriousViolations(page), [], `money page at ${viewport.width}px`);
  }
  // The operator's PDF link answers the partner's PDF.
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "Download PDF" }).click(),
  ]);
  assert.equal(download.suggestedFilename(), `statement-${month}.pdf`);
  await page.context().close();
});

test("a partner finance user downloads the month's PDF and it lists every transaction of the month", async () => {
  const page = await signedIn(partnerFinance);
  await page.goto(`${base}/console/wallet`);
  await page.getByLabel("Month (UTC)").fill(month);
  await page.getByRole("button", { name: "Show month" }).click();
  await page.waitForURL(new RegExp(`/console/wallet/monthly\\?month=${month}$`));
  const json = (await call(base, "GET", `/v1/profile/wallet/statements/${month}`, { key: partner.api_key }))
    .body;
  for (const total of [
    "opening_balance",
    "credits",
    "purchases",
    "refunds",
    "adjustments",
    "closing_balance",
  ]) {
    const shown = await page.getByTestId(total).innerText();
    assert.equal(shown.replace(/[$,]/g, ""), (json[total].amount_minor / 100).toFixed(2), total);
  }
  for (const viewport of [PHONE, DESKTOP]) {
    await page.setViewportSize(viewport);
    assert.deepEqual(await seriousViolations(page), [], `monthly page at ${viewport.width}px`);
  }
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "Download PDF" }).click(),
  ]);
  assert.equal(download.suggestedFilename(), `statement-${month}.pdf`);
  const file = await download.path();
  assert.equal((await readFile(file)).subarray(0, 5).toString(), "%PDF-");
  const { stdout } = await promisify(execFile)("pdftotext", ["-layout", file, "-"]);
  const text = stdout.replace(/\s+/g, " ");
  const rows = (
    await call(base, "GET", `/v1/profile/wallet/transactions?from=${month}-01&limit=100`, {
      key: partner.api_key,
    })
  ).body.data;
  assert.deepEqual(rows.map((r: { type: string }) => r.type).sort(), [
    "adjustment",
    "adjustment",
    "credit",
    "purchase",
    "purchase",
    "refund",
  ]);
  for (const row of rows) {
    const names = row.order_id ?? row.reference;
    const line = stdout.split("\n").find((l) => l.includes(names) && l.includes(` ${row.type} `));
    assert.ok(line, `${row.type} ${names} is listed`);
    assert.ok(line.includes(majorUnits(row.amount.amount_minor, "USD")), `${names}: ${line}`);
  }
  assert.match(text, /Card fee for the November wire/);
  assert.match(text, /Goodwill: the outage of the 3rd/);
  assert.match(text, /Client reference booking-7/);
  // The same month's CSV from the same page.
  const [csv] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "Download CSV" }).click(),
  ]);
  const lines = (await readFile(await csv.path(), "utf8")).trim().split("\r\n");
  assert.equal(lines.length, 1 + rows.length, "the CSV holds the month's rows");
  await page.context().close();
});

test("a partner support user sees no monthly statement and cannot download one", async () => {
  const support = await addPerson(world.database.pool, {
    realm: "partner",
    role: "support",
    partner_id: partner.partner_id,
  });
  const page = await signedIn(support);
  await page.goto(`${base}/console/wallet`);
  assert.equal(await page.getByLabel("Month (UTC)").count(), 0, "no month picker");
  const pdf = await page.request.get(`${base}/console/wallet/statement.pdf?month=${month}`);
  assert.equal(pdf.status(), 403);
  const admin = await call(base, "GET", `/admin/partners/${partner.partner_id}/wallet/statements/${month}`, {
    key: ADMIN_TOKEN,
  });
  assert.equal(admin.status, 200);
  await page.context().close();
});
