// The web console (issue 17) in headless Chromium against the real service process, the carrier
// simulator process and a real PostgreSQL: a partner's owner signs in, finds an order made
// through the API, reads the eSIM's QR code off the page, tops up (a double click buys once),
// downloads the statement; the operator credits the partner and the partner sees it; changes
// without the CSRF token or from another origin are refused, so are idle, expired and signed-out
// sessions; and every page passes axe-core with no serious violation at desktop and phone width.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import type { BrowserContext, Page } from "playwright-core";
import { browserForFile, DESKTOP, PHONE, seriousViolations } from "./support/browser.ts";
import { addPerson, type Person, signInPage } from "./support/people.ts";
import { ADMIN_TOKEN, balance, call, createWorld, newCart, newPartner, submit } from "./support/world.ts";

const world = await createWorld();
const base = world.services[0]!.url;
const browser = await browserForFile();
const scratch = await mkdtemp(path.join(tmpdir(), "console-test-"));
after(() => rm(scratch, { recursive: true, force: true }));

// A partner with 100.00 USD and one eSIM bought through the API, as its systems would.
const partner = await newPartner(base, 10_000, "Acme Travel");
const cart = await newCart(base, partner.api_key);
const bought = await submit(base, partner.api_key, cart.cart_key, { client_reference: "booking-42" });
assert.equal(bought.status, 200, JSON.stringify(bought.body));
const order_id: string = bought.body.orderID;
const iccid: string = bought.body.esim_iccid;
const lpa: string = bought.body.purchases[0].qr_code;

const owner = await addPerson(world.database.pool, {
  realm: "partner",
  role: "owner",
  partner_id: partner.partner_id,
});
const operatorAdmin = await addPerson(world.database.pool, { realm: "operator", role: "admin" });

