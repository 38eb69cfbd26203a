// One family of errors, split the way a caller decides what to do next (stripe-node's habit):
// the API said no (ApiError, with the contract's stable `code`), the connection failed
// (ConnectionError), or no answer came in time (TimeoutError). All extend EsimSdkError.
import type { operations } from "./generated/openapi.ts";

/** Every `code` the API documents (the closed set of src/shared/errors.ts, read from the OpenAPI document). */
export type ErrorCode =
  operations["submitOrder"]["responses"][400]["content"]["application/problem+json"]["code"];

/** A field the API rejected, on `invalid_request`. */
export type FieldError = { field: string; message: string };

export class EsimSdkError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "EsimSdkError";
  }
}

/** The API answered with a problem document (RFC 9457). Match on `code`, not on `detail`. */
export class ApiError<C extends ErrorCode = ErrorCode> extends EsimSdkError {
  readonly status: number;
  /** The stable code; null only when the answer was not a problem document (e.g. a proxy's HTML page). */
  readonly code: C | null;
  /** For people; it may change between versions. */
  readonly detail: string;
  /** X-Request-Id of the failed request: quote it to support. */
  readonly requestId: string | null;
  /** Seconds the API asked to wait (Retry-After), when it said. */
  readonly retryAfter: number | null;
  /** On `request_in_progress` and `carrier_unavailable`: the order whose outcome is not known yet. */
  readonly orderId: string | null;
  readonly errors: FieldError[];
  /** The parsed body as it came. */
  readonly raw: unknown;

  constructor(fields: {
    status: number;
    code: C | null;
    detail: string;
    requestId: string | null;
    retryAfter: number | null;
    raw: unknown;
  }) {
    super(`${fields.status} ${fields.code ?? "error"}: ${fields.detail}`);
    this.name = "ApiError";
    this.status = fields.status;
    this.code = fields.code;
    this.detail = fields.detail;
    this.requestId = fields.requestId;
    this.retryAfter = fields.retryAfter;
    const body = (fields.raw ?? {}) as { order_id?: unknown; errors?: unknown };
    this.orderId = typeof body.order_id === "string" ? body.order_id : null;
    this.errors = Array.isArray(body.errors) ? (body.errors as FieldError[]) : [];
    this.raw = fields.raw;
  }
}

/** No HTTP answer: refused, reset or dropped connection, DNS failure. */
export class ConnectionError extends EsimSdkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ConnectionError";
  }
}

/** No complete answer within the `timeout` of an attempt. */
export class TimeoutError extends EsimSdkError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number, options?: { cause?: unknown }) {
    super(`no answer within ${timeoutMs} ms`, options);
    this.name = "TimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** The webhook's signature, timestamp or headers did not check out: answer 400 and ignore it. */
export class WebhookVerificationError extends EsimSdkError {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

/**
 * `isApiError(err)` narrows to ApiError; `isApiError(err, "insufficient_balance")` also to that code:
 * `if (isApiError(err, "insufficient_balance")) topUpWallet();`
 */
export function isApiError<C extends ErrorCode>(error: unknown, code?: C): error is ApiError<C> {
  return error instanceof ApiError && (code === undefined || error.code === code);
}
