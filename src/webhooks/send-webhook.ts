// One delivery attempt: POST the event to the endpoint over a fresh connection (no keep-alive, so
// every attempt resolves and checks the address again), within `timeout_ms` for everything, reading
// at most MAX_RESPONSE_BYTES of the answer, following no redirect. Never throws: every way an
// attempt can end is an AttemptResult, recorded on the delivery.
import http from "node:http";
import https from "node:https";
import { guardedLookup, ipLiteral, isPublicAddress } from "./target-address.ts";

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

export function sendWebhook(attempt: Attempt): Promise<AttemptResult> {
  let url: URL;
  try {
    url = new URL(attempt.url);
  } catch {
    return Promise.resolve(failed(null, "refused: the URL does not parse"));
  }
  const refused = refusal(url, attempt.allow_private);
  if (refused !== null) return Promise.resolve(failed(null, refused));
  return new Promise((resolve) => {
    let result: AttemptResult | null = null;
    const finish = (value: AttemptResult) => {
      result ??= value;
      clearTimeout(timer);
      request.destroy();
      resolve(result);
    };
    const client = url.protocol === "https:" ? https : http;
    const request = client.request(
      url,
      {
        method: "POST",
        agent: false,
        lookup: guardedLookup(attempt.allow_private) as never,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(attempt.body),
          "user-agent": "esim-webhooks/1",
          ...attempt.headers,
        },
      },
      (response) => {
        // The status decides; the body is drained (bounded) so the receiver sees its answer read.
        result = outcome(response.statusCode ?? 0);
        let read = 0;
        response.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) finish(result!);
        });
        response.on("end", () => finish(result!));
        response.on("error", () => finish(result!));
      },
    );
    const timer = setTimeout(
      () => finish(failed(null, `no answer within ${attempt.timeout_ms} ms`)),
      attempt.timeout_ms,
    );
    request.on("error", (error) => finish(failed(null, error.message || error.name)));
    request.end(attempt.body);
  });
}
