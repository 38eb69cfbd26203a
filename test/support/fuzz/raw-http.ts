// A raw HTTP/1.1 client: requests sent as bytes (duplicate headers, `..`, invalid UTF-8 reach
// the server as sent).
import net from "node:net";
import { REQUEST_TIMEOUT_MS } from "./limits.ts";
import type { Answer } from "./state.ts";

/** Every code unit fits in one byte (latin1). */
export function isLatin1(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) return false;
  return true;
}

export function headerBytes(name: string, value: unknown): Buffer {
  // latin1: every code unit below 256 goes out as that byte; higher ones as UTF-8, like a careless client.
  const text = String(value);
  const line = Buffer.from(text, isLatin1(text) ? "latin1" : "utf8");
  return Buffer.concat([Buffer.from(`${name}: `, "latin1"), line, Buffer.from("\r\n", "latin1")]);
}

export async function rawHttp(
  port: number,
  method: string,
  target: string,
  headers: Array<[string, unknown]>,
  body: Buffer | null,
): Promise<Answer> {
  const lines: Buffer[] = [
    Buffer.from(`${method} `, "latin1"),
    Buffer.from(target, isLatin1(target) ? "latin1" : "utf8"),
    Buffer.from(" HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n", "latin1"),
  ];
  for (const [name, value] of headers) lines.push(headerBytes(name, value));
  const hasLength = headers.some(([name]) => name.toLowerCase() === "content-length");
  const chunked = headers.some(([name]) => name.toLowerCase() === "transfer-encoding");
  if (body !== null && !hasLength && !chunked)
    lines.push(Buffer.from(`content-length: ${body.length}\r\n`, "latin1"));
  lines.push(Buffer.from("\r\n", "latin1"));
  if (body !== null) {
    lines.push(
      chunked
        ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")])
        : body,
    );
  }
  const request = Buffer.concat(lines);
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`));
    }, REQUEST_TIMEOUT_MS);
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // The server may answer and close before reading all we sent (413, parser errors): keep the answer.
      if (chunks.length > 0 && (error.code === "ECONNRESET" || error.code === "EPIPE")) return;
      clearTimeout(timer);
      reject(error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    // No half-close: Node's server drops a connection whose client ended before the answer.
    // `connection: close` makes the server close it once it has answered.
    socket.write(request);
  });
  return parseResponse(raw, method);
}

export function parseResponse(raw: Buffer, method: string): Answer {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0)
    throw new Error(`malformed HTTP response (${raw.length} bytes): ${raw.toString("latin1").slice(0, 200)}`);
  const [statusLine, ...headerLines] = raw.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  let body = raw.subarray(end + 4);
  if (method === "HEAD" || status === 204 || status === 304) body = Buffer.alloc(0);
  else if (/chunked/i.test(headers["transfer-encoding"] ?? "")) body = dechunk(body);
  else if (headers["content-length"] !== undefined)
    body = body.subarray(0, Number(headers["content-length"]));
  return { status, headers, body, text: body.toString("utf8") };
}

export function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", offset);
    if (lineEnd < 0) break;
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString("latin1"), 16);
    if (!size) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
