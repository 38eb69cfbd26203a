// The traveller's emails in every supported language (render-confirmation-email.ts,
// render-traveller-notice.ts): each language renders its own subject and bodies, the HTML says its
// language and direction, the plain text stands on its own (every link and code in it), the brand's
// name, colour, logo (an inline part) and support contacts are used, and an unsupported language
// falls back as the page's does.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LOGO_CID, renderConfirmationEmail } from "../src/notifications/render-confirmation-email.ts";
import { renderTravellerNotice, type TravellerNotice } from "../src/notifications/render-traveller-notice.ts";
import { type Brand, DEFAULT_BRAND } from "../src/shared/brand.ts";
import { SUPPORTED_LANGUAGES } from "../src/travellers/translate.ts";

const BRAND: Brand = {
  display_name: "Wanderlust",
  accent_color: "#0b6e4f",
  logo_png: Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"),
  support_email: "help@wanderlust.example",
  support_url: "https://wanderlust.example/help",
  email_from_name: null,
  reply_to: null,
};

const ORDER = {
  order_id: "ord_lang",
  first_name: "Aiko",
  package_name: "Japan 5 GB 30 days",
  iccid: "8901000000000000001",
  smdp_address: "smdp.esim.example",
  activation_code: "K2-ABC-123",
  start_date: "2026-12-01",
  install_page_url: `https://esim.example/install/${"a".repeat(64)}`,
};

function notice(overrides: Partial<TravellerNotice> = {}): TravellerNotice {
  return {
    kind: "usage_80",
    language: "en",
    brand: BRAND,
    first_name: "Aiko",
    package_name: "Japan 5 GB 30 days",
    iccid: "8901000000000000001",
    data_used_mb: 4200,
    data_mb: 5120,
    expires_at: "2026-12-31T09:30:00Z",
    top_up_url: "https://wanderlust.example/top-up/8901000000000000001",
    install_page_url: `https://esim.example/install/${"b".repeat(64)}`,
    unsubscribe_url: "https://wanderlust.example/unsubscribe?t=x",
    ...overrides,
  };
}

function htmlTag(html: string): string {
  return /<html lang="[^"]+" dir="(?:ltr|rtl)">/.exec(html)?.[0] ?? "none";
}

test("the confirmation in twelve languages: twelve different emails, each with its lang and direction", async () => {
  const subjects = new Set<string>();
  const htmls = new Set<string>();
  for (const language of SUPPORTED_LANGUAGES) {
    const email = await renderConfirmationEmail({ ...ORDER, language }, BRAND);
    assert.equal(email.language, language);
    assert.equal(htmlTag(email.html), `<html lang="${language}" dir="${language === "ar" ? "rtl" : "ltr"}">`);
    subjects.add(email.subject);
    htmls.add(email.html);
    // The plain text alone is enough to install: codes, links, the page, the steps, the contacts.
    for (const expected of [
      ORDER.activation_code,
      ORDER.smdp_address,
      `LPA:1$${ORDER.smdp_address}$${ORDER.activation_code}`,
      "https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=",
      "https://esimsetup.android.com/esim_qrcode_provisioning?carddata=",
      ORDER.install_page_url,
      BRAND.support_email!,
      BRAND.support_url!,
      "Wanderlust",
      "1. ",
      "4. ",
    ]) {
      assert.ok(email.text.includes(expected), `${language}: the text has ${expected}`);
    }
    assert.ok(email.html.includes(`src="cid:${LOGO_CID}"`), `${language}: the logo is shown inline`);
    assert.ok(email.html.includes("#0b6e4f"), `${language}: in the brand's colour`);
    assert.deepEqual(
      email.attachments.map((part) => part.cid),
      ["esim-qr-code@esim.example", LOGO_CID],
    );
  }
  assert.equal(subjects.size, 12);
  assert.equal(htmls.size, 12);
});

test("the confirmation falls back from pt-BR to pt and from xx to English; no logo, no logo part", async () => {
  const pt = await renderConfirmationEmail({ ...ORDER, language: "pt-BR" }, DEFAULT_BRAND);
  assert.equal(pt.language, "pt");
  assert.match(pt.subject, /Seu eSIM está pronto/);
  assert.match(pt.text, /em 1 de dezembro de 2026/, "the start date as Portuguese writes it");
  const xx = await renderConfirmationEmail({ ...ORDER, language: "xx" }, DEFAULT_BRAND);
  assert.equal(xx.language, "en");
  assert.equal(xx.subject, "Your eSIM is ready: Japan 5 GB 30 days");
  assert.deepEqual(
    xx.attachments.map((part) => part.cid),
    ["esim-qr-code@esim.example"],
  );
  assert.match(xx.text, /The eSIM Orders team/, "the service's own name without a brand");
});

test("the 80% notice in every language: the share, the amounts, the top-up and page links, unsubscribe", () => {
  const subjects = new Set<string>();
  for (const language of SUPPORTED_LANGUAGES) {
    const rendered = renderTravellerNotice(notice({ language }));
    assert.equal(rendered.language, language);
    assert.equal(
      htmlTag(rendered.html),
      `<html lang="${language}" dir="${language === "ar" ? "rtl" : "ltr"}">`,
    );
    assert.match(rendered.subject, /82/, `${language}: 4200 of 5120 MB is 82%`);
    subjects.add(rendered.subject);
    for (const expected of [
      notice().top_up_url!,
      notice().install_page_url!,
      notice().unsubscribe_url!,
      notice().iccid,
    ]) {
      assert.ok(rendered.text.includes(expected), `${language}: the text has ${expected}`);
      assert.ok(rendered.html.includes(expected), `${language}: the html has ${expected}`);
    }
  }
  assert.equal(subjects.size, 12);
  const en = renderTravellerNotice(notice());
  assert.equal(en.subject, "You have used 82% of your data: Japan 5 GB 30 days");
  assert.match(en.text, /You have used 4.1 GB of the 5 GB in your Japan 5 GB 30 days plan\./);
});

test("the 24-hour notice counts hours in the language's plural, dates in UTC; links left out when null", () => {
  const expiring = notice({
    kind: "expires_24h",
    top_up_url: null,
    unsubscribe_url: null,
    install_page_url: null,
  });
  const en = renderTravellerNotice(expiring);
  assert.equal(en.subject, "Your eSIM plan ends within 24 hours: Japan 5 GB 30 days");
  assert.match(en.text, /ends on December 31, 2026 at 09:30 AM UTC/);
  for (const left_out of ["/top-up/", "/install/", "unsubscribe"]) {
    assert.ok(
      !en.text.includes(left_out) && !en.html.includes(left_out),
      `no ${left_out} link when none is given`,
    );
  }
  const ar = renderTravellerNotice({ ...expiring, language: "ar" });
  assert.match(ar.subject, /24 ساعة/);
  assert.match(ar.html, /dir="rtl"/);
  const ja = renderTravellerNotice({ ...expiring, language: "ja" });
  assert.match(ja.subject, /24時間以内に終了します/);
  const unlimited = renderTravellerNotice(notice({ data_mb: null, language: "de" }));
  assert.match(unlimited.text, /unbegrenztes Datenvolumen/);
  assert.equal(renderTravellerNotice(notice({ language: "pt-BR" })).language, "pt");
  assert.equal(renderTravellerNotice(notice({ language: null })).language, "en");
});
