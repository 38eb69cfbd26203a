// The confirmation email's MIME (src/notifications/mime-message.ts), read back by an independent
// parser (postal-mime): what a mail client shows is exactly what was rendered, through every
// encoding edge (non-Latin text, long lines, trailing spaces, "=", characters at a line break), and
// the same as what nodemailer composed before. Every line ends in CRLF and none passes 78 characters.
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import nodemailer from "nodemailer";
import PostalMime from "postal-mime";
import { createMailer, parseMailbox } from "../src/notifications/mailer.ts";
import { composeMime, type MimeMessage, quotedPrintable } from "../src/notifications/mime-message.ts";
import { renderConfirmationEmail } from "../src/notifications/render-confirmation-email.ts";
import { DEFAULT_BRAND } from "../src/shared/brand.ts";

const rendered = await renderConfirmationEmail(
  {
    order_id: "ord_mime",
    first_name: "José Ñandú 李",
    package_name: "Côte d’Ivoire — 1 GB, 7 days (Ελλάδα)",
    iccid: "8944500000000000017",
    smdp_address: "smdp.example.com",
    activation_code: "K2-1A2B3C-4D5E6F",
    start_date: null,
    language: null,
    install_page_url: null,
  },
  DEFAULT_BRAND,
);

function message(overrides: Partial<MimeMessage> = {}): MimeMessage {
  return {
    from: { name: "eSIM Orders", address: "orders@esim.example" },
    to: "ann.lee+trip@example.com",
    subject: rendered.subject,
    message_id: "<confirmation.ord_mime@esim.example>",
    date: new Date("2026-11-23T19:05:09Z"),
    headers: { "Auto-Submitted": "auto-generated" },
    text: rendered.text.replace(/\n/g, "\r\n"),
    html: rendered.html.replace(/\n/g, "\r\n"),
    attachments: rendered.attachments,
    ...overrides,
  };
}

/** Every encoded word (RFC 2047) alone: at most 75 characters, Q text a phrase allows, whole characters. */
function assertEncodedWords(raw: Buffer): void {
  const head = raw.toString("utf8").split("\r\n\r\n")[0]!;
  for (const line of head.split("\r\n")) if (line.includes("=?")) assert.ok(line.length <= 76, line);
  for (const [word, payload] of head.matchAll(/=\?UTF-8\?Q\?([^?]*)\?=/g)) {
    assert.ok(word.length <= 75, word);
    assert.match(payload!, /^(?:[A-Za-z0-9_]|=[0-9A-F]{2})*$/, word);
    const bytes = Buffer.from(
      payload!
        .replace(/_/g, " ")
        .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
      "latin1",
    );
    assert.ok(!bytes.toString("utf8").includes("\uFFFD"), `${word} splits a character`);
  }
}

function assertWellFormed(raw: Buffer): void {
  assertEncodedWords(raw);
  const text = raw.toString("utf8");
  assert.doesNotMatch(text, /[^\r]\n|\r[^\n]/, "CRLF only");
  for (const line of text.split("\r\n")) assert.ok(line.length <= 78, `a line of ${line.length}: ${line}`);
  assert.ok(
    raw.every((byte) => byte < 0x80),
    "7-bit: every non-ASCII character is encoded",
  );
}

test("a mail client reads back exactly what was rendered: headers, both bodies and the inline QR image", async () => {
  const raw = composeMime(message());
  assertWellFormed(raw);
  const email = await PostalMime.parse(raw);
  assert.deepEqual(email.from, { name: "eSIM Orders", address: "orders@esim.example" });
  assert.deepEqual(email.to, [{ name: "", address: "ann.lee+trip@example.com" }]);
  assert.equal(email.subject, rendered.subject);
  assert.equal(email.messageId, "<confirmation.ord_mime@esim.example>");
  assert.equal(email.date, "2026-11-23T19:05:09.000Z");
  assert.equal(email.headers.find((h) => h.key === "auto-submitted")?.value, "auto-generated");
  // The parser hands text back with LF line ends, and keeps the line break before the boundary (it
  // does the same with nodemailer's message, next test).
  assert.equal(email.text, `${rendered.text}\n`);
  assert.equal(email.html, `${rendered.html}\n`);
  assert.equal(email.attachments.length, 1);
  const [qr] = email.attachments;
  assert.equal(qr!.mimeType, "image/png");
  assert.equal(qr!.disposition, "inline");
  assert.equal(qr!.filename, "esim-qr-code.png");
  assert.equal(qr!.contentId, `<${rendered.attachments[0]!.cid}>`);
  assert.ok(Buffer.from(qr!.content as ArrayBuffer).equals(rendered.attachments[0]!.content));
});

