// A real SMTP server for tests (smtp-server on 127.0.0.1, an ephemeral port, no TLS, no auth):
// the service under test speaks real SMTP, and the test reads exactly what a relay would receive.
// Also a small MIME reader, enough to assert on the parts of the messages nodemailer builds.
import { SMTPServer } from "smtp-server";

export type ReceivedMessage = {
  /** The message exactly as received after DATA (CRLF line endings). */
  raw: string;
  envelope: { mail_from: string | null; rcpt_to: string[] };
};

export type TestSmtpServer = {
  /** `smtp://127.0.0.1:PORT`, ready for SMTP_URL / createMailer. */
  url: string;
  /** Every accepted message, in arrival order. Rejected ones (failNext) are not here. */
  messages: ReceivedMessage[];
  /** Resolves once at least `count` messages were accepted; rejects after `timeout_ms`. */
  waitFor(count: number, timeout_ms?: number): Promise<ReceivedMessage[]>;
  /** Answers the next `n` messages with `451 4.3.0` (temporary failure) after reading them. */
  failNext(n: number): void;
  close(): Promise<void>;
};

const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * Starts the server; with `answer_after_ms` it answers each message that much later (a slow relay,
 * so a test can catch sends in flight). Its listening socket is unref'd, so a test file that forgets close() still
 * exits; close() it anyway when done.
 */
export async function startSmtpServer(options: { answer_after_ms?: number } = {}): Promise<TestSmtpServer> {
  const messages: ReceivedMessage[] = [];
  const waiters = new Set<() => void>();
  let failures_left = 0;

  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    size: MAX_MESSAGE_BYTES,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      // Kept even when the client went away while we waited to answer (answer_after_ms): the relay
      // then holds a message whose sender never heard back, as a relay may.
      const answer = () => {
        if (stream.sizeExceeded) return callback(smtpError(552, "5.3.4 Message too large"));
        if (failures_left > 0) {
          failures_left -= 1;
          return callback(smtpError(451, "4.3.0 Temporary failure, try again later (test)"));
        }
        const { mailFrom, rcptTo } = session.envelope;
        messages.push({
          raw: Buffer.concat(chunks).toString("utf8"),
          envelope: {
            mail_from: mailFrom ? mailFrom.address : null,
            rcpt_to: rcptTo.map((recipient) => recipient.address),
          },
        });
        for (const wake of waiters) wake();
        callback(null, "OK: queued");
      };
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => setTimeout(answer, options.answer_after_ms ?? 0));
    },
  });

  // A client that dies mid-conversation (an API process SIGKILLed while sending) resets its
  // connection: the client's failure, which must not crash the test process with an unhandled
  // 'error' event. The message it was sending is simply not received, as with a real relay.
  server.on("error", () => undefined);

  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.server.address();
  if (typeof address !== "object" || address === null) throw new Error("SMTP server has no port");

  server.server.unref();
  let closed: Promise<void> | null = null;
  const close = () => {
    closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
    return closed;
  };

  return {
    url: `smtp://127.0.0.1:${address.port}`,
    messages,
    waitFor: (count, timeout_ms = 10_000) => waitForCount(messages, waiters, count, timeout_ms),
    failNext(n) {
      failures_left = n;
    },
    close,
  };
}

function smtpError(response_code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: response_code });
}

function waitForCount(
  messages: ReceivedMessage[],
  waiters: Set<() => void>,
  count: number,
  timeout_ms: number,
): Promise<ReceivedMessage[]> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (messages.length < count) return;
      clearTimeout(timer);
      waiters.delete(check);
      resolve(messages.slice());
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`expected ${count} messages within ${timeout_ms} ms, received ${messages.length}`));
    }, timeout_ms);
    waiters.add(check);
    check();
  });
}

// MIME reading: just what nodemailer produces (RFC 2045-2047 bodies, multipart nesting).

export type MimePart = {
  /** Lower-cased header names; values unfolded. */
  headers: Map<string, string>;
  /** Media type without parameters, lower-cased: `text/html`, `image/png`. */
  content_type: string;
  /** The decoded body (base64 and quoted-printable undone). */
  body: Buffer;
};

export type ParsedMessage = { headers: Map<string, string>; parts: MimePart[] };

/** Splits a raw message into its headers and its leaf parts, depth first. */
export function parseMessage(raw: string): ParsedMessage {
  const { headers, body } = splitEntity(raw);
  return { headers, parts: leafParts(headers, body) };
}

/** The decoded text of the first part of this media type, e.g. `text/html`. */
export function partText(message: ParsedMessage, content_type: string): string {
  const part = message.parts.find((candidate) => candidate.content_type === content_type);
  if (!part) throw new Error(`no ${content_type} part`);
  return part.body.toString("utf8");
}

function splitEntity(entity: string): { headers: Map<string, string>; body: string } {
  const end = entity.indexOf("\r\n\r\n");
  const head = end === -1 ? entity : entity.slice(0, end);
  const body = end === -1 ? "" : entity.slice(end + 4);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function leafParts(headers: Map<string, string>, body: string): MimePart[] {
  const content_type_header = headers.get("content-type") ?? "text/plain";
  const content_type = (content_type_header.split(";")[0] ?? "").trim().toLowerCase();
  if (!content_type.startsWith("multipart/")) {
    return [{ headers, content_type, body: decodeBody(headers.get("content-transfer-encoding"), body) }];
  }
  const boundary = /boundary="?([^";]+)"?/i.exec(content_type_header)?.[1];
  if (!boundary) throw new Error("multipart without a boundary");
  const sections = body.split(`--${boundary}`);
  // sections[0] is the preamble; the last starts with "--" (the closing delimiter) and the epilogue.
  return sections
    .slice(1, -1)
    .map((section) => splitEntity(section.replace(/^\r\n/, "").replace(/\r\n$/, "")))
    .flatMap((part) => leafParts(part.headers, part.body));
}

function decodeBody(encoding: string | undefined, body: string): Buffer {
  switch ((encoding ?? "7bit").toLowerCase()) {
    case "base64":
      return Buffer.from(body.replace(/\s+/g, ""), "base64");
    case "quoted-printable":
      return Buffer.from(
        body
          .replace(/=\r\n/g, "")
          .replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
        "latin1",
      );
    default:
      return Buffer.from(body, "utf8");
  }
}
