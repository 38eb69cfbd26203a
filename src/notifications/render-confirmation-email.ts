// The confirmation email of a new eSIM (spec section 6): everything the end user needs to install
// the profile on a phone that may have no other connectivity yet. No I/O and no clock: the same
// order always renders the same subject, bodies and QR image, so a re-sent message says exactly
// what the first one said.
import { type InstallKit, installKit } from "../shared/install-kit.ts";
import { qrCodePng } from "../shared/qr-code-png.ts";

export type ConfirmationEmailData = {
  order_id: string;
  first_name: string;
  package_name: string;
  iccid: string;
  smdp_address: string;
  activation_code: string;
  /** YYYY-MM-DD, or null when the plan starts at the eSIM's first connection. */
  start_date: string | null;
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
};

export const QR_CODE_CID = "esim-qr-code@esim.example";

/** The QR code image attached to the email, in pixels: sharp when shown at 240 CSS pixels. */
const EMAIL_QR_WIDTH_PX = 320;

/** The QR code PNG of an LPA string, exactly as it is attached to the email. */
export async function emailQrCodePng(lpa: string): Promise<Buffer> {
  return qrCodePng(lpa, EMAIL_QR_WIDTH_PX);
}

export function escapeHtml(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

export async function renderConfirmationEmail(data: ConfirmationEmailData): Promise<RenderedEmail> {
  // The same kit the API's Esim carries: the email and the partner's app give the same links.
  const kit = installKit(data.smdp_address, data.activation_code);
  const qr = await emailQrCodePng(kit.qr_code);
  return {
    subject: `Your eSIM is ready: ${data.package_name}`,
    text: renderText(data, kit),
    html: renderHtml(data, kit),
    attachments: [{ filename: "esim-qr-code.png", content: qr, content_type: "image/png", cid: QR_CODE_CID }],
  };
}

function startsText(start_date: string | null): string {
  return start_date === null
    ? "when the eSIM first connects to a network at your destination"
    : `on ${start_date}`;
}

// The steps are written once and rendered into both bodies, so the two can never disagree.
// Android menus differ between manufacturers; the wording names the stock Android path and the
// common alternative.
const IPHONE_STEPS = [
  "Open Settings > Cellular (or Mobile Data) > Add eSIM.",
  'Tap "Use QR Code" and scan the QR code in this email, shown on another screen or printed.',
  'No second screen? Tap "Enter Details Manually" and type the SM-DP+ address and the activation code.',
  "Follow the prompts. Turn on Data Roaming for this eSIM when you arrive.",
];

const ANDROID_STEPS = [
  "Open Settings > Network & internet > SIMs.",
  'Tap "Add eSIM" (on some phones "Download a SIM instead?").',
  "Scan the QR code, or choose to enter it manually and type the full activation code (LPA string).",
  "Follow the prompts. Turn on Roaming for this eSIM when you arrive.",
];

const KEEP_NOTICE =
  "An eSIM can usually be installed only once: do not delete it from your phone after installing, and keep this email.";

// One tap on the phone that will use the eSIM opens its installer (iOS 17.4+; Android phones
// with Google's eSIM setup handler), for when scanning a second screen is not possible.
function installLinks(kit: InstallKit): [label: string, url: string][] {
  return [
    ["On this iPhone (iOS 17.4 or later)", kit.ios_install_url],
    ["On this Android phone", kit.android_install_url],
  ];
}

const LINKS_HEADING = "Reading this on the phone you will travel with? Install with one tap";

function detailRows(data: ConfirmationEmailData, lpa: string): [label: string, value: string][] {
  return [
    ["Package", data.package_name],
    ["ICCID", data.iccid],
    ["SM-DP+ address", data.smdp_address],
    ["Activation code", data.activation_code],
    ["Full activation code (LPA)", lpa],
    ["Plan starts", startsText(data.start_date)],
  ];
}

function renderText(data: ConfirmationEmailData, kit: InstallKit): string {
  const numbered = (steps: string[]) => steps.map((step, index) => `${index + 1}. ${step}`).join("\n");
  return [
    `Hello ${data.first_name},`,
    "",
    `Your eSIM for ${data.package_name} is ready. Install it on the phone you will travel with,` +
      " while you still have Wi-Fi or mobile data.",
    "",
    "Your eSIM details",
    ...detailRows(data, kit.qr_code).map(([label, value]) => `  ${label}: ${value}`),
    "",
    LINKS_HEADING,
    ...installLinks(kit).map(([label, url]) => `  ${label}: ${url}`),
    "",
    "Install on iPhone",
    numbered(IPHONE_STEPS),
    "",
    "Install on Android (menu names vary by manufacturer)",
    numbered(ANDROID_STEPS),
    "",
    KEEP_NOTICE,
    "",
    `Order reference: ${data.order_id}`,
    "",
  ].join("\n");
}

function renderHtml(data: ConfirmationEmailData, kit: InstallKit): string {
  const e = escapeHtml;
  const links = installLinks(kit)
    .map(([label, url]) => `<li><a href="${e(url)}">${e(label)}</a></li>`)
    .join("");
  const rows = detailRows(data, kit.qr_code)
    .map(
      ([label, value]) =>
        `<tr><th align="left" style="padding:4px 12px 4px 0">${e(label)}</th>` +
        `<td style="padding:4px 0;font-family:monospace;word-break:break-all">${e(value)}</td></tr>`,
    )
    .join("\n");
  const list = (steps: string[]) => `<ol>${steps.map((step) => `<li>${e(step)}</li>`).join("")}</ol>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${e(`Your eSIM is ready: ${data.package_name}`)}</title></head>
<body style="font-family:Arial,Helvetica,sans-serif;line-height:1.5;color:#1a1a1a;max-width:600px">
<p>Hello ${e(data.first_name)},</p>
<p>Your eSIM for <strong>${e(data.package_name)}</strong> is ready. Install it on the phone you will travel with,
while you still have Wi-Fi or mobile data.</p>
<p><img src="cid:${e(QR_CODE_CID)}" width="240" height="240" alt="QR code of your eSIM activation code"></p>
<p>${e(LINKS_HEADING)}:</p>
<ul>${links}</ul>
<h2 style="font-size:18px">Your eSIM details</h2>
<table role="presentation">
${rows}
</table>
<h2 style="font-size:18px">Install on iPhone</h2>
${list(IPHONE_STEPS)}
<h2 style="font-size:18px">Install on Android</h2>
<p>Menu names vary by manufacturer.</p>
${list(ANDROID_STEPS)}
<p>${e(KEEP_NOTICE)}</p>
<p style="color:#666">Order reference: ${e(data.order_id)}</p>
</body>
</html>
`;
}