test("the same message as nodemailer composes, read by the same parser", async () => {
  const ours = await PostalMime.parse(composeMime(message()));
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const info = await transport.sendMail({
    from: "eSIM Orders <orders@esim.example>",
    to: { name: "", address: "ann.lee+trip@example.com" },
    subject: rendered.subject,
    text: message().text,
    html: message().html,
    messageId: "<confirmation.ord_mime@esim.example>",
    headers: { "Auto-Submitted": "auto-generated" },
    attachments: rendered.attachments.map((a) => ({
      filename: a.filename,
      content: a.content,
      contentType: a.content_type,
      cid: a.cid,
      contentDisposition: "inline" as const,
    })),
  });
  const theirs = await PostalMime.parse(info.message as Buffer);
  const shown = (email: typeof ours) => ({
    from: email.from,
    to: email.to,
    subject: email.subject,
    messageId: email.messageId,
    text: email.text,
    html: email.html,
    attachments: email.attachments.map((a) => ({
      mimeType: a.mimeType,
      disposition: a.disposition,
      filename: a.filename,
      contentId: a.contentId,
      related: a.related,
      content: Buffer.from(a.content as ArrayBuffer).toString("base64"),
    })),
  });
  assert.deepEqual(shown(ours), shown(theirs));
});

test("quoted-printable keeps every edge: trailing spaces, '=', long lines, characters at a break", async () => {
  const lines = [
    "ends with a space ",
    "ends with a tab\t",
    "a=b==c =3D literally",
    "x".repeat(75),
    "x".repeat(76),
    "y".repeat(77),
    `${"z".repeat(74)}é${"z".repeat(10)}`,
    `${"w".repeat(73)} ${"€".repeat(30)}`,
    "李".repeat(40),
    "",
    ".a line starting with a dot",
    "From the start of a line",
  ];
  for (let cut = 70; cut < 80; cut++) lines.push(`${"a".repeat(cut)}=${"b".repeat(5)} `);
  const text = lines.join("\r\n");
  const encoded = quotedPrintable(text);
  for (const line of encoded.split("\r\n")) {
    assert.ok(line.length <= 76, `${line.length}: ${line}`);
    assert.doesNotMatch(line, /[ \t]$/, "no line ends in whitespace");
  }
  const email = await PostalMime.parse(composeMime(message({ text, html: "<p>x</p>" })));
  assert.equal(email.text, `${text.replace(/\r\n/g, "\n")}\n`);
});

/** The encoder as it was written first, a character at a time: the oracle for the byte-wise one. */
function quotedPrintableOracle(text: string): string {
  const out: string[] = [];
  for (const line of text.split("\r\n")) {
    const bytes = Buffer.from(line, "utf8");
    let current = "";
    for (let index = 0; index < bytes.length; index++) {
      const byte = bytes[index]!;
      const last = index === bytes.length - 1;
      const literal =
        (byte >= 0x21 && byte <= 0x7e && byte !== 0x3d) || ((byte === 0x20 || byte === 0x09) && !last);
      const piece = literal
        ? String.fromCharCode(byte)
        : `=${byte.toString(16).toUpperCase().padStart(2, "0")}`;
      if (current.length + piece.length > (last ? 76 : 75)) {
        out.push(`${current}=`);
        current = "";
      }
      current += piece;
    }
    out.push(current);
  }
  return out.join("\r\n");
}

test("quoted-printable: the byte-wise encoder writes what the first did, on random texts and edges", () => {
  // Every character class that encodes differently: printable, "=", space and tab, lone CR and LF,
  // CRLF, control bytes, two-, three- and four-byte UTF-8, a lone surrogate.
  const alphabet = [
    "a",
    "Z",
    "~",
    "=",
    " ",
    "\t",
    "\r",
    "\n",
    "\r\n",
    "\r\n",
    "\u0001",
    "é",
    "€",
    "李",
    "😀",
    "\ud800",
  ];
  // Park-Miller: exact in doubles (the product stays under 2^53), so every class is drawn.
  let seed = 14;
  const next = () => {
    seed = (seed * 48_271) % 2_147_483_647;
    return seed;
  };
  const texts = ["", "\r\n", "\r\n\r\n", " ", "=", "\r\r\n", "a\r", " \r\n", "\udc00"];
  texts.push("x".repeat(200), "=".repeat(200), "é".repeat(100));
  // Every class of byte at and around the 75- and 76-character limits, last on its line or not.
  for (let width = 70; width <= 80; width++) {
    for (const tail of [" ", "\t", "=", "é", "a", "\r", "\n"]) {
      for (const end of ["", "\r\n", "\rx"]) texts.push(`${"x".repeat(width)}${tail}${end}`);
    }
  }
  for (let n = 0; n < 2_000; n++) {
    const length = next() % 300;
    let text = "";
    for (let i = 0; i < length; i++) text += alphabet[next() % alphabet.length];
    texts.push(text);
  }
  for (const text of texts)
    assert.equal(quotedPrintable(text), quotedPrintableOracle(text), JSON.stringify(text));
});

