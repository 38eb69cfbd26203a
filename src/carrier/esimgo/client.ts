// eSIM Go's API v2.4 over HTTP: the X-API-Key, our rate limit, one call's timeout, and the one
// mapping from eSIM Go's answers to what they mean for us (docs/suppliers/esimgo.md §7). Every
// error is `{"message": "..."}` ([DOC:guides/rate_limits/]):
//
//   ok         2xx
//   rejected   400 {message}: "Bad Request - returned when request format is not accepted", and on
//              lookups "the given ICCID is not found" (a 400, not a 404). eSIM Go validates before
//              it orders, so for POST /orders this is a refusal with nothing made (insufficient
//              balance, unknown bundle, incompatible eSIM: their texts are UNCONFIRMED, so the
//              status decides, not the text); for a GET it is "no such ICCID/order". The caller says.
//   not_done   nothing made, ask again later: 401 and 403 (the key is missing or invalid: checked
//              before the handler; a misconfiguration an operator must fix), 429 "Rate limit
//              exceeded" (counted before anything else), 404 (no such route: a wrong
//              ESIMGO_API_URL), our own rate limit, a connection refused or a name not resolved
//   gone       410 (a deactivated eSIM's install details)
//   unknown    anything else: 5xx (503 "Processing - Please come back later" included: an order may
//              be under way), a timeout, a connection cut after the request was sent, an unreadable
//              body. For a POST this means eSIM Go may have made the order: looked up before any repeat.
import { describeFailure, parseJson, readCapped } from "../supplier-http.ts";
import { type EsimGoFetch, MAX_REASON_LENGTH, MAX_RESPONSE_BYTES } from "./config.ts";
import type { RateLimit } from "./rate-limit.ts";

export type Verdict =
  | { kind: "ok"; status: number; body: unknown }
  | { kind: "rejected"; message: string }
  | { kind: "not_done"; reason: string }
  | { kind: "gone"; message: string }
  | { kind: "unknown"; reason: string };

export type CallOptions = {
  method?: "GET" | "POST" | "PUT" | "DELETE";
  /** Repeated parameters (`createdAt=gte:…&createdAt=lte:…`) as arrays. */
  query?: Record<string, string | string[]>;
  /** A JSON body. */
  json?: unknown;
};

type Raw =
  | { kind: "answer"; status: number; body: unknown }
  | { kind: "failed"; reason: string; sent: boolean };

export class EsimGoClient {
  readonly #base_url: string;
  readonly #api_key: string;
  readonly #timeout_ms: number;
  readonly #fetch: EsimGoFetch;
  readonly #limit: RateLimit;

  constructor(base_url: string, api_key: string, timeout_ms: number, fetcher: EsimGoFetch, limit: RateLimit) {
    this.#base_url = base_url.replace(/\/+$/, "");
    this.#api_key = api_key;
    this.#timeout_ms = timeout_ms;
    this.#fetch = fetcher;
    this.#limit = limit;
  }

  async call(path: string, options: CallOptions = {}): Promise<Verdict> {
    const method = options.method ?? "GET";
    if (!(await this.#limit.acquire())) {
      return {
        kind: "not_done",
        reason: `eSIM Go's rate limit (10 requests a second) is used up here; ${method} ${path} not sent`,
      };
    }
    const raw = await this.#exchange(method, path, options);
    if (raw.kind === "failed") {
      return raw.sent ? { kind: "unknown", reason: raw.reason } : { kind: "not_done", reason: raw.reason };
    }
    return classify(raw.status, raw.body);
  }

  /** One request; never throws for the network's sake. */
  async #exchange(method: string, path: string, options: CallOptions): Promise<Raw> {
    const url = new URL(this.#base_url + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      for (const one of [value].flat()) url.searchParams.append(name, one);
    }
    // JSON always: install details are CSV unless asked otherwise (§3, [DOC:api/v2_4/operations/esimsassignments/get]).
    const headers: Record<string, string> = { accept: "application/json", "x-api-key": this.#api_key };
    if (options.json !== undefined) headers["content-type"] = "application/json";
    try {
      const response = await this.#fetch(url, {
        method,
        headers,
        body: options.json === undefined ? undefined : JSON.stringify(options.json),
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeout_ms),
      });
      const text = await readCapped(response, MAX_RESPONSE_BYTES);
      if (text === null)
        return { kind: "failed", reason: `eSIM Go answer exceeds ${MAX_RESPONSE_BYTES} bytes`, sent: true };
      return { kind: "answer", status: response.status, body: parseJson(text) };
    } catch (error) {
      return {
        kind: "failed",
        ...describeFailure(error, {
          supplier: "eSIM Go",
          timeout_ms: this.#timeout_ms,
          max_length: MAX_REASON_LENGTH,
        }),
      };
    }
  }
}

/** The one mapping of an eSIM Go answer (see the top of this file). */
export function classify(status: number, body: unknown): Verdict {
  const message = isObject(body) && typeof body.message === "string" ? clip(body.message) : "";
  if (status >= 200 && status < 300) {
    return body === undefined
      ? { kind: "unknown", reason: `eSIM Go answered HTTP ${status} with a body that is not JSON` }
      : { kind: "ok", status, body };
  }
  if (status === 400) return { kind: "rejected", message: message || "Bad Request" };
  if (status === 401 || status === 403) {
    return {
      kind: "not_done",
      reason: `eSIM Go answered ${status} ${message || "Unauthorised"}: check ESIMGO_API_KEY (and the account's IP allowlist)`,
    };
  }
  if (status === 429) return { kind: "not_done", reason: "eSIM Go answered 429 Rate limit exceeded" };
  if (status === 404)
    return { kind: "not_done", reason: `eSIM Go answered 404 ${message}: check ESIMGO_API_URL` };
  if (status === 410) return { kind: "gone", message: message || "Gone" };
  return { kind: "unknown", reason: `eSIM Go answered HTTP ${status}${message ? ` ${message}` : ""}` };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function reasonOf(verdict: Exclude<Verdict, { kind: "ok" }>): string {
  switch (verdict.kind) {
    case "rejected":
      return `eSIM Go answered 400 ${verdict.message}`;
    case "gone":
      return `eSIM Go answered 410 ${verdict.message}`;
    default:
      return verdict.reason;
  }
}

const clip = (text: string) => text.slice(0, MAX_REASON_LENGTH);
