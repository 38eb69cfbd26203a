// The confirmation email of a new eSIM (spec section 6): everything the traveller needs to install
// the profile on a phone that may have no other connectivity yet, in the order's language
// (travellers/translate.ts) and the partner's brand. No I/O and no clock: the same order always
// renders the same subject, bodies and images, so a re-sent message says exactly what the first
// one said. The plain-text part is complete on its own (details, links, steps, contacts); the HTML
// part says its language and direction (<html lang dir>) and shows the QR code and the logo inline.
import { BRAND_LOGO_CID, type Brand } from "../shared/brand.ts";
import { type InstallKit, installKit } from "../shared/install-kit.ts";
import { qrCodePng } from "../shared/qr-code-png.ts";
import { type Translator, translator } from "../travellers/translate.ts";
import {
  accentColor,
  androidSteps,
  brandName,
  escapeHtml,
  type InstallSteps,
  iphoneSteps,
  numberedSteps,
  supportLinks,
} from "../travellers/traveller-view.ts";

export { escapeHtml };

export type ConfirmationEmailData = {
  order_id: string;
  first_name: string;
  package_name: string;
  iccid: string;
  smdp_address: string;
  activation_code: string;
  /** YYYY-MM-DD, or null when the plan starts at the eSIM's first connection. */
  start_date: string | null;
  /** The order's language (Order.language); null: English. */
  language: string | null;
  /** The eSIM's install page (Esim.installation.install_page_url); null: not linked. */
  install_page_url: string | null;
};

export type EmailAttachment = {
  filename: string;
  content: Buffer;
  content_type: string;
  /** Content-ID the HTML refers to as `cid:<cid>`; it makes the part inline. */
  cid: string;
};

export type RenderedEmail = {
  subject: string;
  text: string;
  html: string;
  attachments: EmailAttachment[];
  /** The language the bodies are written in, sent as Content-Language; absent: not said. */
  language?: string;
};

export const QR_CODE_CID = "esim-qr-code@esim.example";
/** The brand logo's Content-ID: one for every traveller email (shared/brand.ts). */
export const LOGO_CID = BRAND_LOGO_CID;

/** The QR code image attached to the email, in pixels: sharp when shown at 240 CSS pixels. */
const EMAIL_QR_WIDTH_PX = 320;

/** The QR code PNG of an LPA string, exactly as it is attached to the email. */
export async function emailQrCodePng(lpa: string): Promise<Buffer> {
  return qrCodePng(lpa, EMAIL_QR_WIDTH_PX);
}

/** The brand's logo as an inline part, when it has one: never a remote image. */
export function logoAttachment(brand: Brand): EmailAttachment[] {
  if (brand.logo_png === null) return [];
  return [{ filename: "logo.png", content: brand.logo_png, content_type: "image/png", cid: LOGO_CID }];
}

export async function renderConfirmationEmail(
  data: ConfirmationEmailData,
  brand: Brand,
): Promise<RenderedEmail & { language: string }> {
  const t = translator(data.language);
  // The same kit the API's Esim carries: the email and the partner's app give the same links.
  const kit = installKit(data.smdp_address, data.activation_code);
  const qr = await emailQrCodePng(kit.qr_code);
  return {
    subject: t.t("email.subject", { package: data.package_name }),
    text: renderText(t, data, kit, brand),
    html: renderHtml(t, data, kit, brand),
    attachments: [
      { filename: "esim-qr-code.png", content: qr, content_type: "image/png", cid: QR_CODE_CID },
      ...logoAttachment(brand),
    ],
    language: t.language,
  };
}

// One tap on the phone that will use the eSIM opens its installer (iOS 17.4+; Android phones
// with Google's eSIM setup handler), for when scanning a second screen is not possible.
function installLinks(t: Translator, kit: InstallKit): [label: string, url: string][] {
  return [
    [t.t("links.iphone"), kit.ios_install_url],
    [t.t("links.android"), kit.android_install_url],
  ];
}

