// The confirmation email as MIME (RFC 2045-2047, 5322), written directly: the text and the HTML as
// alternatives, the HTML related to its inline images. nodemailer composed it through a stream per
// part, five random boundaries and an AbortController per pipe: 660 µs of the event loop per message
// (470 with its encoding named) against ~85 here, measured alone. nodemailer still sends it over
// SMTP, and composes what this does not take (mailer.ts). Every line ends in CRLF and none is longer
// than 78 characters; the bodies are quoted-printable (UTF-8), the images base64.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { EmailAttachment } from "./render-confirmation-email.ts";

export type MimeMessage = {
  /** The From header's display name ("" for none) and address. */
  from: { name: string; address: string };
  /** One plain ASCII address (isPlainAddress). */
  to: string;
  subject: string;
  /** `<id@domain>` */
  message_id: string;
  date: Date;
  /** Extra header fields, ASCII values (e.g. Auto-Submitted). */
  headers: Record<string, string>;
  text: string;
  html: string;
  /** Inline parts the HTML refers to by `cid:`. */
  attachments: readonly EmailAttachment[];
};

const MAX_LINE = 76;

const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const PLAIN_ADDRESS = new RegExp(`^${ATEXT}(?:\\.${ATEXT})*@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*$`);

/** A dot-atom addr-spec of ASCII (RFC 5322 3.4.1), written in a header as it is. */
export function isPlainAddress(address: string): boolean {
  return address.length <= 254 && PLAIN_ADDRESS.test(address);
}

export function composeMime(message: MimeMessage): Buffer {
  assert.ok(isPlainAddress(message.to), "the recipient is a plain address");
  assert.ok(isPlainAddress(message.from.address), "the sender is a plain address");
  assert.match(message.message_id, /^<[\x21-\x3b\x3d\x3f-\x7e]+@[A-Za-z0-9.-]+>$/);
  // "=_" never occurs in quoted-printable ("=" is always =3D) nor in base64: no body can contain it.
  const tag = `=_esim_${randomBytes(12).toString("hex")}`;
  const alternative = `${tag}_a`;
  const related = `${tag}_r`;
  const lines: string[] = [
    header(
      "From",
      message.from.name === ""
        ? message.from.address
        : `${displayName(message.from.name)} <${message.from.address}>`,
    ),
    `To: ${message.to}`,
    header("Subject", encodedText(message.subject, "Subject: ".length)),
    `Message-ID: ${message.message_id}`,
    `Date: ${rfc5322Date(message.date)}`,
    "MIME-Version: 1.0",
    ...Object.entries(message.headers).map(([name, value]) => header(name, asciiValue(value))),
    header("Content-Type", `multipart/alternative; boundary="${alternative}"`),
    "",
    `--${alternative}`,
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: quoted-printable",
    "",
    quotedPrintable(message.text),
    `--${alternative}`,
    header("Content-Type", `multipart/related; type="text/html"; boundary="${related}"`),
    "",
    `--${related}`,
    "Content-Type: text/html; charset=utf-8",
    "Content-Transfer-Encoding: quoted-printable",
    "",
    quotedPrintable(message.html),
  ];
  for (const attachment of message.attachments) lines.push(`--${related}`, ...inlinePart(attachment));
  lines.push(`--${related}--`, `--${alternative}--`, "");
  return Buffer.from(lines.join("\r\n"), "utf8");
}

function inlinePart(attachment: EmailAttachment): string[] {
  assert.match(attachment.content_type, /^[a-z]+\/[a-z0-9.+-]+$/);
  assert.match(attachment.filename, /^[A-Za-z0-9._-]{1,40}$/);
  assert.match(attachment.cid, /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.-]+$/);
  return [
    header("Content-Type", `${attachment.content_type}; name="${attachment.filename}"`),
    header("Content-ID", `<${attachment.cid}>`),
    header("Content-Disposition", `inline; filename="${attachment.filename}"`),
    "Content-Transfer-Encoding: base64",
    "",
    wrap(attachment.content.toString("base64"), MAX_LINE),
  ];
}

function wrap(text: string, width: number): string {
  const lines: string[] = [];
  for (let at = 0; at < text.length; at += width) lines.push(text.slice(at, at + width));
  return lines.join("\r\n");
}

/**
 * A header field, folded at spaces so that no line passes 76 characters where the value allows (RFC
 * 2047's limit for a line with an encoded word; 5322 asks 78). Never folded before an empty word: a
 * continuation line of whitespace alone is not allowed.
 */
function header(name: string, value: string): string {
  const words = `${name}: ${value}`.split(" ");
  const lines: string[] = [];
  let line = words[0]!;
  for (const word of words.slice(1)) {
    if (word !== "" && line.length + 1 + word.length > MAX_LINE) {
      lines.push(line);
      line = ` ${word}`;
    } else {
      line += ` ${word}`;
    }
  }
  lines.push(line);
  return lines.join("\r\n");
}

function asciiValue(value: string): string {
  assert.match(value, /^[\x20-\x7e]*$/, "an extra header's value is printable ASCII");
  return value;
}

/**
 * Printable ASCII as it is; anything else, a word too long to fold, or text that reads as an
 * encoded word ("=?"), as RFC 2047 encoded words. `lead` is what precedes the value on its line.
 */
