// Outbound email. With SMTP_URL, nodemailer speaks SMTP to that relay; without it (a laptop, the
// sandbox), every message is written as an RFC 5322 .eml file under `<data_dir>/mail/`, which any
// mail client opens. Both send the message built by mime-message.ts, so both hold the same message.
import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";
import { domainToASCII } from "node:url";
import type { SendMailOptions, SMTPSentMessageInfo } from "nodemailer";
import nodemailer from "nodemailer";
import { composeMime, isPlainAddress } from "./mime-message.ts";
import type { RenderedEmail } from "./render-confirmation-email.ts";

export type MailerConfig = {
  /** smtp:// or smtps:// URL of the relay, credentials included; null writes .eml files instead. */
  smtp_url: string | null;
  /** From header, e.g. `eSIM Orders <orders@esim.example>`; its domain also names the Message-IDs. */
  mail_from: string;
  data_dir: string;
  /** SMTP connections kept open to the relay at most (EMAIL_CONCURRENCY): the sends at once. */
  max_connections?: number;
};

export type OutgoingEmail = RenderedEmail & {
  /**
   * Stable identity of this message, e.g. `confirmation.ord_...`. The Message-ID is `<key@domain>`
   * and the .eml file `<key>.eml`, so sending the same message twice is recognisably one message.
   */
  key: string;
  /** One recipient address, already validated by the caller. */
  to: string;
  /**
   * The partner's brand on a traveller email (PUT /v1/profile/branding): the From display name
   * (the address stays MAIL_FROM's, whose domain the relay signs for) and the Reply-To address.
   */
  from_name?: string | null;
  reply_to?: string | null;
  /** More header fields, printable ASCII (List-Unsubscribe on the optional notices). */
  headers?: Record<string, string>;
};

export type Mailer = {
  send(message: OutgoingEmail): Promise<{ message_id: string }>;
  close(): Promise<void>;
};

// Limits on every wait of an SMTP send (nodemailer's defaults are minutes). The whole send must
// finish within SEND_TIMEOUT_MS, which stays well inside the email outbox's claim (EMAIL_LEASE_MS in
// send-confirmation-emails.ts), so no other process claims a message while it is being sent.
const SMTP_DNS_TIMEOUT_MS = 5_000;
const SMTP_CONNECTION_TIMEOUT_MS = 10_000;
const SMTP_GREETING_TIMEOUT_MS = 10_000;
const SMTP_SOCKET_IDLE_TIMEOUT_MS = 15_000;
export const SEND_TIMEOUT_MS = 25_000;

const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** An SMTP failure, with its codes kept and any address in the server's reply removed. */
export class MailDeliveryError extends Error {
  readonly code: string | null;
  readonly response_code: number | null;
  constructor(code: string | null, response_code: number | null, detail: string) {
    super(`email not delivered (${code ?? "unknown"}${response_code ? ` ${response_code}` : ""}): ${detail}`);
    this.name = "MailDeliveryError";
    this.code = code;
    this.response_code = response_code;
  }
}

export function createMailer(config: MailerConfig): Mailer {
  const domain = fromDomain(config.mail_from);
  return config.smtp_url === null
    ? createFileMailer(config.mail_from, domain, path.join(config.data_dir, "mail"))
    : createSmtpMailer(config.smtp_url, config.mail_from, domain, config.max_connections ?? 1);
}

function fromDomain(mail_from: string): string {
  const match = /@([A-Za-z0-9.-]+)>?\s*$/.exec(mail_from);
  if (!match?.[1]) throw new Error(`MAIL_FROM "${mail_from}" has no address with a domain`);
  return match[1];
}

/** RFC 3834: vacation responders must not answer a machine-sent message. */
const AUTO_SUBMITTED = { "Auto-Submitted": "auto-generated" };

/** The header fields beyond the ones every message has: Auto-Submitted, Reply-To, the message's own. */
function extraHeaders(message: OutgoingEmail): Record<string, string> {
  return {
    ...AUTO_SUBMITTED,
    ...(message.reply_to ? { "Reply-To": message.reply_to } : {}),
    ...message.headers,
  };
}

