// The one place that speaks HTTP: builds each attempt's request from immutable settings (no
// state shared between concurrent calls), runs it under a per-attempt timeout and the caller's
// AbortSignal, turns answers into values or typed errors, and retries what is safe to retry.
import { ApiError, ConnectionError, type ErrorCode, EsimSdkError, TimeoutError } from "../errors.ts";
import { isRetryableAnswer, parseRetryAfter, retryDelayMs, sleep } from "./retry.ts";

export const SDK_VERSION = "0.1.0";
/** Retrying more than this turns a failure into a long hang. */
export const MAX_RETRIES_LIMIT = 10;

/** Settings of one client, fixed at construction. */
export type ClientSettings = {
  apiKey: string;
  baseUrl: string;
  maxRetries: number;
  timeout: number;
  fetch: typeof fetch;
};

/** Per-call options, on every method's last argument. */
export type RequestOptions = {
  /** Retries after the first attempt (the client's `maxRetries` when absent). 0 turns retries off. */
  maxRetries?: number;
  /** Milliseconds per attempt, the whole answer included (the client's `timeout` when absent). */
  timeout?: number;
  /** Aborting it stops the call at once, between retries too; the call rejects with its reason. */
  signal?: AbortSignal;
  /** Extra headers for this call only. */
  headers?: Record<string, string>;
};

/** How a successful answer is read: parsed JSON (the default), text (CSV) or bytes (an image). */
export type ResponseAs = "json" | "text" | "bytes";

/** What a resource method asks the transport for. */
export type Call = {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | null | undefined>;
  body?: unknown;
  /**
   * True when repeating the request cannot do a thing twice (GETs, a submit by its cart_key, a
   * request with an Idempotency-Key). A call that is not is retried only on an answer in which
   * the API says it did nothing (429 `rate_limited`, 503 `service_unavailable`), never after a
   * lost answer or a timeout: the first attempt may have done its work.
   */
  idempotent: boolean;
  /**
   * A code that, answered to a retry (not to the first attempt), means the earlier attempt did
   * the work: a DELETE whose first answer was lost finds the thing gone. The call then resolves
   * as if that attempt had answered.
   */
  doneOnRetry?: ErrorCode;
  idempotencyKey?: string;
  /** The media type asked for (default application/json); errors come as problem+json whatever it is. */
  accept?: string;
  /** Default "json". */
  as?: ResponseAs;
};

export class Transport {
  readonly #settings: ClientSettings;

  constructor(settings: ClientSettings) {
    this.#settings = settings;
  }

  async request<T>(call: Call, options: RequestOptions = {}): Promise<T> {
    const maxRetries = checkedRetries(options.maxRetries ?? this.#settings.maxRetries);
    if (options.timeout !== undefined) checkedTimeout(options.timeout);
    for (let retry = 0; ; retry++) {
      const outcome = await this.#attempt<T>(call, options);
      if (outcome.ok) return outcome.value;
      if (retry > 0 && isCode(outcome.error, call.doneOnRetry)) return undefined as T;
      const retryable = call.idempotent ? outcome.retryable : isCode(outcome.error, ...NOTHING_DONE);
      if (!retryable || retry >= maxRetries) throw outcome.error;
      await sleep(retryDelayMs(retry, outcome.retryAfterMs), options.signal);
    }
  }

  async #attempt<T>(call: Call, options: RequestOptions): Promise<Outcome<T>> {
    const timeout = options.timeout ?? this.#settings.timeout;
    const timer = AbortSignal.timeout(timeout);
    const signal = options.signal ? AbortSignal.any([options.signal, timer]) : timer;
    try {
      const response = await this.#settings.fetch(this.#url(call), {
        method: call.method,
        headers: this.#headers(call, options),
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal,
      });
      // Read the whole body under the same deadline: a response cut after its headers is a failure.
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (response.ok) return { ok: true, value: successValue(bytes, call.as ?? "json") as T };
      const error = apiError(response, new TextDecoder().decode(bytes));
      const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
      return { ok: false, error, retryable: isRetryableAnswer(error.status, error.code), retryAfterMs };
    } catch (error) {
      // The caller's abort ends everything, at once and without a retry.
      if (options.signal?.aborted) throw options.signal.reason;
      if (timer.aborted) return failed(new TimeoutError(timeout, { cause: error }));
      // A 2xx whose body is not JSON: the request may have done its work, so it is not repeated.
      if (error instanceof SyntaxError) throw new EsimSdkError("the answer is not JSON", { cause: error });
      return failed(new ConnectionError(`${call.method} ${call.path}: ${describe(error)}`, { cause: error }));
    }
  }

  #url(call: Call): string {
    const url = new URL(this.#settings.baseUrl + call.path);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  /** A fresh object per attempt: concurrent calls never see each other's headers. */
  #headers(call: Call, options: RequestOptions): Record<string, string> {
    const headers: Record<string, string> = {
      accept: call.accept ?? "application/json",
      authorization: `Bearer ${this.#settings.apiKey}`,
    };
    // Names lower-cased: `Authorization` beside `authorization` would reach fetch as one joined
    // header ("a, b"); the caller's value replaces ours, and the SDK's Idempotency-Key wins below.
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    if (call.body !== undefined) headers["content-type"] = "application/json";
    if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey;
    return headers;
  }
}

/** Codes with which the API answers before doing anything: any request may be repeated after them. */
const NOTHING_DONE: ErrorCode[] = ["rate_limited", "service_unavailable"];

function isCode(error: Error, ...codes: (ErrorCode | undefined)[]): boolean {
  return error instanceof ApiError && error.code !== null && codes.includes(error.code);
}

type Outcome<T> =
  | { ok: true; value: T }
  | { ok: false; error: Error; retryable: boolean; retryAfterMs: number | null };

/** A 2xx body as the call asked for it; JSON that does not parse throws SyntaxError (not retried). */
function successValue(bytes: Uint8Array, as: ResponseAs): unknown {
  if (as === "bytes") return bytes;
  const text = new TextDecoder().decode(bytes);
  if (as === "text") return text;
  return text ? JSON.parse(text) : undefined;
}

function failed(error: Error): Outcome<never> {
  return { ok: false, error, retryable: true, retryAfterMs: null };
}

function apiError(response: Response, text: string): ApiError {
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: a proxy's or load balancer's page. Kept as text in `raw`.
  }
  const problem = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
  return new ApiError({
    status: response.status,
    code: typeof problem.code === "string" ? (problem.code as ErrorCode) : null,
    detail: typeof problem.detail === "string" ? problem.detail : response.statusText || "request failed",
    requestId:
      response.headers.get("x-request-id") ??
      (typeof problem.request_id === "string" ? problem.request_id : null),
    retryAfter: retryAfter === null ? null : retryAfter / 1000,
    raw: body,
  });
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}

/** A per-call retry count: an integer from 0 to the cap, or a RangeError (NaN would never stop). */
function checkedRetries(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_RETRIES_LIMIT) {
    throw new RangeError(`maxRetries must be an integer from 0 to ${MAX_RETRIES_LIMIT}`);
  }
  return value;
}

/** A per-call timeout: a positive finite number of milliseconds, or a RangeError. */
function checkedTimeout(value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError("timeout must be a positive number of ms");
  return value;
}
