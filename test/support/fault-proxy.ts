// A real HTTP proxy between a client and a service process, for tests of what clients do when
// the network misbehaves: each request is forwarded (node:http) unless a queued fault matching
// it says otherwise. Faults: forward but drop the answer (the service did the work, the client
// never hears), wait before forwarding (a while, or until the test says), or answer itself
// without forwarding (a 409 or a 429 with Retry-After). Every request seen is logged with its
// headers and arrival time. Between a service and its carrier it holds a carrier call.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after } from "node:test";

export type Fault =
  | { kind: "drop_response" }
  | { kind: "delay"; ms: number }
  /** Forward once `until` resolves: the request is in flight for as long as the test wants. */
  | { kind: "hold"; until: Promise<void> }
  | { kind: "respond"; status: number; headers?: Record<string, string>; body?: unknown };

export type SeenRequest = {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at_ms: number;
  fault: Fault["kind"] | null;
};

export type FaultProxy = {
  url: string;
  /** Queue a fault for the next request matching `method` and `path` (the path without its query). */
  inject: (method: string, path: string, fault: Fault) => void;
  /** Requests seen so far, in arrival order. */
  seen: (method?: string, path?: string) => SeenRequest[];
  close: () => Promise<void>;
};

/** Bodies above this are refused: the service refuses them anyway (64 KiB). */
const MAX_BODY_BYTES = 1024 * 1024;

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const faults: { method: string; path: string; fault: Fault }[] = [];
  const log: SeenRequest[] = [];
  const handle = async (request: http.IncomingMessage, response: http.ServerResponse) => {
    const body = await readBody(request);
    const path = (request.url ?? "/").split("?")[0]!;
    const index = faults.findIndex((f) => f.method === request.method && f.path === path);
    const fault = index === -1 ? null : faults.splice(index, 1)[0]!.fault;
    log.push({
      method: request.method ?? "GET",
      path,
      headers: request.headers,
      body,
      at_ms: performance.now(),
      fault: fault?.kind ?? null,
    });
    if (fault?.kind === "respond") {
      response.writeHead(fault.status, { "content-type": "application/problem+json", ...fault.headers });
      response.end(fault.body === undefined ? "" : JSON.stringify(fault.body));
      return;
    }
    if (fault?.kind === "delay") await new Promise((resolve) => setTimeout(resolve, fault.ms));
    if (fault?.kind === "hold") await fault.until;
    const upstream = await forward(target, request, body);
    if (fault?.kind === "drop_response") {
      // The service has answered in full (its work is done); the client's connection dies unanswered.
      request.socket.destroy();
      return;
    }
    response.writeHead(upstream.status, upstream.headers);
    response.end(upstream.body);
  };
  // A request the proxy cannot forward (the service is gone) is a dropped connection to the client.
  const server = http.createServer((request, response) => {
    handle(request, response).catch(() => request.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  after(close);
  return {
    url: `http://127.0.0.1:${port}`,
    inject: (method, path, fault) => faults.push({ method, path, fault }),
    seen: (method, path) =>
      log.filter(
        (r) => (method === undefined || r.method === method) && (path === undefined || r.path === path),
      ),
    close,
  };
}

async function readBody(request: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("request body too large for the test proxy");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function forward(
  target: string,
  request: http.IncomingMessage,
  body: string,
): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === "host" || name === "connection" || name === "content-length")
      continue;
    headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  const answer = await fetch(target + (request.url ?? "/"), {
    method: request.method,
    headers,
    // No body at all when none came: fetch would label an empty string text/plain (a 415).
    body: request.method === "GET" || request.method === "HEAD" || body === "" ? undefined : body,
    signal: AbortSignal.timeout(30_000),
  });
  const answered: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    if (name !== "content-length" && name !== "transfer-encoding" && name !== "content-encoding")
      answered[name] = value;
  });
  return { status: answer.status, headers: answered, body: Buffer.from(await answer.arrayBuffer()) };
}