function mailOptions(message: OutgoingEmail, from: string, domain: string): SendMailOptions {
  if (!KEY_PATTERN.test(message.key)) throw new Error(`invalid message key "${message.key}"`);
  const sender = message.from_name ? parseMailbox(from) : null;
  return {
    from: sender ? { name: message.from_name!, address: sender.address } : from,
    // An address object, not a string: nodemailer would otherwise parse the text and could
    // read one odd but valid address as several recipients.
    to: { name: "", address: message.to },
    subject: message.subject,
    // CRLF line ends, as SMTP and .eml files want, written into the bodies here: nodemailer writes
    // its own headers and boundaries with CRLF already, and its `newline` option would pass the
    // whole message through one more stream to fix only these (~40% of composing a message).
    text: crlf(message.text),
    html: crlf(message.html),
    // What nodemailer picks for Latin text anyway (and our bodies' long lines need an encoding), said
    // up front: left to choose, it scans every body and header value character by character, a
    // third of composing a message (660 -> 470 µs measured alone). Non-Latin text is still encoded,
    // as quoted-printable rather than base64.
    textEncoding: "quoted-printable",
    messageId: `<${message.key}@${domain}>`,
    headers: extraHeaders(message),
    attachments: message.attachments.map((attachment) => ({
      filename: attachment.filename,
      content: attachment.content,
      contentType: attachment.content_type,
      cid: attachment.cid,
      contentDisposition: "inline" as const,
    })),
  };
}

function crlf(body: string): string {
  return body.replace(/\r\n|\r|\n/g, "\r\n");
}

/** Messages per pooled connection before it is replaced (relays often cap a session's messages). */
const SMTP_MESSAGES_PER_CONNECTION = 100;

function createSmtpMailer(smtp_url: string, from: string, domain: string, max_connections: number): Mailer {
  // Pooled: a connection (TCP, greeting, EHLO, TLS, AUTH) is paid once per 100 messages, not per
  // message, so emails keep pace with purchases. A connection the relay closes while idle leaves
  // the pool; a send that fails on it is retried by the outbox like any other failure.
  const transport = nodemailer.createTransport({
    url: smtp_url,
    pool: true,
    maxConnections: max_connections,
    maxMessages: SMTP_MESSAGES_PER_CONNECTION,
    dnsTimeout: SMTP_DNS_TIMEOUT_MS,
    connectionTimeout: SMTP_CONNECTION_TIMEOUT_MS,
    greetingTimeout: SMTP_GREETING_TIMEOUT_MS,
    socketTimeout: SMTP_SOCKET_IDLE_TIMEOUT_MS,
  });
  const composer = createComposer(from, domain);
  return {
    async send(message) {
      // The message is built whole first and handed to the connection as one buffer: built on the
      // connection, nodemailer writes every MIME piece (each header, each encoded line) to the
      // socket as it comes, a system call each, which was a fifth of a send's CPU.
      const { raw, envelope, message_id } = await composer.compose(message);
      let info: SMTPSentMessageInfo;
      try {
        info = await transport.sendMail({ envelope, raw, signal: AbortSignal.timeout(SEND_TIMEOUT_MS) });
      } catch (error) {
        throw deliveryError(error);
      }
      if (info.rejected.length > 0) throw new MailDeliveryError("EENVELOPE", null, "recipient rejected");
      return { message_id };
    },
    async close() {
      transport.close();
      composer.close();
    },
  };
}

type Composed = { raw: Buffer; envelope: { from: string | false; to: string[] }; message_id: string };

/** MAIL_FROM as a display name and an address, when it is that simple (else null: nodemailer parses it). */
export function parseMailbox(mail_from: string): { name: string; address: string } | null {
  // A quoted name, or words of atext and dots; a comment or any other special is nodemailer's to read.
  const match =
    /^\s*(?:(?:"((?:[^"\\\r\n]|\\.)*)"|([A-Za-z0-9!#$%&'*+/=?^_`{|}~. -]*?))\s*)?<([^<>\s]+)>\s*$/.exec(
      mail_from,
    );
  const address = match ? match[3]! : mail_from.trim();
  const name = match ? (match[1]?.replace(/\\(.)/g, "$1") ?? match[2] ?? "") : "";
  return isPlainAddress(address) ? { name: name.trim(), address } : null;
}

/**
 * Builds complete messages (CRLF line ends, as SMTP and .eml files both want) without sending them:
 * mime-message.ts, or nodemailer for an address it does not take (a recipient or MAIL_FROM beyond
 * plain ASCII, which the API's validation does not let through today).
 */
