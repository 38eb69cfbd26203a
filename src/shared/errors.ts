// The closed set of error codes. Each has one HTTP status and one title, mapped to
// problem+json (RFC 9457) once, in http/problem.ts. Handlers throw or return ApiError
// with one of these codes; anything else becomes a logged 500 `internal_error`.

export const ERROR_CODES = {
  invalid_request: { status: 400, title: "The request is malformed or violates the schema." },
  invalid_iccid: { status: 400, title: "The ICCID is not a valid ICCID." },
  unauthorized: { status: 401, title: "A valid API key is required." },
  wrong_environment: { status: 401, title: "The API key belongs to the other environment." },
  insufficient_balance: { status: 402, title: "The wallet balance does not cover this purchase." },
  not_found: { status: 404, title: "No such route." },
  destination_not_found: { status: 404, title: "No such destination." },
  package_not_found: { status: 404, title: "No such package." },
  cart_not_found: { status: 404, title: "No such cart." },
  order_not_found: { status: 404, title: "No such order." },
  esim_not_found: { status: 404, title: "No such eSIM." },
  partner_not_found: { status: 404, title: "No such partner." },
  api_key_not_found: { status: 404, title: "No such API key." },
  credit_reference_reused: {
    status: 409,
    title: "The credit reference was already used with another amount.",
  },
  adjustment_reference_reused: {
    status: 409,
    title: "The adjustment reference was already used with another amount or sign.",
  },
  api_key_limit_reached: { status: 409, title: "The partner holds as many API keys as it may." },
  request_in_progress: { status: 409, title: "The same request is still being processed." },
  cart_expired: { status: 410, title: "The cart has expired." },
  payload_too_large: { status: 413, title: "The request body is larger than 64 KiB." },
  unsupported_media_type: { status: 415, title: "The request body must be application/json." },
  invalid_start_date: { status: 422, title: "The start date is outside the allowed window." },
  topup_not_available: { status: 422, title: "This top-up is not offered for this eSIM." },
  statement_too_large: {
    status: 422,
    title: "The statement has more rows than one CSV export holds; narrow from and to.",
  },
  idempotency_key_reused: { status: 422, title: "The Idempotency-Key was used with a different request." },
  rate_limited: { status: 429, title: "Too many requests." },
  internal_error: { status: 500, title: "An unexpected error occurred." },
  carrier_error: { status: 502, title: "The carrier refused the request." },
  carrier_unavailable: { status: 503, title: "The carrier is unavailable; try again later." },
  service_unavailable: { status: 503, title: "The service is temporarily unavailable." },
  // Issue 12, webhooks.
  webhook_endpoint_not_found: { status: 404, title: "No such webhook endpoint." },
  delivery_not_found: { status: 404, title: "No such webhook delivery." },
  event_not_found: { status: 404, title: "No such event in the last 30 days." },
  webhook_endpoint_limit_reached: {
    status: 409,
    title: "The partner has as many webhook endpoints as it may (10).",
  },
  invalid_webhook_url: {
    status: 422,
    title: "The webhook URL is not one the service may call (https, public address).",
  },
  // Issue 13 (refunds): the problem body's `reason` says why (not_completed, esim_installed,
  // bundle_used, window_passed, topups_not_refunded).
  refund_not_allowed: { status: 409, title: "This order cannot be refunded." },
  // Issue 31 (people): a role without the permission, a key without the scope or from elsewhere.
  forbidden: { status: 403, title: "Your role does not allow this." },
  insufficient_scope: { status: 403, title: "This API key is read-only; the request changes something." },
  ip_not_allowed: { status: 403, title: "This API key may not be used from this address." },
  user_not_found: { status: 404, title: "No such person." },
  user_exists: { status: 409, title: "This email already belongs to a person of this team." },
  last_owner: { status: 409, title: "A partner keeps at least one active owner." },
  // Issue 32 (support and finance work).
  partner_suspended: {
    status: 403,
    title: "The partner is suspended: it may read, but changes nothing until the operator reactivates it.",
  },
  no_email_for_order: { status: 409, title: "This order has no confirmation email (a top-up sends none)." },
  order_not_pending: {
    status: 409,
    title: "This order is no longer pending: it was completed or failed already, and nothing was changed.",
  },
  group_order_not_settled: {
    status: 409,
    title:
      "A group order is not settled by hand: the resolver settles each of its eSIMs with the carrier's word; nothing was changed.",
  },
  carrier_disagrees: {
    status: 409,
    title:
      "The carrier's own record of this order contradicts the settlement asked for; nothing was changed.",
  },
  resend_limit_reached: {
    status: 429,
    title:
      "A resend limit was reached: 5 per order, or the partner's cap on resends to other addresses, per rolling 24 hours.",
  },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The one case where the contract answers a code with a second status: an unknown package named
 * inside a body (a pricing override) is 422 `package_not_found`, an unknown package in a path or
 * a cart is 404. A route that can answer the second status lists it with `alternate(code)`.
 */
export const ALTERNATE_STATUS = { package_not_found: 422 } as const satisfies Partial<
  Record<ErrorCode, number>
>;
export type AlternateCode = keyof typeof ALTERNATE_STATUS;

/**
 * Why one field was refused, for programs (`errors[].code`): a closed set, as the error codes are.
 * The message beside it is for people and may change; match on this.
 */
export const FIELD_ERROR_CODES = {
  required: "The field is missing.",
  unknown_field: "The field (or query parameter) is not one this request takes.",
  invalid_type: "The value is of the wrong JSON type (a number where text is expected, ...).",
  invalid_format: "The value is of the right type but not in the form the field takes.",
  too_short: "The text or list is shorter than the field allows (empty, for most).",
  too_long: "The text or list is longer than the field allows.",
  out_of_range: "The number or date is outside the range the field allows.",
  not_allowed:
    "The value is well formed but not one this field accepts (not in its list of values, given twice, ...).",
} as const;

export type FieldErrorCode = keyof typeof FIELD_ERROR_CODES;

/** One refused field: its name (`overrides.0.package_id`), a stable code, and the reason in words. */
export type FieldError = { field: string; code: FieldErrorCode; message: string };

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  /** Extra response headers, e.g. Retry-After for 409 and 429. */
  readonly headers: Record<string, string>;
  /** The order a 409 or 503 is about, so a client can poll GET /orders/{orderID} for its outcome. */
  readonly order_id: string | undefined;
  /** Why, in a stable word, when the code has several causes (refund_not_allowed). */
  readonly reason: string | undefined;

  constructor(
    code: ErrorCode,
    detail?: string,
    options: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      order_id?: string;
      reason?: string;
      /** Answer with the code's ALTERNATE_STATUS instead of its own. */
      alternate?: boolean;
    } = {},
  ) {
    super(detail ?? ERROR_CODES[code].title);
    this.name = "ApiError";
    this.code = code;
    this.status =
      options.alternate && code in ALTERNATE_STATUS
        ? ALTERNATE_STATUS[code as AlternateCode]
        : ERROR_CODES[code].status;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.order_id = options.order_id;
    this.reason = options.reason;
  }
}

/** Where each code is documented (README "Errors" table; also the problem `type`). */
export function problemType(code: ErrorCode): string {
  return `https://docs.esim.example/errors#${code}`;
}
