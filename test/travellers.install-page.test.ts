// The traveller's languages and install page (contract "Travellers"), end to end on the real
// service process, its carrier simulator, PostgreSQL and a real SMTP server: the submit's
// `language` is resolved and stored (Order.language), the confirmation email arrives in it with
// Content-Language, and the page at Esim.installation.install_page_url answers in the order's
// language or ?lang='s, not indexed, self-contained, with usage once installed, and a refunded
// eSIM's page says so. A revoked page stops answering.
import assert from "node:assert/strict";
import { test } from "node:test";
import PostalMime from "postal-mime";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { revokeInstallPage } from "../src/esims/install-page.ts";
import { SUPPORTED_LANGUAGES } from "../src/travellers/translate.ts";
import { runCli } from "./support/cli.ts";
import { endUser } from "./support/fixtures.ts";
import {
  balance,
  call,
  createWorld,
  type Json,
  newCart,
  newPartner,
  submit,
  waitFor,
} from "./support/world.ts";

const world = await createWorld();
const [api] = world.services.map((s) => s.url) as [string];
const context = { db: createKysely<Database>(world.database.pool), pool: world.database.pool };
const partner = await newPartner(api, 500_00);

let travellers = 0;

/** Buys an fr-1gb-7d eSIM for a new traveller asking for `language` (absent: none sent). */
async function buy(language?: string | null) {
  travellers += 1;
  const email = `traveller.${travellers}.${Date.now()}@example.com`;
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  const overrides: Json = { ...endUser({ email, first_name: "Aiko" }) };
  if (language !== undefined) overrides.language = language;
  const answer = await submit(api, partner.api_key, cart.cart_key, overrides);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const order = answer.body;
  const iccid = order.esim_iccid as string;
  const esim = (await call(api, "GET", `/v1/esims/${iccid}`, { key: partner.api_key })).body;
  return { order, iccid, email, esim, page_url: esim.installation.install_page_url as string };
}

/** The page as a traveller's browser gets it (its address's path, on the service's own port). */
async function page(url: string, lang?: string) {
  const path = new URL(url).pathname + (lang === undefined ? "" : `?lang=${encodeURIComponent(lang)}`);
  const response = await fetch(`${api}${path}`);
  return { status: response.status, headers: response.headers, html: await response.text() };
}

function htmlTag(html: string): { lang: string; dir: string } {
  const match = /<html lang="([^"]+)" dir="(ltr|rtl)">/.exec(html);
  assert.ok(match, "the document says its language and direction");
  return { lang: match[1]!, dir: match[2]! };
}

test("a Japanese traveller's email arrives in Japanese over SMTP, with Content-Language and <html lang dir>", async () => {
  const bought = await buy("ja-JP");
  assert.equal(bought.order.language, "ja", "ja-JP falls back to ja");
  const received = await waitFor("the confirmation email", async () =>
    world.smtp.messages.find((message) => message.envelope.rcpt_to.includes(bought.email)),
  );
  const email = await PostalMime.parse(received.raw);
  const header = (name: string) => email.headers.find((h) => h.key === name)?.value;
  assert.equal(header("content-language"), "ja");
  assert.equal(email.subject, `eSIMの準備ができました：${bought.esim.bundles[0].name}`);
  const text = email.text ?? "";
  const html = email.html ?? "";
  assert.match(html, /<html lang="ja" dir="ltr">/);
  // The plain text is complete on its own: greeting, the codes, both links, the page, both phones' steps.
  for (const expected of [
    "Aiko 様",
    bought.esim.installation.qr_code,
    bought.esim.installation.activation_code,
    bought.esim.installation.ios_install_url,
    bought.esim.installation.android_install_url,
    bought.page_url,
    "iPhoneにインストールする",
    "Androidにインストールする",
    "「設定」>「モバイル通信」>「eSIMを追加」を開きます。",
  ]) {
    assert.ok(text.includes(expected), `the text part has ${expected}`);
  }
  assert.ok(html.includes(`href="${bought.page_url}"`), "the HTML links the install page");
  const qr = email.attachments.find((part) => part.mimeType === "image/png");
  assert.ok(qr, "the QR code is an inline part");
  assert.equal(qr.disposition, "inline");
});

