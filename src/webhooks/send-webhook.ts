// One delivery attempt: POST the event to the endpoint within `timeout_ms` for everything, reading
// at most MAX_RESPONSE_BYTES of the answer, following no redirect. Never throws: every way an
// attempt can end is an AttemptResult, recorded on the delivery.
//
// Connections are kept open between attempts, as senders at this volume do: a new TCP (and TLS)
// connection per delivery cost more than the delivery itself (bench/README.md, "Session 6"). The
// address rule still holds on every byte sent: a connection is checked when it opens (the guarded
// lookup), so a kept one is to an address that was checked. A connection is kept idle at most
// KEEP_ALIVE_IDLE_MS (less if the receiver's `Keep-Alive: timeout` says so) and closed once free
// past MAX_CONNECTION_AGE_MS, so a receiver's DNS change reaches even a busy endpoint within about a
// minute. Each address rule has its own agents: a socket opened under WEBHOOK_ALLOW_PRIVATE_NETWORKS
// never serves a sender without it.
import http from "node:http";
import https from "node:https";
import { guardedLookup, ipLiteral, isPublicAddress } from "./target-address.ts";

/** How long an idle connection to a receiver is kept (Node's own server closes them after 5 s). */
export const KEEP_ALIVE_IDLE_MS = 4_000;
/** A connection is not reused past this age (counted from its first answer); a new one resolves again. */
export const MAX_CONNECTION_AGE_MS = 60_000;

/** The receiver's answer body is read this far, then the connection is dropped (we keep none of it). */
export const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_ERROR_CHARS = 500;

export type Attempt = {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeout_ms: number;
  allow_private: boolean;
};

export type AttemptResult =
  | { kind: "succeeded"; status: number }
  | { kind: "gone"; status: 410 }
  | { kind: "failed"; status: number | null; error: string };

function failed(status: number | null, error: string): AttemptResult {
  return { kind: "failed", status, error: error.slice(0, MAX_ERROR_CHARS) };
}

/** https only, unless private networks are allowed (which also allows http); a literal IP must be public. */
export function refusal(url: URL, allow_private: boolean): string | null {
  if (url.protocol !== "https:" && !(allow_private && url.protocol === "http:")) {
    return `refused: ${url.protocol} URLs are not called, only https:`;
  }
  const literal = ipLiteral(url);
  if (literal !== null && !allow_private && !isPublicAddress(literal)) {
    return `refused: ${literal} is not a public address`;
  }
  return null;
}

function outcome(status: number): AttemptResult {
  if (status >= 200 && status < 300) return { kind: "succeeded", status };
  if (status === 410) return { kind: "gone", status: 410 };
  if (status >= 300 && status < 400) return failed(status, `HTTP ${status}: redirects are not followed`);
  return failed(status, `HTTP ${status}`);
}

/** The agent of one scheme and address rule (exported for its test, with a shorter age). */
export function keptAliveAgent(
  client: typeof http | typeof https,
  allow_private: boolean,
  max_age_ms = MAX_CONNECTION_AGE_MS,
): http.Agent {
  const first_answer_at = new WeakMap<object, number>();
  const Base: typeof http.Agent = client.Agent; // https.Agent is an http.Agent
  class AgedAgent extends Base {
    override keepSocketAlive(socket: Parameters<http.Agent["keepSocketAlive"]>[0]) {
      const now = Date.now();
      const since = first_answer_at.get(socket) ?? now;
      first_answer_at.set(socket, since);
      // Falsy: Node closes the socket instead of keeping it.
      return now - since > max_age_ms ? (false as never) : super.keepSocketAlive(socket);
    }
  }
  // The lookup is the agent's, not the request's: every socket it opens is checked by it.
  const lookup = guardedLookup(allow_private) as never;
  return new AgedAgent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS, lookup } as http.AgentOptions);
}

const agents = {
  "http:": { strict: keptAliveAgent(http, false), permissive: keptAliveAgent(http, true) },
  "https:": { strict: keptAliveAgent(https, false), permissive: keptAliveAgent(https, true) },
};

/**
 * An error on a kept connection the receiver had closed, before any answer. Most often nothing was
 * delivered; a receiver that crashed while handling it may have had it, and gets it again (at least
 * once, with the same webhook-id).
 */
type Attempted = AttemptResult | { kind: "stale_connection" };

export async function sendWebhook(attempt: Attempt): Promise<AttemptResult> {
  let url: URL;
  try {
    url = new URL(attempt.url);
  } catch {
    return failed(null, "refused: the URL does not parse");
  }
  const refused = refusal(url, attempt.allow_private);
  if (refused !== null) return failed(null, refused);
  const agent = agents[url.protocol as "http:" | "https:"][attempt.allow_private ? "permissive" : "strict"];
  const deadline = Date.now() + attempt.timeout_ms;
  const first = await post(url, attempt, agent, attempt.timeout_ms);
  if (first.kind !== "stale_connection") return first;
  // Asked again once, on a connection of its own, within what is left of the same timeout.
  const again = await post(url, attempt, agent, Math.max(1, deadline - Date.now()), true);
  return again.kind === "stale_connection" ? failed(null, "connection reset by the receiver") : again;
}

function post(
  url: URL,
  attempt: Attempt,
  agent: http.Agent,
  timeout_ms: number,
  fresh = false,
): Promise<Attempted> {
  return new Promise((resolve) => {
    let settled = false;
    // Kept alive only after a whole answer: any other end destroys the connection.
    const finish = (value: Attempted, keep = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!keep) request.destroy();
      resolve(value);
    };
    const client = url.protocol === "https:" ? https : http;
    const request = client.request(
      url,
      {
        method: "POST",
        // The retry after a stale connection opens one of its own, checked by the same lookup.
        ...(fresh ? { agent: false, lookup: guardedLookup(attempt.allow_private) as never } : { agent }),
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(attempt.body),
          "user-agent": "esim-webhooks/1",
          ...attempt.headers,
        },
      },
      (response) => {
        // The status decides; the body is drained (bounded) so the receiver sees its answer read.
        const result = outcome(response.statusCode ?? 0);
        let read = 0;
        response.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) finish(result);
        });
        response.on("end", () => finish(result, true));
        response.on("error", () => finish(result));
        response.on("aborted", () => finish(result));
      },
    );
    const timer = setTimeout(
      () => finish(failed(null, `no answer within ${attempt.timeout_ms} ms`)),
      timeout_ms,
    );
    request.on("error", (error: Error & { code?: string }) => {
      const answered = (request as { res?: unknown }).res != null;
      const stale = error.code === "ECONNRESET" || error.code === "EPIPE";
      if (request.reusedSocket && stale && !answered) {
        return finish({ kind: "stale_connection" });
      }
      finish(failed(null, error.message || error.name));
    });
    request.end(attempt.body);
  });
}
