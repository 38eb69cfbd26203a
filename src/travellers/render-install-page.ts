// The traveller's install page (contract "Travellers"), as HTML: one self-contained document that
// asks nothing of anyone else. Its CSS is inline (allowed by its hash in the CSP, not by
// 'unsafe-inline'), its images are data: URIs (the QR code, the brand's logo), it loads no script,
// font or stylesheet, and it links only to the phone's own installers and the brand's support.
// Laid out for a phone first (one column, no fixed widths), in the language's direction with CSS
// logical properties, so the Arabic page mirrors without a second stylesheet.
import { createHash } from "node:crypto";
import type { InstallPage } from "../esims/install-page.ts";
import type { Brand } from "../shared/brand.ts";
import { LANGUAGE_NAMES, SUPPORTED_LANGUAGES, type Translator, textDirection } from "./translate.ts";
import {
  accentColor,
  androidSteps,
  brandName,
  escapeHtml as e,
  type InstallSteps,
  iphoneSteps,
  supportLinks,
} from "./traveller-view.ts";

export type RenderedPage = {
  html: string;
  /** The page's Content-Security-Policy: its own inline style by hash, data: images, nothing else. */
  csp: string;
};

// System fonts only (nothing is downloaded): the Noto families name the Arabic and CJK faces a
// Linux machine has; phones and desktops pick their own for each script.
const FONTS =
  'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Naskh Arabic", "Noto Sans Arabic", ' +
  '"Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK KR", "Hiragino Sans", "PingFang SC", ' +
  '"Apple SD Gothic Neo", Tahoma, sans-serif';

function styles(accent: string): string {
  return `:root{--accent:${accent};color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font-family:${FONTS};font-size:16px;line-height:1.55;color:#1a1a1a;background:#f4f5f7;overflow-wrap:anywhere}
header{background:var(--accent);color:#fff;padding:12px 16px;display:flex;align-items:center;gap:12px}
header img{max-height:40px;width:auto;background:#fff;border-radius:4px;padding:2px}
header .name{font-weight:700;font-size:18px}
main{max-width:40rem;margin:0 auto;padding:8px 16px 24px}
h1{font-size:24px;line-height:1.25;margin:16px 0 4px}
h2{font-size:19px;line-height:1.3;margin:0 0 8px;color:var(--accent)}
.package{margin:0 0 12px;color:#404040;font-weight:600}
section{background:#fff;border-radius:8px;padding:16px;margin:12px 0;border:1px solid #dfe1e6}
.buttons{display:flex;flex-direction:column;gap:8px;margin:0}
.button{display:block;text-align:center;background:var(--accent);color:#fff;text-decoration:none;font-weight:600;padding:12px 16px;border-radius:6px}
.button:focus-visible,a:focus-visible{outline:3px solid #1a1a1a;outline-offset:2px}
.qr{display:block;margin:8px auto;width:240px;max-width:100%;height:auto;image-rendering:pixelated}
code{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,"Noto Sans Mono",monospace;font-size:14px;background:#f0f1f4;padding:2px 4px;border-radius:4px;word-break:break-all}
.codes{margin:8px 0 0}
.codes dt{font-weight:600;margin-top:8px}
.codes dd{margin:0}
ol{padding-inline-start:24px;margin:0}
li{margin:4px 0}
.notice{background:#fff4e5;border:1px solid #b35c00;color:#1a1a1a;border-radius:8px;padding:12px 16px}
.status{font-weight:600;margin:0 0 8px}
.facts{margin:0;padding:0;list-style:none}
a{color:var(--accent)}
footer{max-width:40rem;margin:0 auto;padding:0 16px 32px}
footer h2{font-size:16px;color:#404040}
.languages{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px 12px}
.languages a,.languages span{display:inline-block;padding:6px 2px}
.languages span{font-weight:700}`;
}

export type InstallPageView = {
  page: InstallPage;
  t: Translator;
  brand: Brand;
  /** The QR code PNG of the LPA string; null for a refunded eSIM (nothing to install). */
  qr_png: Buffer | null;
};

export function renderInstallPage(view: InstallPageView): RenderedPage {
  const { page, t, brand } = view;
  const installable = !page.refunded && page.esim.status === "released";
  const body = [
    `<h1>${e(t.t("page.heading"))}</h1>`,
    `<p class="package">${e(page.package_name)}</p>`,
    page.refunded ? `<p class="notice" role="status">${e(t.t("page.refunded"))}</p>` : "",
    installable ? installSections(view) : "",
    page.refunded ? "" : planSection(view),
    page.refunded || installable ? "" : `<p>${e(t.t("page.keep_notice"))}</p>`,
    supportSection(t, brand),
  ].join("\n");
  return documentOf(t, brand, t.t("page.title", { package: page.package_name }), body);
}

/** The answer for a token that names no page (never found, or revoked). */
export function renderMissingPage(t: Translator, brand: Brand): RenderedPage {
  const body = `<h1>${e(t.t("page.not_found_title"))}</h1>\n<p>${e(t.t("page.not_found"))}</p>`;
  return documentOf(t, brand, t.t("page.not_found_title"), body, false);
}