test("pt-BR falls back to pt, an unknown language to English, none to English; a malformed tag is refused and charges nothing", async () => {
  assert.equal((await buy("pt-BR")).order.language, "pt");
  assert.equal((await buy("xx")).order.language, "en");
  assert.equal((await buy(null)).order.language, "en");
  assert.equal((await buy()).order.language, "en");
  const before = await balance(api, partner.api_key);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  for (const language of ["en_US", "english please", "e", "en-"]) {
    const refused = await submit(api, partner.api_key, cart.cart_key, { language });
    assert.equal(refused.status, 400, `${language}: ${JSON.stringify(refused.body)}`);
    assert.equal(refused.body.code, "invalid_request");
  }
  assert.equal(await balance(api, partner.api_key), before, "nothing charged");
  const pt = await buy("pt-BR");
  const fetched = await call(api, "GET", `/v1/orders/${pt.order.orderID}`, { key: partner.api_key });
  assert.equal(fetched.body.language, "pt", "GET /orders says the language used too");
});

test("the install page: the order's language, not indexed, no sign-in, nothing from elsewhere, every install route", async () => {
  const bought = await buy("es");
  assert.match(bought.page_url, /\/install\/[0-9a-f]{64}$/, "an unguessable token of 256 bits");
  const answer = await page(bought.page_url);
  assert.equal(answer.status, 200);
  assert.deepEqual(htmlTag(answer.html), { lang: "es", dir: "ltr" });
  assert.equal(answer.headers.get("x-robots-tag"), "noindex, nofollow");
  assert.match(answer.html, /<meta name="robots" content="noindex, nofollow">/);
  assert.equal(answer.headers.get("cache-control"), "no-store");
  assert.equal(answer.headers.get("content-language"), "es");
  assert.equal(answer.headers.get("referrer-policy"), "no-referrer");
  const csp = answer.headers.get("content-security-policy") ?? "";
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/=]+'/);
  assert.match(csp, /img-src data:/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  // Nothing loaded from anywhere: no script, no stylesheet link, every image a data: URI.
  assert.doesNotMatch(answer.html, /<script|<link /);
  for (const [, src] of answer.html.matchAll(/<img [^>]*src="([^"]+)"/g))
    assert.match(src!, /^data:image\/png;base64,/);
  const { installation } = bought.esim;
  for (const expected of [
    installation.qr_code,
    installation.ios_install_url,
    installation.android_install_url,
    "Instalar en iPhone",
    "Instalar en Android",
    "Abre Ajustes &gt; Datos móviles (o Celular) &gt; Añadir eSIM.",
    "Todavía no está instalada.",
  ]) {
    assert.ok(answer.html.includes(expected), `the page has ${expected}`);
  }
});

test("?lang= gives twelve languages twelve different documents, each with its lang, Arabic right to left", async () => {
  const bought = await buy();
  const documents = new Map<string, string>();
  for (const language of SUPPORTED_LANGUAGES) {
    const answer = await page(bought.page_url, language);
    assert.equal(answer.status, 200);
    assert.deepEqual(htmlTag(answer.html), { lang: language, dir: language === "ar" ? "rtl" : "ltr" });
    assert.equal(answer.headers.get("content-language"), language);
    documents.set(language, answer.html);
  }
  assert.equal(documents.size, 12);
  assert.equal(new Set(documents.values()).size, 12, "twelve different documents");
  assert.match(documents.get("ar")!, /التثبيت على iPhone/);
  assert.match(documents.get("ja")!, /iPhoneにインストールする/);
  assert.match(documents.get("zh-Hans")!, /在 iPhone 上安装/);
  assert.deepEqual(htmlTag((await page(bought.page_url, "pt-BR")).html), { lang: "pt", dir: "ltr" });
  assert.deepEqual(htmlTag((await page(bought.page_url, "xx")).html), { lang: "en", dir: "ltr" });
  assert.deepEqual(htmlTag((await page(bought.page_url, "ar-EG")).html), { lang: "ar", dir: "rtl" });
});