/** Each detail with whether it is a code (read left to right in every language, monospace). */
function detailRows(
  t: Translator,
  data: ConfirmationEmailData,
  lpa: string,
): [label: string, value: string, code: boolean][] {
  const starts =
    data.start_date === null
      ? t.t("details.starts_first_connection")
      : t.t("details.starts_on", { date: t.day(data.start_date) });
  return [
    [t.t("details.package"), data.package_name, false],
    [t.t("details.iccid"), data.iccid, true],
    [t.t("details.smdp_address"), data.smdp_address, true],
    [t.t("details.activation_code"), data.activation_code, true],
    [t.t("details.lpa"), lpa, true],
    [t.t("details.starts"), starts, false],
  ];
}

/**
 * The plain text's end, the same in every confirmation: how to install on each phone, the notice to
 * keep the email, the brand's support links, the signature and the order's reference.
 */
function textClosing(t: Translator, brand: Brand, order_id: string): string[] {
  const steps = (s: InstallSteps) => [
    s.heading,
    ...(s.note === null ? [] : [s.note]),
    numberedSteps(s.steps),
  ];
  const support = supportLinks(brand, t);
  return [
    ...steps(iphoneSteps(t)),
    "",
    ...steps(androidSteps(t)),
    "",
    t.t("email.keep_notice"),
    "",
    ...(support.length === 0
      ? []
      : [t.t("support.heading"), ...support.map((link) => `  ${link.label}: ${link.shown}`), ""]),
    t.t("signature", { brand: brandName(brand) }),
    t.t("email.order_reference", { order_id }),
    "",
  ];
}

function renderText(t: Translator, data: ConfirmationEmailData, kit: InstallKit, brand: Brand): string {
  return [
    t.t("email.greeting", { name: data.first_name }),
    "",
    t.t("email.intro", { package: data.package_name }),
    "",
    t.t("details.heading"),
    ...detailRows(t, data, kit.qr_code).map(([label, value]) => `  ${label}: ${value}`),
    "",
    ...(data.install_page_url === null
      ? []
      : [`${t.t("email.install_page")}:`, `  ${data.install_page_url}`, ""]),
    t.t("links.heading"),
    ...installLinks(t, kit).map(([label, url]) => `  ${label}: ${url}`),
    "",
    ...textClosing(t, brand, data.order_id),
  ].join("\n");
}

/** A value that reads left to right whatever the language (codes, addresses, links). */
function ltr(value: string): string {
  return `<span dir="ltr" style="font-family:monospace;word-break:break-all">${escapeHtml(value)}</span>`;
}

function renderHtml(t: Translator, data: ConfirmationEmailData, kit: InstallKit, brand: Brand): string {
  const e = escapeHtml;
  const accent = accentColor(brand);
  const [start, end] = t.dir === "rtl" ? ["right", "left"] : ["left", "right"];
  const links = installLinks(t, kit)
    .map(([label, url]) => `<li><a href="${e(url)}" style="color:${accent}">${e(label)}</a></li>`)
    .join("");
  const rows = detailRows(t, data, kit.qr_code)
    .map(
      ([label, value, code]) =>
        `<tr><th align="${start}" style="padding:4px 0;padding-${end}:12px;vertical-align:top">${e(label)}</th>` +
        `<td style="padding:4px 0">${code ? ltr(value) : e(value)}</td></tr>`,
    )
    .join("\n");
  const steps = (s: InstallSteps) =>
    `<h2 style="font-size:18px;color:${accent}">${e(s.heading)}</h2>\n` +
    (s.note === null ? "" : `<p>${e(s.note)}</p>\n`) +
    `<ol>${s.steps.map((step) => `<li>${e(step)}</li>`).join("")}</ol>`;
  const support = supportLinks(brand, t);
  const name = brandName(brand);
  const logo =
    brand.logo_png === null
      ? ""
      : `<p><img src="cid:${e(LOGO_CID)}" alt="${e(name)}" style="max-height:48px"></p>\n`;
  const page =
    data.install_page_url === null
      ? ""
      : `<p><a href="${e(data.install_page_url)}" style="color:${accent};font-weight:bold">${e(t.t("email.install_page"))}</a></p>\n`;
  const contacts =
    support.length === 0
      ? ""
      : `<h2 style="font-size:18px;color:${accent}">${e(t.t("support.heading"))}</h2>\n<ul>${support
          .map((link) => `<li><a href="${e(link.href)}" style="color:${accent}">${e(link.label)}</a></li>`)
          .join("")}</ul>\n`;
  const subject = t.t("email.subject", { package: data.package_name });
  return `<!doctype html>
<html lang="${e(t.language)}" dir="${t.dir}">
<head><meta charset="utf-8"><title>${e(subject)}</title></head>
<body dir="${t.dir}" style="font-family:Arial,Helvetica,sans-serif;line-height:1.5;color:#1a1a1a;max-width:600px;text-align:${start}">
${logo}<p>${e(t.t("email.greeting", { name: data.first_name }))}</p>
<p>${e(t.t("email.intro", { package: data.package_name }))}</p>
<p><img src="cid:${e(QR_CODE_CID)}" width="240" height="240" alt="${e(t.t("qr_alt"))}"></p>
${page}<p>${e(t.t("links.heading"))}:</p>
<ul>${links}</ul>
<h2 style="font-size:18px;color:${accent}">${e(t.t("details.heading"))}</h2>
<table role="presentation">
${rows}
</table>
${steps(iphoneSteps(t))}
${steps(androidSteps(t))}
<p>${e(t.t("email.keep_notice"))}</p>
${contacts}<p>${e(t.t("signature", { brand: name }))}</p>
<p style="color:#595959">${e(t.t("email.order_reference", { order_id: data.order_id }))}</p>
</body>
</html>
`;
}