function documentOf(t: Translator, brand: Brand, title: string, main: string, switcher = true): RenderedPage {
  const css = styles(accentColor(brand));
  const hash = createHash("sha256").update(css).digest("base64");
  const name = brandName(brand);
  const logo =
    brand.logo_png === null
      ? ""
      : `<img src="data:image/png;base64,${brand.logo_png.toString("base64")}" alt="">`;
  const html = `<!doctype html>
<html lang="${e(t.language)}" dir="${t.dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${e(title)}</title>
<style>${css}</style>
</head>
<body>
<header>${logo}<span class="name">${e(name)}</span></header>
<main>
${main}
</main>
${switcher ? languageSwitcher(t) : ""}
</body>
</html>
`;
  const csp = [
    "default-src 'none'",
    `style-src 'sha256-${hash}'`,
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return { html, csp };
}

function installSections(view: InstallPageView): string {
  const { page, t } = view;
  const kit = page.esim.installation;
  const qr =
    view.qr_png === null
      ? ""
      : `<img class="qr" src="data:image/png;base64,${view.qr_png.toString("base64")}" width="240" height="240" alt="${e(t.t("qr_alt"))}">`;
  return `<p>${e(t.t("page.intro"))}</p>
<section aria-labelledby="one-tap">
<h2 id="one-tap">${e(t.t("links.heading"))}</h2>
<p class="buttons"><a class="button" href="${e(kit.ios_install_url)}">${e(t.t("links.iphone"))}</a>
<a class="button" href="${e(kit.android_install_url)}">${e(t.t("links.android"))}</a></p>
</section>
<section aria-labelledby="scan">
<h2 id="scan">${e(t.t("page.qr_heading"))}</h2>
<p>${e(t.t("page.qr_hint"))}</p>
${qr}
<dl class="codes">
<dt>${e(t.t("page.lpa_label"))}</dt><dd><code dir="ltr">${e(kit.qr_code)}</code></dd>
<dt>${e(t.t("details.smdp_address"))}</dt><dd><code dir="ltr">${e(kit.smdp_address)}</code></dd>
<dt>${e(t.t("details.activation_code"))}</dt><dd><code dir="ltr">${e(kit.activation_code)}</code></dd>
</dl>
</section>
${stepsSection("iphone", iphoneSteps(t))}
${stepsSection("android", androidSteps(t))}
<p>${e(t.t("page.keep_notice"))}</p>`;
}

function stepsSection(id: string, steps: InstallSteps): string {
  return `<section aria-labelledby="${id}">
<h2 id="${id}">${e(steps.heading)}</h2>
${steps.note === null ? "" : `<p>${e(steps.note)}</p>\n`}<ol>${steps.steps.map((step) => `<li>${e(step)}</li>`).join("")}</ol>
</section>`;
}

function planSection(view: InstallPageView): string {
  const { page, t } = view;
  const { esim } = page;
  const usage = esim.usage;
  const used = t.megabytes(usage.data_used_mb);
  const facts = [
    usage.data_total_mb === null
      ? t.t("usage.used_unlimited", { used })
      : t.t("usage.used_of", { used, total: t.megabytes(usage.data_total_mb) }),
    usage.data_remaining_mb === null || esim.status === "released"
      ? null
      : t.t("usage.remaining", { remaining: t.megabytes(usage.data_remaining_mb) }),
    esim.expires_at === null
      ? null
      : t.t("usage.valid_until", { date: t.dateTime(new Date(esim.expires_at)) }),
    usage.updated_at === null ? null : t.t("usage.as_of", { date: t.dateTime(new Date(usage.updated_at)) }),
  ].filter((fact) => fact !== null);
  return `<section aria-labelledby="plan">
<h2 id="plan">${e(t.t("page.plan_heading"))}</h2>
<p class="status">${e(t.t(`status.${esim.status}`))}</p>
<ul class="facts">${facts.map((fact) => `<li>${e(fact)}</li>`).join("")}</ul>
</section>`;
}

function supportSection(t: Translator, brand: Brand): string {
  const links = supportLinks(brand, t);
  if (links.length === 0) return "";
  return `<section aria-labelledby="support">
<h2 id="support">${e(t.t("support.heading"))}</h2>
<ul class="facts">${links.map((link) => `<li><a href="${e(link.href)}">${e(link.label)}</a></li>`).join("")}</ul>
</section>`;
}

/** Every language by its own name, the current one marked: `?lang=` keeps the same page. */
function languageSwitcher(t: Translator): string {
  const items = SUPPORTED_LANGUAGES.map((language) => {
    const name = e(LANGUAGE_NAMES[language]);
    return language === t.language
      ? `<li><span lang="${language}" dir="${textDirection(language)}" aria-current="page">${name}</span></li>`
      : `<li><a href="?lang=${language}" lang="${language}" dir="${textDirection(language)}" hreflang="${language}">${name}</a></li>`;
  });
  return `<footer>
<nav aria-labelledby="languages">
<h2 id="languages">${e(t.t("page.language"))}</h2>
<ul class="languages">${items.join("")}</ul>
</nav>
</footer>`;
}