test("once installed and used, the page shows the usage and validity; a refunded eSIM's page says so (200)", async () => {
  const bought = await buy("en");
  for (const body of [{ event: "install" }, { event: "use_data", data_mb: 300 }]) {
    const simulated = await call(api, "POST", `/v1/sandbox/esims/${bought.iccid}/simulate`, {
      key: partner.api_key,
      body,
    });
    assert.equal(simulated.status, 200, JSON.stringify(simulated.body));
  }
  const used = await page(bought.page_url);
  assert.match(used.html, /300 MB used of 1 GB/);
  assert.match(used.html, /724 MB left/);
  assert.match(used.html, /Valid until /);
  assert.match(used.html, /Active: your eSIM is connected\./);
  assert.ok(!used.html.includes('class="qr"'), "an installed eSIM is not offered for installation again");

  const fresh = await buy("de");
  const refunded = await call(api, "POST", `/v1/orders/${fresh.order.orderID}/refund`, {
    key: partner.api_key,
  });
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  const after = await page(fresh.page_url);
  assert.equal(after.status, 200);
  assert.deepEqual(htmlTag(after.html), { lang: "de", dir: "ltr" });
  assert.match(after.html, /Diese eSIM wurde erstattet und storniert/);
  assert.ok(!after.html.includes(fresh.esim.installation.activation_code), "no activation code left to use");
  assert.ok(!after.html.includes("data:image/png"), "no QR code");
});

test("an unknown or malformed token answers 404, a revoked page stops answering and its new address works", async () => {
  const missing = await fetch(`${api}/install/${"0".repeat(64)}`);
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get("x-robots-tag"), "noindex, nofollow");
  assert.match(await missing.text(), /Page not found/);
  assert.equal((await fetch(`${api}/install/not-a-token?lang=ja`)).status, 404);
  const refused = await fetch(`${api}/install/${"0".repeat(64)}?utm_source=mail`);
  assert.equal(refused.status, 400, "an unknown query parameter is refused, as on every route");

  const bought = await buy("fr");
  assert.equal((await page(bought.page_url)).status, 200);
  const revoked = await revokeInstallPage(
    context,
    partner.partner_id,
    bought.iccid,
    new URL(bought.page_url).origin,
  );
  assert.notEqual(revoked.install_page_url, bought.page_url);
  assert.equal((await page(bought.page_url)).status, 404, "the old address no longer answers");
  const renewed = await page(revoked.install_page_url);
  assert.equal(renewed.status, 200);
  assert.deepEqual(htmlTag(renewed.html), { lang: "fr", dir: "ltr" });
  // The service process hears of the change by NOTIFY (esim_changed) and drops its cached Esim.
  await waitFor("the Esim to give the new address", async () => {
    const esim = (await call(api, "GET", `/v1/esims/${bought.iccid}`, { key: partner.api_key })).body;
    return esim.installation.install_page_url === revoked.install_page_url;
  });
  await assert.rejects(
    revokeInstallPage(context, "ptr_someone_else", bought.iccid, "http://localhost"),
    /No eSIM/,
    "only the eSIM's own partner revokes its page",
  );
});

test("the operator revokes a page from the CLI: the old address 404s, the new one printed answers", async () => {
  const bought = await buy("ko");
  const cli = (args: string[]) => runCli(args, { DATABASE_URL: world.database.url, APP_ENV: "sandbox" });
  const run = await cli(["esims", "revoke-install-page", bought.iccid, "--json"]);
  assert.equal(run.code, 0, run.stderr);
  const answer = JSON.parse(run.stdout);
  assert.equal(answer.partner_id, partner.partner_id);
  assert.equal((await page(bought.page_url)).status, 404);
  const renewed = await page(answer.install_page_url);
  assert.equal(renewed.status, 200);
  assert.deepEqual(htmlTag(renewed.html), { lang: "ko", dir: "ltr" });
  const refused = await cli(["esims", "revoke-install-page", "8901000000000000002"]);
  assert.notEqual(refused.code, 0, "an unknown eSIM is refused");
});
