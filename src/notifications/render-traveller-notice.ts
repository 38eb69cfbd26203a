// The optional notices to a traveller (issue 35, PUT /v1/profile/notifications
// traveller_usage_emails): 80% of a bundle's data used, and 24 hours before it expires. English
// here; the localized version of this file keeps the same signature. No I/O and no clock: a notice
// sent again says what it said the first time. The plain text is complete on its own (every link
// written out), the HTML the same words with the partner's brand.
import { BRAND_LOGO_CID, type Brand } from "../shared/brand.ts";
import { escapeHtml } from "./render-confirmation-email.ts";

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

export function renderTravellerNotice(n: TravellerNotice): {
  subject: string;
  text: string;
  html: string;
  language: string /* the resolved tag, for Content-Language */;
} {
  const words = wordsOf(n);
  return { subject: words.subject, text: renderText(n, words), html: renderHtml(n, words), language: "en" };
}

type Words = { subject: string; lead: string; advice: string };

function wordsOf(n: TravellerNotice): Words {
  if (n.kind === "usage_80") {
    const used = n.data_mb === null ? "" : ` (${Math.floor((n.data_used_mb * 100) / n.data_mb)}%)`;
    return {
      subject: `You have used most of your data: ${n.package_name}`,
      lead:
        `You have used ${amount(n.data_used_mb)}${n.data_mb === null ? "" : ` of ${amount(n.data_mb)}`}${used} ` +
        `of your eSIM plan ${n.package_name}.`,
      advice: "When the data runs out, the eSIM stops connecting until you add more.",
    };
  }
  return {
    subject: `Your eSIM plan ends within 24 hours: ${n.package_name}`,
    lead: `Your eSIM plan ${n.package_name} ends on ${when(n.expires_at)}.`,
    advice: "After that the eSIM stops connecting until you add a new plan.",
  };
}

/** MB below a GB, GB with one decimal from there (1 GB = 1024 MB, as the catalog counts). */
function amount(mb: number): string {
  return mb < 1024 ? `${mb} MB` : `${(Math.round((mb / 1024) * 10) / 10).toString()} GB`;
}

/** "2026-11-28 14:05 UTC": the traveller's time zone is unknown, so UTC, said so. */
function when(expires_at: string | null): string {
  if (expires_at === null) return "the end of its validity";
  const date = new Date(expires_at);
  return `${date.toISOString().slice(0, 10)} at ${date.toISOString().slice(11, 16)} UTC`;
}

function senderName(brand: Brand): string | null {
  return brand.display_name ?? brand.email_from_name;
}

function helpLines(brand: Brand): string[] {
  return [
    ...(brand.support_email ? [`Questions? Write to ${brand.support_email}`] : []),
    ...(brand.support_url ? [`Help: ${brand.support_url}`] : []),
  ];
}

function renderText(n: TravellerNotice, words: Words): string {
  const sender = senderName(n.brand);
  return [
    `Hello ${n.first_name},`,
    "",
    words.lead,
    words.advice,
    "",
    ...(n.top_up_url ? [`Top up here: ${n.top_up_url}`, ""] : []),
    ...(n.install_page_url ? [`Your eSIM's page: ${n.install_page_url}`, ""] : []),
    `ICCID: ${n.iccid}`,
    ...helpLines(n.brand),
    "",
    ...(sender ? [sender, ""] : []),
    ...(n.unsubscribe_url
      ? [
          `You get these notices about data and validity. To stop them for this eSIM: ${n.unsubscribe_url}`,
          "",
        ]
      : []),
  ].join("\n");
}

function renderHtml(n: TravellerNotice, words: Words): string {
  const e = escapeHtml;
  const accent = n.brand.accent_color;
  const sender = senderName(n.brand);
  const logo = n.brand.logo_png
    ? `<p><img src="cid:${e(BRAND_LOGO_CID)}" alt="${e(sender ?? "Logo")}" style="max-height:48px;max-width:200px"></p>\n`
    : "";
  const button = n.top_up_url
    ? `<p><a href="${e(n.top_up_url)}" style="display:inline-block;background:${e(accent)};color:#ffffff;` +
      `padding:10px 18px;border-radius:4px;text-decoration:none;font-weight:bold">Top up</a></p>\n` +
      `<p style="font-size:13px;color:#555">Or open: <a href="${e(n.top_up_url)}" style="color:${e(accent)}">` +
      `${e(n.top_up_url)}</a></p>\n`
    : "";
  const page = n.install_page_url
    ? `<p><a href="${e(n.install_page_url)}" style="color:${e(accent)}">Your eSIM's page</a></p>\n`
    : "";
  const help = helpLines(n.brand)
    .map((line) => `<p style="font-size:13px;color:#555">${e(line)}</p>`)
    .join("\n");
  const unsubscribe = n.unsubscribe_url
    ? `<p style="font-size:12px;color:#666">You get these notices about data and validity. ` +
      `<a href="${e(n.unsubscribe_url)}" style="color:#555">Stop them for this eSIM</a>.</p>\n`
    : "";
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${e(words.subject)}</title></head>
<body style="font-family:Arial,Helvetica,sans-serif;line-height:1.5;color:#1a1a1a;max-width:600px">
${logo}<p>Hello ${e(n.first_name)},</p>
<p>${e(words.lead)}</p>
<p>${e(words.advice)}</p>
${button}${page}<p style="font-size:13px;color:#555">ICCID: <span style="font-family:monospace">${e(n.iccid)}</span></p>
${help}
${sender ? `<p>${e(sender)}</p>\n` : ""}${unsubscribe}</body>
</html>
`;
}
