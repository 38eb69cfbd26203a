// Airalo's Partner API v2 over HTTP: the bearer token, our rate limits, one call's timeout, and the
// one mapping from Airalo's answers to what they mean for us (docs/suppliers/airalo.md §7):
//
//   ok         2xx
//   refused    definitive, nothing made: 422 with a business code that says no (11 credit, 14
//              checksum, 23 top-up disabled, 33 stock, 34 package invalid or out of stock, 43 bad
//              request, 73 recycled), or a 422 validation answer ({data: {field: message}} or
//              {data: [], meta: {message}}: Laravel validates before it does anything)
//   not_done   nothing made, ask again later: 429 "Too Many Attempts." (throttled before the
//              handler), 401 (authentication comes before the handler), code 13 (operator
//              maintenance, "Please try again later"), our own bucket or token not available, a
//              connection refused
//   not_found  404 {"data": [], "meta": {"message": "messages.resource_not_found"}}
//   unknown    anything else: 5xx, code 53 ("Something unexpected happened"), a code we do not know,
//              a timeout, a connection cut after the request was sent, an unreadable body. For a
//              POST this means Airalo may have made the order: it is looked up before any repeat.
//
// POST bodies are multipart/form-data, as the docs' curl examples send them (§1; the fake accepts
// the SDKs' JSON and urlencoded forms too). A 401 refreshes the token; only a GET is then asked
// again with the new one (a POST's 401 is not_done, and its caller decides).
import { describeFailure, parseJson, readCapped } from "../supplier-http.ts";
import { type AiraloFetch, MAX_REASON_LENGTH, MAX_RESPONSE_BYTES } from "./config.ts";
import type { Family, RateLimits } from "./rate-limit.ts";
import { type AiraloToken, TokenUnavailable } from "./token.ts";

export type Verdict =
  | { kind: "ok"; status: number; body: unknown }
  | { kind: "refused"; reason: string; code: number | null }
  | { kind: "not_done"; reason: string }
  | { kind: "not_found" }
  | { kind: "unknown"; reason: string };

/** Business codes that refuse (docs/suppliers/airalo.md §7, [DOC:error-handling-780831m0]). */
const REFUSING_CODES = new Set([11, 14, 23, 33, 34, 43, 73]);
/** "...currently undergoing maintenance. Please try again later.": nothing made, try later. */
const TRY_LATER_CODES = new Set([13]);

export type CallOptions = {
  query?: Record<string, string>;
  /** A POST's fields (arrays become `name[]` parts); absent: a GET. */
  form?: Record<string, string | string[]>;
  limits?: [Family, string][];
};

type Raw =
  | { kind: "answer"; status: number; body: unknown }
  | { kind: "failed"; reason: string; sent: boolean };

export class AiraloClient {
  readonly #base_url: string;
  readonly #timeout_ms: number;
  readonly #fetch: AiraloFetch;
  readonly #limits: RateLimits;
  #token: AiraloToken | null = null;

  constructor(base_url: string, timeout_ms: number, fetcher: AiraloFetch, limits: RateLimits) {
    this.#base_url = base_url.replace(/\/+$/, "");
    this.#timeout_ms = timeout_ms;
    this.#fetch = fetcher;
    this.#limits = limits;
  }

  useToken(token: AiraloToken): void {
    this.#token = token;
  }

  /** POST /v2/token (multipart, as documented); the token's own bucket: 3 a minute. */
  async requestToken(
    client_id: string,
    client_secret: string,
  ): Promise<{ access_token: string; expires_in_s: number } | { failure: string }> {
    if (!(await this.#limits.acquire([["token", client_id]])))
      return { failure: "Airalo token requests are rate limited (3 a minute); try again shortly" };
    const raw = await this.#exchange("POST", "/token", undefined, {
      client_id,
      client_secret,
      grant_type: "client_credentials",
    });
    if (raw.kind === "failed") return { failure: `Airalo token request failed: ${raw.reason}` };
    const data = dataOf(raw.body);
    const access_token = data?.access_token;
    const expires_in = Number(data?.expires_in);
    if (raw.status !== 200 || typeof access_token !== "string" || access_token === "") {
      return {
        failure: `Airalo refused the token request (HTTP ${raw.status}); check AIRALO_CLIENT_ID/SECRET`,
      };
    }
    return { access_token, expires_in_s: Number.isFinite(expires_in) && expires_in > 0 ? expires_in : 3600 };
  }