test("display names and subjects beyond plain words are quoted or encoded, and read back", async () => {
  const accented = `Your eSIM is ready: France — ${"a".repeat(20)}`;
  assertWellFormed(composeMime(message({ subject: accented })));
  assert.equal((await PostalMime.parse(composeMime(message({ subject: accented })))).subject, accented);
  for (const name of ['Orders, Inc. "Travel"', "Café Orders ✈", "", "Back\\slash"]) {
    const subject = name === "" ? "x".repeat(100) : `Your eSIM is ready: ${name} ${"é".repeat(40)}`;
    const raw = composeMime(message({ from: { name, address: "orders@esim.example" }, subject }));
    assertWellFormed(raw);
    const email = await PostalMime.parse(raw);
    assert.deepEqual(email.from, { name, address: "orders@esim.example" }, name);
    assert.equal(email.subject, subject);
  }
});

test("a subject or name carrying line breaks or an encoded word's look cannot add a header or change what is shown", async () => {
  const subject = "Ready\r\nBcc: attacker@example.com =?UTF-8?Q?fake?= tail ";
  const name = "Orders\r\nBcc: attacker@example.com";
  const raw = composeMime(message({ from: { name, address: "orders@esim.example" }, subject }));
  assertWellFormed(raw);
  const email = await PostalMime.parse(raw);
  assert.equal(email.headers.filter((h) => h.key === "bcc").length, 0);
  assert.equal(email.subject, subject);
  assert.equal(email.from?.name, name);
});

test("MAIL_FROM is read as a name and an address; what is not that simple goes through nodemailer", async () => {
  assert.deepEqual(parseMailbox("eSIM Orders <orders@esim.example>"), {
    name: "eSIM Orders",
    address: "orders@esim.example",
  });
  assert.deepEqual(parseMailbox('"Orders, Inc." <o@esim.example>'), {
    name: "Orders, Inc.",
    address: "o@esim.example",
  });
  assert.deepEqual(parseMailbox("orders@esim.example"), { name: "", address: "orders@esim.example" });
  assert.equal(parseMailbox("Orders <ördérs@esim.example>"), null);
  assert.equal(parseMailbox("Orders (bot) <o@esim.example>"), null, "a comment is nodemailer's to read");
  assert.equal(parseMailbox("Orders <o..x@esim.example>"), null, "not a dot-atom");
  // A recipient beyond a plain ASCII address: composed by nodemailer, still delivered whole.
  const data_dir = await mkdtemp(path.join(os.tmpdir(), "mime-"));
  try {
    const mailer = createMailer({ smtp_url: null, mail_from: "eSIM Orders <orders@esim.example>", data_dir });
    for (const [key, to] of [
      ["plain", "ann@example.com"],
      ["unusual", "ann@exämple.com"],
    ] as const) {
      await mailer.send({ key, to, ...rendered });
      const email = await PostalMime.parse(await readFile(path.join(data_dir, "mail", `${key}.eml`)));
      assert.equal(email.subject, rendered.subject, key);
      assert.equal(email.text, `${rendered.text}\n`, key);
      assert.equal(email.attachments.length, 1, key);
    }
    await mailer.close();
    // A MAIL_FROM with a comment: nodemailer composes, the address is the same.
    const commented = createMailer({
      smtp_url: null,
      mail_from: "Orders (bot) <orders@esim.example>",
      data_dir,
    });
    await commented.send({ key: "commented", to: "ann@example.com", ...rendered });
    await commented.close();
    const email = await PostalMime.parse(await readFile(path.join(data_dir, "mail", "commented.eml")));
    assert.equal(email.from?.address, "orders@esim.example");
    assert.equal(email.subject, rendered.subject);
    assert.deepEqual((await readdir(path.join(data_dir, "mail"))).sort(), [
      "commented.eml",
      "plain.eml",
      "unusual.eml",
    ]);
  } finally {
    await rm(data_dir, { recursive: true, force: true });
  }
});
