// Wire recorders for ES2+ tests: a mutual-TLS proxy between our client and the SM-DP+ simulator
// that keeps every request and answer as sent (headers and bytes), and a plain HTTP receiver for
// the simulator's HandleDownloadProgressInfo notifications that keeps each and answers 204 as our
// callback route does. What they keep is checked against a reference implementation (pySim).
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { after } from "node:test";
import type { TestCertificates } from "./tls.ts";

export type Exchange = {
  path: string;
  request: { headers: Record<string, string>; body: string };
  /** null: the SM-DP+ dropped the connection (a fault the test asked for), nothing was answered. */
  response: { status: number; headers: Record<string, string>; body: string } | null;
};

export type Notification = { path: string; headers: Record<string, string>; body: string };

/** A body is a few hundred bytes; this bounds what a broken peer can make us hold. */
const MAX_BODY_BYTES = 64 * 1024;

function readBody(stream: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    stream.on("data", (chunk: Buffer) => {
      total += chunk.length;
      if (total > MAX_BODY_BYTES) stream.destroy(new Error("body too large"));
      else chunks.push(chunk);
    });
    stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    stream.on("error", reject);
  });
}

function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)]));
}

/** A proxy that stands where the SM-DP+ is (its certificate, our client's CA) and records. */
export async function startRecordingProxy(
  target: string,
  certs: TestCertificates,
): Promise<{ url: string; exchanges: Exchange[] }> {
  const exchanges: Exchange[] = [];
  const server = https.createServer(
    { cert: certs.server.cert, key: certs.server.key, ca: certs.ca, requestCert: true },
    async (incoming, outgoing) => {
      const body = await readBody(incoming);
      const exchange: Exchange = {
        path: incoming.url ?? "",
        request: { headers: flatHeaders(incoming.headers), body },
        response: null,
      };
      exchanges.push(exchange);
      const forward = https.request(
        new URL(incoming.url ?? "/", target),
        {
          method: incoming.method,
          ca: certs.ca,
          cert: certs.client.cert,
          key: certs.client.key,
          agent: false,
          headers: { ...incoming.headers, host: new URL(target).host },
        },
        async (answer) => {
          const text = await readBody(answer);
          exchange.response = {
            status: answer.statusCode ?? 0,
            headers: flatHeaders(answer.headers),
            body: text,
          };
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers).end(text);
        },
      );
      // The SM-DP+ dropped the connection: so does the proxy, and the client hears nothing.
      forward.on("error", () => outgoing.socket?.destroy());
      forward.end(body);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, exchanges };
}

/** A stand-in for our callback route that records each notification and answers 204. */
export async function startNotificationRecorder(): Promise<{ url: string; notifications: Notification[] }> {
  const notifications: Notification[] = [];
  const server = http.createServer(async (incoming, outgoing) => {
    const body = await readBody(incoming);
    notifications.push({ path: incoming.url ?? "", headers: flatHeaders(incoming.headers), body });
    outgoing.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, notifications };
}