  async call(path: string, options: CallOptions = {}): Promise<Verdict> {
    const method = options.form === undefined ? "GET" : "POST";
    if (!(await this.#limits.acquire(options.limits ?? []))) {
      return { kind: "not_done", reason: `Airalo's rate limit for ${path} is used up here; try again later` };
    }
    let answer = await this.#authorized(method, path, options);
    if (answer.kind === "answer" && isUnauthenticated(answer) && method === "GET") {
      answer = await this.#authorized(method, path, options); // the token was refreshed meanwhile
    }
    if (answer.kind === "failed") {
      return answer.sent
        ? { kind: "unknown", reason: answer.reason }
        : { kind: "not_done", reason: answer.reason };
    }
    return classify(answer.status, answer.body);
  }

  async #authorized(method: "GET" | "POST", path: string, options: CallOptions): Promise<Raw> {
    if (this.#token === null) throw new Error("AiraloClient: no token source");
    let token: string;
    try {
      token = await this.#token.get();
    } catch (error) {
      if (error instanceof TokenUnavailable) return { kind: "failed", reason: error.message, sent: false };
      throw error;
    }
    const raw = await this.#exchange(method, path, token, options.form, options.query);
    if (raw.kind === "answer" && isUnauthenticated(raw)) this.#token.invalidate(token);
    return raw;
  }

  /** One request; never throws for the network's sake. */
  async #exchange(
    method: "GET" | "POST",
    path: string,
    token: string | undefined,
    form?: Record<string, string | string[]>,
    query?: Record<string, string>,
  ): Promise<Raw> {
    const url = new URL(this.#base_url + path);
    for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, value);
    let body: FormData | undefined;
    if (form !== undefined) {
      body = new FormData();
      for (const [name, value] of Object.entries(form)) {
        if (Array.isArray(value)) for (const one of value) body.append(`${name}[]`, one);
        else body.append(name, value);
      }
    }
    const headers: Record<string, string> = { accept: "application/json" };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    try {
      const response = await this.#fetch(url, {
        method,
        headers,
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeout_ms),
      });
      const text = await readCapped(response, MAX_RESPONSE_BYTES);
      if (text === null)
        return { kind: "failed", reason: `Airalo answer exceeds ${MAX_RESPONSE_BYTES} bytes`, sent: true };
      return { kind: "answer", status: response.status, body: parseJson(text) };
    } catch (error) {
      return {
        kind: "failed",
        ...describeFailure(error, {
          supplier: "Airalo",
          timeout_ms: this.#timeout_ms,
          max_length: MAX_REASON_LENGTH,
        }),
      };
    }
  }
}

/** The one mapping of an Airalo answer (see the top of this file). */
export function classify(status: number, body: unknown): Verdict {
  if (status >= 200 && status < 300) return { kind: "ok", status, body };
  if (status === 429) return { kind: "not_done", reason: "Airalo answered 429 Too Many Attempts" };
  if (status === 401 && isAuthorizationDenial(body)) {
    return {
      kind: "unknown",
      reason: "Airalo answered 401 This action is unauthorized. (not an order of this account?)",
    };
  }
  if (status === 401) return { kind: "not_done", reason: "Airalo answered 401 (token refreshed; ask again)" };
  if (
    status === 404 &&
    isObject(body) &&
    isObject(body.meta) &&
    body.meta.message === "messages.resource_not_found"
  ) {
    return { kind: "not_found" };
  }
  if (status === 422 && isObject(body)) {
    if (typeof body.code === "number" || (typeof body.code === "string" && /^\d+$/.test(body.code))) {
      const code = Number(body.code);
      const reason = `Airalo error ${code}: ${clip(String(body.reason ?? ""))}`;
      if (REFUSING_CODES.has(code)) return { kind: "refused", reason, code };
      if (TRY_LATER_CODES.has(code)) return { kind: "not_done", reason };
      return { kind: "unknown", reason };
    }
    const validation = validationMessage(body);
    if (validation !== null) return { kind: "refused", reason: `Airalo: ${validation}`, code: null };
  }
  return { kind: "unknown", reason: `Airalo answered HTTP ${status}` };
}

/** {data: {field: message}, meta} or {data: [], meta: {message}} (Laravel's validation answers). */
function validationMessage(body: Record<string, unknown>): string | null {
  const meta = isObject(body.meta) ? body.meta : null;
  if (meta === null || typeof meta.message !== "string") return null;
  const data = body.data;
  if (isObject(data) && Object.keys(data).length > 0) {
    return clip(
      Object.entries(data)
        .map(([field, message]) => `${field}: ${String(message)}`)
        .join("; "),
    );
  }
  return clip(meta.message);
}

/**
 * GET /v2/orders/{id} answers another account's order with 401 {"data": [], "meta": {"message":
 * "This action is unauthorized."}} ([DOC:get-order-11883023e0], §6): a denial, not a bad token,
 * so it neither refreshes the token (3 a minute) nor is asked again.
 */
function isAuthorizationDenial(body: unknown): boolean {
  return isObject(body) && isObject(body.meta) && body.meta.message === "This action is unauthorized.";
}

function isUnauthenticated(raw: { status: number; body: unknown }): boolean {
  return raw.status === 401 && !isAuthorizationDenial(raw.body);
}

export function dataOf(body: unknown): Record<string, unknown> | null {
  return isObject(body) && isObject(body.data) ? body.data : null;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const clip = (text: string) => text.slice(0, MAX_REASON_LENGTH);