async function signIn(context: BrowserContext, person: Person): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${base}/console${person.realm === "operator" ? "/admin" : ""}`);
  assert.match(page.url(), /\/sign-in\?ended=1$/, "no session: the sign-in page");
  await signInPage(page, base, person);
  return page;
}

const partnerContext = await browser.newContext({ viewport: DESKTOP });
const partnerPage = await signIn(partnerContext, owner);

/** The stored hash of a session id (src/console/sessions.ts): to age one session, not all. */
function stored(session_id: string): Buffer {
  return createHash("sha256").update(`session\0${session_id}`, "utf8").digest();
}

async function sessionCookie(context: BrowserContext, name: string): Promise<string> {
  const found = (await context.cookies(`${base}/console`)).find((c) => c.name === name);
  assert.ok(found, `cookie ${name}`);
  assert.equal(found.httpOnly, true);
  assert.equal(found.sameSite, "Strict");
  assert.equal(found.path, "/console");
  return found.value;
}

test("the partner signs in with its API key and finds the API's order by its client_reference", async () => {
  const page = partnerPage;
  await sessionCookie(partnerContext, "console_partner");
  const left = (10_000 - bought.body.total.amount_minor) / 100;
  const shown = await page.locator(".card .value").first().textContent();
  assert.equal(shown, `$${left.toFixed(2)}`, "100.00 minus the eSIM");
  const today = await page.locator(".card").nth(2).innerText();
  assert.match(today, /Orders today\s+1\s+1 completed, 0 failed/);
  assert.match(await page.locator(".card").nth(3).innerText(), /Pending orders\s+0/);
  await page.getByRole("navigation").getByRole("link", { name: "Orders", exact: true }).click();
  await page.getByLabel("Search", { exact: true }).fill("booking-42");
  await page.getByRole("button", { name: "Search" }).click();
  await page.getByRole("link", { name: order_id }).click();
  await page.waitForURL(`${base}/console/orders/${order_id}`);
  assert.match(await page.locator("main").innerText(), /completed[\s\S]*booking-42/);

  await page.goBack();
  await page.getByLabel("Status").selectOption("failed");
  await page.getByRole("button", { name: "Search" }).click();
  const kept = new URL(page.url()).searchParams;
  assert.deepEqual([kept.get("q"), kept.get("status")], ["booking-42", "failed"]);
  assert.match(await page.locator("main").innerText(), /No orders\./, "booking-42's order did not fail");
  await page.goto(`${base}/console/orders?q=no-such-booking`);
  assert.match(await page.locator("main").innerText(), /No orders\./);
});

test("the eSIM's QR code read off the page with zbarimg is its LPA string", async () => {
  const page = partnerPage;
  await page.goto(`${base}/console/orders/${order_id}`);
  await page.getByRole("link", { name: iccid }).click();
  await page.waitForURL(`${base}/console/esims/${iccid}`);
  const image = page.getByRole("img", { name: `QR code to install eSIM ${iccid}` });
  await image.waitFor();
  const file = path.join(scratch, "qr.png");
  await image.screenshot({ path: file });
  const { stdout } = await promisify(execFile)("zbarimg", ["--quiet", "--raw", file]);
  assert.equal(stdout.trim(), lpa);
  assert.match(await page.locator("main").innerText(), new RegExp(lpa.replaceAll("$", "\\$")));
});

test("a top-up form sent three times (two at once, as a double click on a slow line, then clicked) buys once", async () => {
  const page = partnerPage;
  await page.goto(`${base}/console/esims/${iccid}`);
  const before = await balance(base, partner.api_key);
  await page.getByLabel("Package").selectOption({ index: 0 });
  const price = await page.getByLabel("Package").locator("option").first().textContent();
  // The form exactly as the browser would send it, Idempotency-Key included, sent twice at once.
  const form = page.locator('form[action$="/top-up"]');
  const fields: Record<string, string> = {};
  for (const input of await form.locator("input, select").all()) {
    fields[(await input.getAttribute("name"))!] = await input.inputValue();
  }
  const action = `${base}${await form.getAttribute("action")}`;
  const send = () =>
    partnerContext.request.post(action, { form: fields, headers: { origin: base }, maxRedirects: 0 });
  const answers = await Promise.all([send(), send()]);
  for (const answer of answers) {
    assert.equal(answer.status(), 303);
    assert.match(answer.headers().location ?? "", /^\/console\/orders\/ord_/);
  }
  await page.getByRole("button", { name: "Buy top-up" }).click();
  await page.waitForURL(/\/console\/orders\/ord_/);
  await page.getByText("Top-up completed.").waitFor();
  const posts = world.services[0]!.logs()
    .split("\n")
    .filter((line) => line.includes('"route":"/console/esims/:iccid/top-up"'));
  assert.equal(posts.length, 3, "three submissions reached the service");
  const orders = await call(base, "GET", "/v1/profile/orders", { key: partner.api_key });
  const topups = orders.body.data.filter((o: { type: string }) => o.type === "topup");
  assert.equal(topups.length, 1, "one top-up order for three submissions");
  assert.equal(topups[0].status, "completed");
  assert.equal(await balance(base, partner.api_key), before - topups[0].total.amount_minor, "debited once");
  assert.ok(
    price?.includes((topups[0].total.amount_minor / 100).toFixed(2)),
    `the form showed the price: ${price}`,
  );
  const esim = await call(base, "GET", `/v1/esims/${iccid}`, { key: partner.api_key });
  assert.equal(esim.body.bundles.length, 2, "the eSIM has the top-up's bundle");
});

test("the statement CSV downloads with the purchase, the top-up and the credit", async () => {
  const page = partnerPage;
  await page.goto(`${base}/console/wallet`);
  const today = new Date().toISOString().slice(0, 10);
  await page.getByLabel("From (UTC day)").fill(today);
  await page.getByLabel("To (UTC day, included)").fill(today);
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "Download CSV" }).click(),
  ]);
  assert.equal(
    download.suggestedFilename(),
    `statement-${today}-to-${today}.csv`,
    "the range typed in the form",
  );
  const csv = await readFile(await download.path(), "utf8");
  const lines = csv.trim().split("\r\n");
  assert.equal(
    lines[0],
    "transaction_id,type,amount,amount_minor,currency,balance_after_minor,order_id,reference," +
      "client_reference,iccid,package_id,description,created_at",
  );
  assert.deepEqual(
    lines.slice(1).map((line) => line.split(",")[1]),
    ["credit", "purchase", "topup"],
    "oldest first",
  );
  assert.ok(
    lines.some((line) => line.includes(`,booking-42,${iccid},`)),
    "the order's own references",
  );
  assert.ok(lines.some((line) => line.includes(order_id)));
});

test("the operator credits the partner and the partner's console shows the new balance", async () => {
  const operatorContext = await browser.newContext({ viewport: DESKTOP });
  const admin = await signIn(operatorContext, operatorAdmin);
  await admin.getByRole("link", { name: "Acme Travel" }).click();
  await admin.getByLabel("Amount (USD)").fill("250.50");
  await admin.getByLabel("Payment reference").fill("bank-transfer-77");
  await admin.getByRole("button", { name: "Credit", exact: true }).click();
  await admin.getByText("The wallet is credited.").waitFor();
  // The same reference again (a resent form): nothing added.
  await admin.getByLabel("Amount (USD)").fill("250.50");
  await admin.getByLabel("Payment reference").fill("bank-transfer-77");
  await admin.getByRole("button", { name: "Credit", exact: true }).click();
  await admin.getByText("That reference was credited before").waitFor();

  const expected = await balance(base, partner.api_key);
  await partnerPage.goto(`${base}/console`);
  const shown = await partnerPage.locator(".card .value").first().textContent();
  assert.equal(shown, `$${(expected / 100).toFixed(2)}`);
  const statement = await call(base, "GET", "/v1/profile/wallet/transactions", { key: partner.api_key });
  assert.equal(
    statement.body.data.filter((t: { reference: string }) => t.reference === "bank-transfer-77").length,
    1,
  );
  // The partner's price list, through the same use case as PUT /admin/partners/{id}/pricing.
  await admin.getByLabel("Discount off list prices (%)").fill("10");
  await admin.getByLabel(/^Overrides/).fill("fr-3gb-15d 700");
  await admin.getByRole("button", { name: "Save prices" }).click();
  await admin.getByText("The price list is saved.").waitFor();
  const pricing = await call(base, "GET", `/admin/partners/${partner.partner_id}/pricing`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  assert.deepEqual(pricing.body, {
    discount_percent: 10,
    overrides: [{ package_id: "fr-3gb-15d", amount_minor: 700 }],
  });
  await admin.getByLabel(/^Overrides/).fill("no-such-package 700");
  await admin.getByRole("button", { name: "Save prices" }).click();
  await admin.getByText("No package no-such-package.").waitFor();
  await operatorContext.close();
});

test("a change without the session's CSRF token, or from another origin, is refused and changes nothing", async () => {
  const before = await balance(base, partner.api_key);
  const keys = await partnerContext.request.get(`${base}/console/keys`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await keys.text())?.[1];
  assert.ok(csrf);
  const forged = await partnerContext.request.post(`${base}/console/keys`, {
    form: { _csrf: "forged" },
    headers: { origin: base },
  });
  assert.equal(forged.status(), 403);
  const cross = await partnerContext.request.post(`${base}/console/keys`, {
    form: { _csrf: csrf },
    headers: { origin: "https://attacker.example" },
  });
  assert.equal(cross.status(), 403);
  const issued = await partnerContext.request.get(`${base}/console/keys`);
  assert.equal((await issued.text()).match(/key_[A-Za-z0-9_-]+<\/td>/g)?.length, 1, "still one key");
  assert.equal(await balance(base, partner.api_key), before);
});

test("the partner issues a key (shown once) and revokes it: the API refuses it at once", async () => {
  const page = partnerPage;
  await page.goto(`${base}/console/keys`);
  await page.getByRole("button", { name: "Issue a new key" }).click();
  const api_key = (await page.getByLabel("The new API key").textContent())?.trim() ?? "";
  assert.match(api_key, /^sand_/);
  assert.equal((await call(base, "GET", "/v1/profile/wallet", { key: api_key })).status, 200);
  await page.goto(`${base}/console/keys`);
  assert.doesNotMatch(await page.content(), new RegExp(api_key), "never shown again");
  const revoke = page.getByRole("button", { name: /^Revoke key_/ }).last();
  await revoke.click();
  await page.getByText("The key is revoked").waitFor();
  assert.equal((await call(base, "GET", "/v1/profile/wallet", { key: api_key })).status, 401);
  assert.equal(
    (await call(base, "GET", "/v1/profile/wallet", { key: partner.api_key })).status,
    200,
    "the first key works",
  );
  // Audited once, in the name of the person signed in.
  const { rows } = await world.database.pool.query<{
    actor_type: string;
    actor_id: string;
    actor_email: string;
  }>(
    `select a.actor_type, a.actor_id, a.actor_email from audit_log a
     where a.action = 'api_key.revoked' and a.partner_id = $1`,
    [partner.partner_id],
  );
  assert.deepEqual(rows, [{ actor_type: "user", actor_id: owner.user_id, actor_email: owner.email }]);
});

test("the keys forms issue a named, read-only, allowlisted key, the tables show it, and each issue is audited with its actor", async () => {
  const page = partnerPage;
  await page.goto(`${base}/console/keys`);
  await page.getByLabel("Name", { exact: true }).fill("Reporting");
  await page.getByLabel("Scope").selectOption("read_only");
  await page.getByLabel("Allowed IPs").fill("127.0.0.1/32\n::1/128");
  await page.getByRole("button", { name: "Issue a new key" }).click();
  const api_key = (await page.getByLabel("The new API key").textContent())?.trim() ?? "";
  assert.match(api_key, /^sand_/);
  const row = (await page.locator("tr", { hasText: "Reporting" }).textContent()) ?? "";
  assert.match(row, /read only/);
  assert.match(row, /127\.0\.0\.1\/32, ::1\/128/);
  // This test's requests come from loopback: the key reads, and its writes are refused.
  assert.equal((await call(base, "GET", "/v1/profile/wallet", { key: api_key })).status, 200);
  const write = await call(base, "POST", "/v1/orders/cart", {
    key: api_key,
    body: { package_id: "fr-1gb-7d" },
  });
  assert.equal(write.status, 403);
  assert.equal(write.body.code, "insufficient_scope");
  // A CIDR with host bits set is refused with the network to write instead, and issues nothing.
  await page.goto(`${base}/console/keys`);
  const keysBefore = await page.locator("tbody tr").count();
  await page.getByLabel("Allowed IPs").fill("10.0.0.1/8");
  await page.getByRole("button", { name: "Issue a new key" }).click();
  await page.getByText(/write the network 10\.0\.0\.0\/8/).waitFor();
  await page.goto(`${base}/console/keys`);
  assert.equal(await page.locator("tbody tr").count(), keysBefore);

  const operatorContext = await browser.newContext({ viewport: DESKTOP });
  const admin = await signIn(operatorContext, operatorAdmin);
  await admin.goto(`${base}/console/admin/partners/${partner.partner_id}`);
  await admin.getByLabel("Name", { exact: true }).fill("Operator issued");
  await admin.getByLabel("Allowed IPs").fill("192.0.2.0/24");
  await admin.getByRole("button", { name: "Issue a new key" }).click();
  const operatorKey = (await admin.getByLabel("The new API key").textContent())?.trim() ?? "";
  const operatorRow = (await admin.locator("tr", { hasText: "Operator issued" }).textContent()) ?? "";
  assert.match(operatorRow, /full/);
  assert.match(operatorRow, /192\.0\.2\.0\/24/);
  const outside = await call(base, "GET", "/v1/profile/wallet", { key: operatorKey });
  assert.equal(outside.status, 403, "loopback is outside 192.0.2.0/24");
  assert.equal(outside.body.code, "ip_not_allowed");
  await operatorContext.close();

  const { rows } = await world.database.pool.query<{ actor_type: string; actor_id: string; name: string }>(
    `select actor_type, actor_id, details->>'name' as name from audit_log
     where action = 'api_key.created' and partner_id = $1 and details->>'name' <> '' order by audit_seq`,
    [partner.partner_id],
  );
  // Each in the name of the person signed in: the partner's owner, then the operator's admin (as the operator).
  assert.deepEqual(rows, [
    { actor_type: "user", actor_id: owner.user_id, name: "Reporting" },
    { actor_type: "operator", actor_id: operatorAdmin.user_id, name: "Operator issued" },
  ]);
});

test("in the sandbox the simulate buttons install the eSIM and use data, as a carrier would signal", async () => {
  const page = partnerPage;
  await page.goto(`${base}/console/esims/${iccid}`);
  await page.getByRole("button", { name: "Install on a device" }).click();
  await page.waitForURL(`${base}/console/esims/${iccid}`);
  await page.getByLabel("Data to use (MB)").fill("300");
  await page.getByRole("button", { name: "Use data" }).click();
  await page.getByText("300 MB of 1 GB used").waitFor();
  const esim = await call(base, "GET", `/v1/esims/${iccid}`, { key: partner.api_key });
  assert.equal(esim.body.status, "active");
  assert.equal(esim.body.usage.data_used_mb, 300);
});

test("the operator's catalog import reports rejected rows and changes nothing; pending orders and the ledger audit show", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const admin = await signIn(context, operatorAdmin);
  const before = await call(base, "GET", "/v1/esim/destination/FR/packages", { key: partner.api_key });
  assert.equal(before.status, 200);
  await admin.getByRole("link", { name: "Catalog" }).click();
  const header =
    "package_id,external_package_id,name,destination_codes,data_mb,validity_days,wholesale_minor,retail_minor";
  await admin.getByLabel(/^Catalog file/).setInputFiles({
    name: "catalog.csv",
    mimeType: "text/csv",
    buffer: Buffer.from(`${header}\nbad-1,X,Bad,FR,1024,7,-5,10\n`),
  });
  await admin.getByRole("button", { name: "Import" }).click();
  await admin.getByText("Imported, with rejected rows.").waitFor();
  const report = await admin.locator("main").innerText();
  assert.match(report, /Rejected\s+1/);
  assert.match(report, /Retired\s+0/);
  assert.match(report, /Catalog version\s+unchanged/);
  const after = await call(base, "GET", "/v1/esim/destination/FR/packages", { key: partner.api_key });
  assert.deepEqual(after.body, before.body, "the catalog is as it was");
  await admin.getByRole("link", { name: "Ledger audit" }).click();
  await admin.getByText(/Ledger OK: \d+ accounts, \d+ transfers/).waitFor();
  await admin.getByRole("link", { name: "Pending orders" }).click();
  await admin.getByText("No order has been pending that long.").waitFor();
  await context.close();
});

test("every console page passes axe-core with no serious violation, at desktop and phone width", async () => {
  const operatorContext = await browser.newContext({ viewport: DESKTOP });
  const admin = await signIn(operatorContext, operatorAdmin);
  const pages: Array<[Page, string]> = [
    [partnerPage, "/console"],
    [partnerPage, "/console/orders"],
    [partnerPage, `/console/orders/${order_id}`],
    [partnerPage, "/console/esims"],
    [partnerPage, `/console/esims/${iccid}`],
    [partnerPage, "/console/wallet"],
    [partnerPage, "/console/keys"],
    [admin, "/console/admin"],
    [admin, `/console/admin/partners/${partner.partner_id}`],
    [admin, "/console/admin/orders?older_than_minutes=0"],
    [admin, "/console/admin/catalog"],
    [admin, "/console/admin/ledger"],
  ];
  const signInTab = await browser.newPage();
  const found: string[] = [];
  for (const viewport of [DESKTOP, PHONE]) {
    await signInTab.setViewportSize(viewport);
    await signInTab.goto(`${base}/console/sign-in`);
    for (const v of await seriousViolations(signInTab))
      found.push(`sign-in ${viewport.width}px: ${v.id} ${v.help}`);
    for (const [page, url] of pages) {
      await page.setViewportSize(viewport);
      const answer = await page.goto(`${base}${url}`);
      assert.equal(answer?.status(), 200, url);
      for (const v of await seriousViolations(page)) {
        found.push(
          `${url} ${viewport.width}px: ${v.id} ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`,
        );
      }
      // Phone width: nothing wider than the screen but the tables, which scroll inside their region.
      const overflow = (await page.evaluate(
        "document.documentElement.scrollWidth - window.innerWidth",
      )) as number;
      assert.ok(overflow <= 0, `${url} at ${viewport.width}px overflows by ${overflow}px`);
    }
  }
  await partnerPage.setViewportSize(DESKTOP);
  await signInTab.close();
  await operatorContext.close();
  assert.deepEqual(found, []);
});

test("idle, expired, signed-out sessions are refused; an operator person's session does not hang on ADMIN_TOKEN", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await signIn(context, owner);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.content())?.[1];
  assert.ok(csrf);
  const age = (column: string, interval: string, session_id: string) =>
    world.database.pool.query(
      `update console_sessions set ${column} = now() - interval '${interval}' where session_hash = $1`,
      [stored(session_id)],
    );
  // Idle: no request for longer than CONSOLE_IDLE_MINUTES (30 by default).
  await age("last_seen_at", "31 minutes", await sessionCookie(context, "console_partner"));
  await page.goto(`${base}/console/wallet`);
  assert.equal(page.url(), `${base}/console/sign-in?ended=1`);
  const refused = await context.request.post(`${base}/console/keys`, {
    form: { _csrf: csrf },
    headers: { origin: base },
  });
  assert.equal(refused.status(), 401, "a change on an ended session is refused");

  // Absolute: past CONSOLE_SESSION_HOURS since sign-in however busy.
  const again = await signIn(context, owner);
  await age("expires_at", "1 second", await sessionCookie(context, "console_partner"));
  await again.goto(`${base}/console`);
  assert.equal(again.url(), `${base}/console/sign-in?ended=1`);

  // Sign-out deletes the session: the old cookie is worth nothing afterwards.
  const third = await signIn(context, owner);
  const value = await sessionCookie(context, "console_partner");
  await third.getByRole("button", { name: "Sign out" }).click();
  await third.getByText("You are signed out.").waitFor();
  await context.addCookies([{ name: "console_partner", value, url: `${base}/console` }]);
  await third.goto(`${base}/console`);
  assert.equal(third.url(), `${base}/console/sign-in?ended=1`);
  const { rows } = await world.database.pool.query("select 1 from console_sessions where session_hash = $1", [
    stored(value),
  ]);
  assert.equal(rows.length, 0, "sign-out deleted the session's row");
  await context.close();

  // ADMIN_TOKEN is for the operator API only: an operator person's session is theirs, and a process
  // started with another token (the same database; cookies do not depend on the port) takes it.
  const rotated = await world.startService({ ADMIN_TOKEN: "rotated-admin-token-0123456789" });
  const operator = await browser.newContext({ viewport: DESKTOP });
  const admin = await signIn(operator, operatorAdmin);
  await admin.goto(`${rotated.url}/console/admin`);
  assert.equal(
    admin.url(),
    `${rotated.url}/console/admin`,
    "another token's process takes the person's session",
  );
  await operator.close();
});

test("the session cookie is Secure and __Host- when the console is reached by a name other than localhost", async () => {
  const { port } = new URL(base);
  const answer = await new Promise<{ status: number; cookie: string }>((resolve, reject) => {
    const body = new URLSearchParams({ email: owner.email, password: owner.password }).toString();
    const sent = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/console/sign-in",
        headers: {
          host: `console.example.com:${port}`,
          origin: `https://console.example.com:${port}`,
          "content-type": "application/x-www-form-urlencoded",
          "content-length": Buffer.byteLength(body),
        },
      },
      (response) => {
        response.resume();
        resolve({ status: response.statusCode ?? 0, cookie: String(response.headers["set-cookie"] ?? "") });
      },
    );
    sent.on("error", reject);
    sent.end(body);
  });
  assert.equal(answer.status, 303);
  assert.match(
    answer.cookie,
    /^__Host-console_partner=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/,
  );
});