/** One eSIM of a group order's email (renderGroupConfirmationEmail). */
export type GroupEmailEsim = Pick<
  ConfirmationEmailData,
  "iccid" | "smdp_address" | "activation_code" | "start_date" | "install_page_url"
>;

export type GroupConfirmationEmailData = Pick<
  ConfirmationEmailData,
  "order_id" | "first_name" | "package_name" | "language"
> & { esims: readonly GroupEmailEsim[] };

/** The most eSIMs one email carries: a group order's quantity (migration 0047). */
const MAX_ESIMS_PER_EMAIL = 50;

/** The QR code of a group email's eSIM number `n` (1-based): one Content-ID per image of the message. */
export function groupQrCodeCid(n: number): string {
  return `esim-qr-code-${n}@esim.example`;
}

/**
 * The email of several eSIMs of one group order (one submit of several, no traveller named, or a
 * resend to the order's address): each eSIM numbered ("eSIM 1 of 4") with its own QR code (its own
 * Content-ID), links, install page and details; the steps, contacts and signature once. As pure as
 * the one-eSIM email: the same order renders the same message every time.
 */
export async function renderGroupConfirmationEmail(
  data: GroupConfirmationEmailData,
  brand: Brand,
): Promise<RenderedEmail & { language: string }> {
  if (data.esims.length < 1 || data.esims.length > MAX_ESIMS_PER_EMAIL) {
    throw new Error(`a group email carries 1-${MAX_ESIMS_PER_EMAIL} eSIMs, not ${data.esims.length}`);
  }
  const t = translator(data.language);
  const kits = data.esims.map((esim) => installKit(esim.smdp_address, esim.activation_code));
  const qrs = await Promise.all(kits.map((kit) => emailQrCodePng(kit.qr_code)));
  return {
    subject: t.t("email.subject", { package: data.package_name }),
    text: renderGroupText(t, data, kits, brand),
    html: renderGroupHtml(t, data, kits, brand),
    attachments: [
      ...qrs.map((content, i) => ({
        filename: `esim-qr-code-${i + 1}.png`,
        content,
        content_type: "image/png",
        cid: groupQrCodeCid(i + 1),
      })),
      ...logoAttachment(brand),
    ],
    language: t.language,
  };
}

function esimHeading(t: Translator, n: number, count: number): string {
  return t.t("email.group_esim", { number: n, count });
}