function encodedText(value: string, lead: number): string {
  const plain =
    /^[\x20-\x7e]*$/.test(value) &&
    !value.includes("=?") &&
    value.split(" ").every((word) => word.length <= 60);
  return plain ? value : encodedWords(value, lead);
}

/** A display name: an atom sequence as it is, a quoted string if it has specials, encoded words if not ASCII. */
function displayName(name: string): string {
  if (!/^[\x20-\x7e]*$/.test(name) || name.includes("=?")) return encodedWords(name, "From: ".length);
  if (/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~ -]*$/.test(name)) return name;
  return `"${name.replace(/(["\\])/g, "\\$1")}"`;
}

/**
 * RFC 2047 Q encoded words of UTF-8, each at most 75 characters (the first short enough to share
 * its line with `lead` characters) and never splitting a character, separated by spaces (a header
 * folds there; the spaces between encoded words are not text). The Q text is letters, digits, "_"
 * for a space and =XX: what a phrase allows.
 */
function encodedWords(value: string, lead: number): string {
  const words: string[] = [];
  const wrapper = "=?UTF-8?Q??=".length;
  let room = Math.min(75, MAX_LINE - lead) - wrapper;
  let current = "";
  for (const char of value) {
    const encoded = [...Buffer.from(char, "utf8")]
      .map((byte) =>
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
          ? String.fromCharCode(byte)
          : byte === 0x20
            ? "_"
            : `=${hex(byte)}`,
      )
      .join("");
    if (current.length + encoded.length > room) {
      words.push(`=?UTF-8?Q?${current}?=`);
      current = "";
      room = 75 - wrapper;
    }
    current += encoded;
  }
  if (current !== "" || words.length === 0) words.push(`=?UTF-8?Q?${current}?=`);
  return words.join(" ");
}

function hex(byte: number): string {
  return byte.toString(16).toUpperCase().padStart(2, "0");
}

/** ASCII codes of the hex digits of =XX: upper case, as RFC 2045 requires. */
const HEX_DIGITS = Buffer.from("0123456789ABCDEF", "latin1");
/** How quoted-printable writes a byte: as =XX, as it is, or as it is unless it ends a line. */
const ENCODED = 0;
const AS_IS = 1;
const AS_IS_INSIDE_LINE = 2;
const QP_CLASS = new Uint8Array(256); // ENCODED unless set below
for (let byte = 0x21; byte <= 0x7e; byte++) QP_CLASS[byte] = byte === 0x3d ? ENCODED : AS_IS;
QP_CLASS[0x20] = AS_IS_INSIDE_LINE;
QP_CLASS[0x09] = AS_IS_INSIDE_LINE;

/**
 * Quoted-printable (RFC 2045 6.7) of text with CRLF line ends, as UTF-8: printable ASCII but "=" as
 * it is, a space or tab as it is unless it ends a line, everything else =XX; lines longer than 76
 * characters broken with soft line breaks, never inside an =XX. Written byte by byte into one
 * buffer: a confirmation email's text and HTML parts took ~54 µs as strings built a character at
 * a time (bench/README.md, "Session 12").
 */
export function quotedPrintable(text: string): string {
  const input = Buffer.from(text, "utf8");
  const n = input.length;
  // At most 3 bytes per input byte; a soft-broken line holds at least 73 characters, so at least
  // 25 input bytes: at most one soft break (3 bytes) per 25 of them.
  const out = Buffer.allocUnsafe(n * 3 + Math.ceil(n / 25) * 3);
  let length = 0;
  let column = 0;
  for (let index = 0; index < n; index++) {
    const byte = input[index]!;
    if (byte === 0x0d && index + 1 < n && input[index + 1] === 0x0a) {
      out[length++] = 0x0d;
      out[length++] = 0x0a;
      column = 0;
      index++;
      continue;
    }
    let kind = QP_CLASS[byte]!;
    let width = kind === ENCODED ? 3 : 1;
    // Whether the byte ends its line matters only for a space or tab, and near the line's limit.
    if (kind === AS_IS_INSIDE_LINE || column + width > MAX_LINE - 1) {
      const last =
        index + 1 === n || (input[index + 1] === 0x0d && index + 2 < n && input[index + 2] === 0x0a);
      if (kind === AS_IS_INSIDE_LINE && last) {
        kind = ENCODED;
        width = 3;
      }
      // A soft break takes one character ("="): the line before it holds at most 75.
      if (column + width > (last ? MAX_LINE : MAX_LINE - 1)) {
        out[length++] = 0x3d;
        out[length++] = 0x0d;
        out[length++] = 0x0a;
        column = 0;
      }
    }
    if (kind === ENCODED) {
      out[length++] = 0x3d;
      out[length++] = HEX_DIGITS[byte >> 4]!;
      out[length++] = HEX_DIGITS[byte & 0x0f]!;
    } else {
      out[length++] = byte;
    }
    column += width;
  }
  // A write past the end would be dropped silently: the bound above must hold.
  assert.ok(length <= out.length, "quoted-printable output within its bound");
  return out.toString("latin1", 0, length);
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** RFC 5322 date-time in UTC: `Mon, 23 Nov 2026 19:00:00 +0000`. */
function rfc5322Date(date: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return (
    `${DAYS[date.getUTCDay()]}, ${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()} ` +
    `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`
  );
}
