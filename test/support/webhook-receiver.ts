// A real HTTP receiver for webhook tests and the chaos run: one server, one path per endpoint
// (`/hooks/<name>`), every request kept with its headers and body, each verified with the
// `standardwebhooks` package (the reference implementation, not ours) against the secrets the test
// registered for that path. How a path answers is up to the test: a status, or never.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after } from "node:test";
import { Webhook } from "standardwebhooks";

export type Received = {
  path: string;
  id: string;
  timestamp: number;
  signature: string;
  body: string;
  event: { id: string; type: string; created_at: string; data: any };
  /** The secrets (by position in `secrets`) whose standardwebhooks verification passed. */
  verified_with: number[];
  /** What the receiver answered (null: it never did). */
  answered: number | null;
  at_ms: number;
};

/** How a path answers its n-th request (0-based): a status, a status after a delay, or never. */
export type Behaviour = (
  n: number,
  received: Received,
) => number | "hang" | { status: number; delay_ms: number };

export type WebhookReceiver = {
  url: string;
  /** The URL of a named path; `secrets` verify its deliveries (set or replace them any time). */
  path(name: string, behaviour?: Behaviour): string;
  setSecrets(name: string, secrets: string[]): void;
  received(name?: string): Received[];
  /** Received requests of `name` answered 2xx. */
  succeeded(name?: string): Received[];
  close(): Promise<void>;
};

/** `autoClose: false` outside node:test (the chaos command line closes it itself). */
export async function startWebhookReceiver(options: { autoClose?: boolean } = {}): Promise<WebhookReceiver> {
  const behaviours = new Map<string, Behaviour>();
  const secrets = new Map<string, string[]>();
  const received: Received[] = [];
  const counts = new Map<string, number>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const name = (request.url ?? "").replace(/^\/hooks\//, "");
    const headers = {
      "webhook-id": String(request.headers["webhook-id"] ?? ""),
      "webhook-timestamp": String(request.headers["webhook-timestamp"] ?? ""),
      "webhook-signature": String(request.headers["webhook-signature"] ?? ""),
    };
    const verified_with = (secrets.get(name) ?? []).flatMap((secret, index) => {
      try {
        new Webhook(secret).verify(body, headers);
        return [index];
      } catch {
        return [];
      }
    });
    const entry: Received = {
      path: name,
      id: headers["webhook-id"],
      timestamp: Number(headers["webhook-timestamp"]),
      signature: headers["webhook-signature"],
      body,
      event: JSON.parse(body),
      verified_with,
      answered: null,
      at_ms: Date.now(),
    };
    received.push(entry);
    const n = counts.get(name) ?? 0;
    counts.set(name, n + 1);
    const answer = (behaviours.get(name) ?? (() => 204))(n, entry);
    if (answer === "hang") {
      hanging.add(response);
      return;
    }
    const { status, delay_ms } = typeof answer === "number" ? { status: answer, delay_ms: 0 } : answer;
    if (delay_ms > 0) {
      hanging.add(response);
      await new Promise((resolve) => setTimeout(resolve, delay_ms));
      hanging.delete(response);
    }
    // A sender that died meanwhile never hears the answer: it does not count as answered.
    if (request.socket.destroyed) return;
    entry.answered = status;
    response.writeHead(status, { "content-type": "text/plain" }).end("ok");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    for (const response of hanging) response.destroy();
    server.closeAllConnections();
    server.close();
  };
  if (options.autoClose ?? true) after(close);
  const ok = (entry: Received) => entry.answered !== null && entry.answered >= 200 && entry.answered < 300;
  return {
    url,
    path(name, behaviour) {
      if (behaviour) behaviours.set(name, behaviour);
      return `${url}/hooks/${name}`;
    },
    setSecrets(name, list) {
      secrets.set(name, list);
    },
    received: (name) => received.filter((entry) => name === undefined || entry.path === name),
    succeeded: (name) => received.filter((entry) => (name === undefined || entry.path === name) && ok(entry)),
    close,
  };
}