function createComposer(
  from: string,
  domain: string,
): { compose(message: OutgoingEmail): Promise<Composed>; close(): void } {
  const sender = parseMailbox(from);
  // streamTransport with buffer renders the complete raw message instead of sending it. Its line
  // ends are CRLF throughout: nodemailer's own, and the bodies' (mailOptions).
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  return {
    async compose(given) {
      const message = { ...given, to: asciiRecipient(given.to) };
      if (sender !== null && isPlainAddress(message.to)) {
        if (!KEY_PATTERN.test(message.key)) throw new Error(`invalid message key "${message.key}"`);
        const message_id = `<${message.key}@${domain}>`;
        const raw = composeMime({
          from: message.from_name ? { name: message.from_name, address: sender.address } : sender,
          to: message.to,
          subject: message.subject,
          message_id,
          date: new Date(),
          headers: extraHeaders(message),
          text: crlf(message.text),
          html: crlf(message.html),
          attachments: message.attachments,
        });
        return { raw, envelope: { from: sender.address, to: [message.to] }, message_id };
      }
      const info = await transport.sendMail(mailOptions(message, from, domain));
      if (!Buffer.isBuffer(info.message)) throw new Error("stream transport did not return a buffer");
      return { raw: info.message, envelope: info.envelope, message_id: info.messageId };
    },
    close: () => transport.close(),
  };
}

/**
 * The recipient with an internationalized domain in its ASCII form (IDNA: `ann@bücher.example` ->
 * `ann@xn--bcher-kva.example`), the same mailbox to DNS and every relay, SMTPUTF8 or not. The API
 * refuses a non-ASCII mailbox name before the @ (orders/end-user.ts), which would need SMTPUTF8.
 */
export function asciiRecipient(address: string): string {
  const at = address.lastIndexOf("@");
  const domain = address.slice(at + 1);
  if (at < 0 || !/[\u0080-\u{10ffff}]/u.test(domain)) return address;
  const ascii = domainToASCII(domain);
  return ascii === "" ? address : `${address.slice(0, at)}@${ascii}`;
}

// Server replies often quote the recipient ("550 <ann@example.com>: no such user"), and job
// errors are logged and stored: keep the codes and the reply, never the address.
function deliveryError(error: unknown): MailDeliveryError {
  const failure = error as { code?: unknown; responseCode?: unknown; message?: unknown };
  const code = typeof failure.code === "string" ? failure.code : null;
  const response_code = typeof failure.responseCode === "number" ? failure.responseCode : null;
  const detail = String(failure.message ?? error)
    .replace(/[^\s<>"'(),;:]+@[^\s<>"'(),;:]+/g, "[address]")
    .slice(0, 300);
  return new MailDeliveryError(code, response_code, detail);
}

function createFileMailer(from: string, domain: string, mail_dir: string): Mailer {
  const composer = createComposer(from, domain);
  const directory = new MailDirectory(mail_dir);
  return {
    async send(message) {
      const { raw, message_id } = await composer.compose(message);
      await directory.writeAtomically(`${message.key}.eml`, raw);
      return { message_id };
    },
    async close() {
      composer.close();
    },
  };
}

/**
 * The mail directory. Readers see the old file or the new one, never half of one: the bytes go to
 * a temporary file, are flushed, and the file is renamed over the final name. Sending the same key
 * again replaces the file rather than adding a second one. A rename is durable only once the
 * directory is flushed: one directory flush covers every rename done before it starts, so emails
 * written side by side share flushes (a group commit) instead of paying one each.
 */
class MailDirectory {
  readonly #path: string;
  #created: Promise<unknown> | null = null;
  #flushing: Promise<void> | null = null;
  #next_flush: Promise<void> | null = null;

  constructor(directory: string) {
    this.#path = directory;
  }

  async writeAtomically(name: string, content: Buffer): Promise<void> {
    this.#created ??= mkdir(this.#path, { recursive: true }).catch((error: unknown) => {
      this.#created = null;
      throw error;
    });
    await this.#created;
    const final_path = path.join(this.#path, name);
    const temp_path = path.join(this.#path, `.${name}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      const file = await open(temp_path, "w", 0o600);
      try {
        await file.writeFile(content);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp_path, final_path);
    } catch (error) {
      await rm(temp_path, { force: true });
      throw error;
    }
    await this.#flushAfterNow();
  }

  /** Resolves once a directory flush that started after this call has finished. */
  #flushAfterNow(): Promise<void> {
    if (this.#flushing === null) {
      this.#flushing = this.#flush().finally(() => {
        this.#flushing = null;
      });
      return this.#flushing;
    }
    // A flush is running, but it may have started before our rename: wait for the next one,
    // which every caller arriving meanwhile shares.
    this.#next_flush ??= this.#flushing
      .catch(() => undefined)
      .then(() => {
        this.#next_flush = null;
        return this.#flushAfterNow();
      });
    return this.#next_flush;
  }

  async #flush(): Promise<void> {
    const dir = await open(this.#path, "r");
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}