function renderGroupText(
  t: Translator,
  data: GroupConfirmationEmailData,
  kits: readonly InstallKit[],
  brand: Brand,
): string {
  const count = data.esims.length;
  const esims = data.esims.flatMap((esim, i) => {
    const kit = kits[i]!;
    const row = { ...data, ...esim };
    return [
      `== ${esimHeading(t, i + 1, count)} ==`,
      ...detailRows(t, row, kit.qr_code).map(([label, value]) => `  ${label}: ${value}`),
      ...(esim.install_page_url === null
        ? []
        : [`${t.t("email.install_page")}:`, `  ${esim.install_page_url}`]),
      `${t.t("links.heading")}:`,
      ...installLinks(t, kit).map(([label, url]) => `  ${label}: ${url}`),
      "",
    ];
  });
  return [
    t.t("email.greeting", { name: data.first_name }),
    "",
    t.t("email.group_intro", { count, package: data.package_name }),
    "",
    ...esims,
    ...textClosing(t, brand, data.order_id),
  ].join("\n");
}

function renderGroupHtml(
  t: Translator,
  data: GroupConfirmationEmailData,
  kits: readonly InstallKit[],
  brand: Brand,
): string {
  const e = escapeHtml;
  const accent = accentColor(brand);
  const [start, end] = t.dir === "rtl" ? ["right", "left"] : ["left", "right"];
  const count = data.esims.length;
  const esims = data.esims
    .map((esim, i) => {
      const kit = kits[i]!;
      const links = installLinks(t, kit)
        .map(([label, url]) => `<li><a href="${e(url)}" style="color:${accent}">${e(label)}</a></li>`)
        .join("");
      const rows = detailRows(t, { ...data, ...esim }, kit.qr_code)
        .map(
          ([label, value, code]) =>
            `<tr><th align="${start}" style="padding:4px 0;padding-${end}:12px;vertical-align:top">${e(label)}</th>` +
            `<td style="padding:4px 0">${code ? ltr(value) : e(value)}</td></tr>`,
        )
        .join("\n");
      const page =
        esim.install_page_url === null
          ? ""
          : `<p><a href="${e(esim.install_page_url)}" style="color:${accent};font-weight:bold">${e(t.t("email.install_page"))}</a></p>\n`;
      return `<h2 style="font-size:20px;color:${accent}">${e(esimHeading(t, i + 1, count))}</h2>
<p><img src="cid:${e(groupQrCodeCid(i + 1))}" width="240" height="240" alt="${e(t.t("qr_alt"))}"></p>
${page}<p>${e(t.t("links.heading"))}:</p>
<ul>${links}</ul>
<table role="presentation">
${rows}
</table>`;
    })
    .join("\n");
  const steps = (s: InstallSteps) =>
    `<h2 style="font-size:18px;color:${accent}">${e(s.heading)}</h2>\n` +
    (s.note === null ? "" : `<p>${e(s.note)}</p>\n`) +
    `<ol>${s.steps.map((step) => `<li>${e(step)}</li>`).join("")}</ol>`;
  const support = supportLinks(brand, t);
  const name = brandName(brand);
  const logo =
    brand.logo_png === null
      ? ""
      : `<p><img src="cid:${e(LOGO_CID)}" alt="${e(name)}" style="max-height:48px"></p>\n`;
  const contacts =
    support.length === 0
      ? ""
      : `<h2 style="font-size:18px;color:${accent}">${e(t.t("support.heading"))}</h2>\n<ul>${support
          .map((link) => `<li><a href="${e(link.href)}" style="color:${accent}">${e(link.label)}</a></li>`)
          .join("")}</ul>\n`;
  const subject = t.t("email.subject", { package: data.package_name });
  return `<!doctype html>
<html lang="${e(t.language)}" dir="${t.dir}">
<head><meta charset="utf-8"><title>${e(subject)}</title></head>
<body dir="${t.dir}" style="font-family:Arial,Helvetica,sans-serif;line-height:1.5;color:#1a1a1a;max-width:600px;text-align:${start}">
${logo}<p>${e(t.t("email.greeting", { name: data.first_name }))}</p>
<p>${e(t.t("email.group_intro", { count, package: data.package_name }))}</p>
${esims}
${steps(iphoneSteps(t))}
${steps(androidSteps(t))}
<p>${e(t.t("email.keep_notice"))}</p>
${contacts}<p>${e(t.t("signature", { brand: name }))}</p>
<p style="color:#595959">${e(t.t("email.order_reference", { order_id: data.order_id }))}</p>
</body>
</html>
`;
}
