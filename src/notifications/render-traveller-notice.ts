// The traveller's notices (contract "Travellers": `traveller_usage_emails`): 80% of the data used,
// and the plan ending within 24 hours, in the order's language and the partner's brand. No I/O and
// no clock, as the confirmation: the same notice renders the same message. The plain text is
// complete on its own; the HTML says its language and direction (<html lang dir>). The brand's logo,
// when set, is the caller's inline part (logoAttachment, cid LOGO_CID), never a remote image.
import type { Brand } from "../shared/brand.ts";
import { type Translator, translator } from "../travellers/translate.ts";
import { accentColor, brandName, escapeHtml, supportLinks } from "../travellers/traveller-view.ts";
import { LOGO_CID } from "./render-confirmation-email.ts";

export type TravellerNotice = {
  kind: "usage_80" | "expires_24h";
  language: string | null;
  brand: Brand;
  first_name: string;
  package_name: string;
  iccid: string;
  data_used_mb: number;
  data_mb: number | null;
  expires_at: string | null /* RFC 3339 */;
  top_up_url: string | null /* already with {iccid} replaced */;
  install_page_url: string | null;
  unsubscribe_url: string | null;
};

/** What the 24-hour notice counts down from: it goes out at most this long before the end. */
const EXPIRY_NOTICE_HOURS = 24;

export function renderTravellerNotice(n: TravellerNotice): {
  subject: string;
  text: string;
  html: string;
  language: string /* the resolved tag, for Content-Language */;
} {
  const t = translator(n.language);
  const subject =
    n.kind === "usage_80"
      ? t.t("notice.usage_80.subject", { ratio: usedRatio(n), package: n.package_name })
      : t.t("notice.expires_24h.subject", { hours: EXPIRY_NOTICE_HOURS, package: n.package_name });
  const lines = bodyLines(t, n);
  const links = actionLinks(t, n);
  return {
    subject,
    text: renderText(t, n, lines, links),
    html: renderHtml(t, n, subject, lines, links),
    language: t.language,
  };
}

/** The share of the data used, floored to a whole percent: "80%" is never said of 79.6%. */
function usedRatio(n: TravellerNotice): number {
  if (n.data_mb === null || n.data_mb <= 0) return 0;
  return Math.floor((n.data_used_mb / n.data_mb) * 100) / 100;
}

function bodyLines(t: Translator, n: TravellerNotice): string[] {
  const used = t.megabytes(n.data_used_mb);
  const usage =
    n.data_mb === null
      ? t.t("usage.used_unlimited", { used })
      : t.t("usage.used_of", { used, total: t.megabytes(n.data_mb) });
  const validity =
    n.expires_at === null ? [] : [t.t("usage.valid_until", { date: t.dateTime(new Date(n.expires_at)) })];
  if (n.kind === "usage_80") {
    const sentence =
      n.data_mb === null
        ? usage
        : t.t("notice.usage_80.body", { used, total: t.megabytes(n.data_mb), package: n.package_name });
    return [sentence, ...validity];
  }
  const ends =
    n.expires_at === null
      ? []
      : [
          t.t("notice.expires_24h.body", {
            package: n.package_name,
            date: t.dateTime(new Date(n.expires_at)),
          }),
        ];
  return [...ends, usage];
}

type Link = { label: string; url: string; primary: boolean };

function actionLinks(t: Translator, n: TravellerNotice): Link[] {
  const links: Link[] = [];
  if (n.top_up_url !== null) links.push({ label: t.t("notice.top_up"), url: n.top_up_url, primary: true });
  if (n.install_page_url !== null) {
    links.push({ label: t.t("notice.install_page"), url: n.install_page_url, primary: false });
  }
  return links;
}

function renderText(t: Translator, n: TravellerNotice, lines: string[], links: Link[]): string {
  const support = supportLinks(n.brand, t);
  return [
    t.t("email.greeting", { name: n.first_name }),
    "",
    ...lines,
    "",
    ...links.flatMap((link) => [`${link.label}:`, `  ${link.url}`, ""]),
    t.t("notice.iccid", { iccid: n.iccid }),
    "",
    ...(support.length === 0
      ? []
      : [t.t("support.heading"), ...support.map((link) => `  ${link.label}: ${link.shown}`), ""]),
    t.t("signature", { brand: brandName(n.brand) }),
    ...(n.unsubscribe_url === null ? [] : ["", `${t.t("notice.unsubscribe")}: ${n.unsubscribe_url}`]),
    "",
  ].join("\n");
}

function renderHtml(
  t: Translator,
  n: TravellerNotice,
  subject: string,
  lines: string[],
  links: Link[],
): string {
  const e = escapeHtml;
  const accent = accentColor(n.brand);
  const name = brandName(n.brand);
  const align = t.dir === "rtl" ? "right" : "left";
  const logo =
    n.brand.logo_png === null
      ? ""
      : `<p><img src="cid:${e(LOGO_CID)}" alt="${e(name)}" style="max-height:48px"></p>\n`;
  const actions = links
    .map((link) =>
      link.primary
        ? `<p><a href="${e(link.url)}" style="display:inline-block;padding:10px 16px;background:${accent};color:#ffffff;text-decoration:none;border-radius:4px">${e(link.label)}</a></p>`
        : `<p><a href="${e(link.url)}" style="color:${accent}">${e(link.label)}</a></p>`,
    )
    .join("\n");
  const support = supportLinks(n.brand, t);
  const contacts =
    support.length === 0
      ? ""
      : `<p>${e(t.t("support.heading"))} ${support
          .map((link) => `<a href="${e(link.href)}" style="color:${accent}">${e(link.label)}</a>`)
          .join(" · ")}</p>\n`;
  const unsubscribe =
    n.unsubscribe_url === null
      ? ""
      : `<p style="font-size:13px;color:#595959"><a href="${e(n.unsubscribe_url)}" style="color:#595959">${e(t.t("notice.unsubscribe"))}</a></p>\n`;
  return `<!doctype html>
<html lang="${e(t.language)}" dir="${t.dir}">
<head><meta charset="utf-8"><title>${e(subject)}</title></head>
<body dir="${t.dir}" style="font-family:Arial,Helvetica,sans-serif;line-height:1.5;color:#1a1a1a;max-width:600px;text-align:${align}">
${logo}<p>${e(t.t("email.greeting", { name: n.first_name }))}</p>
${lines.map((line) => `<p>${e(line)}</p>`).join("\n")}
${actions}
<p style="color:#595959">${e(t.t("notice.iccid", { iccid: n.iccid }))}</p>
${contacts}<p>${e(t.t("signature", { brand: name }))}</p>
${unsubscribe}</body>
</html>
`;
}
