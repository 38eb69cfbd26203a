// Every answer shape the fake gives, in one place, each with its source (docs/suppliers/airalo.md
// names them; README "Shapes" lists them). Airalo's failures come in different shapes by kind,
// and an adapter must tell them apart: business errors {code, reason}, validation errors
// {data, meta}, rate limits {message}. Shapes no source confirms are marked UNCONFIRMED here and
// in the README, so a correction is one edit.

export type Answer = {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
};

/** {"data": ..., "meta": {"message": "success"}} ([DOC:error-handling-780831m0], every example). */
export function ok(data: unknown, message = "success", status = 200): Answer {
  return { status, body: { data, meta: { message } } };
}

/** 422 {"data": {"<field>": "<message>"}, "meta": {"message": "the parameter is invalid"}} ([SPEC place-order]). */
export function invalid(fields: Record<string, string>): Answer {
  return { status: 422, body: { data: fields, meta: { message: "the parameter is invalid" } } };
}

/** 422 {"data": [], "meta": {"message": ...}}: the refund page's other failures ([SPEC request-refund]; status UNCONFIRMED). */
export function refused(message: string): Answer {
  return { status: 422, body: { data: [], meta: { message } } };
}

/** 404 {"data": [], "meta": {"message": "messages.resource_not_found"}} ([SPEC monitor-usage], [DOC:get-top-up-package-list-11883031e0]). */
export function notFound(): Answer {
  return { status: 404, body: { data: [], meta: { message: "messages.resource_not_found" } } };
}

/** 401 {"data": [], "meta": {"message": "This action is unauthorized."}}: another company's order ([DOC:get-order-11883023e0]). */
export function unauthorizedAction(): Answer {
  return { status: 401, body: { data: [], meta: { message: "This action is unauthorized." } } };
}

/** UNCONFIRMED: a missing, malformed or expired bearer token. Laravel's default answer (Airalo's 429 is Laravel's too). */
export function unauthenticated(): Answer {
  return { status: 401, body: { message: "Unauthenticated." } };
}

/** UNCONFIRMED: wrong client_id/client_secret on POST /v2/token (Laravel Passport's wording, in Airalo's envelope). */
export function badClientCredentials(): Answer {
  return { status: 401, body: { data: [], meta: { message: "Client authentication failed" } } };
}

/** 429 {"message": "Too Many Attempts."} with Retry-After and X-RateLimit-* ([SPEC monitor-usage], [DOC:rate-limits-752590m0]). */
export function tooManyAttempts(limit: number, retry_after_s: number): Answer {
  return {
    status: 429,
    body: { message: "Too Many Attempts." },
    headers: {
      "retry-after": String(retry_after_s),
      "x-ratelimit-limit": String(limit),
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + retry_after_s),
    },
  };
}

/** UNCONFIRMED body: the error page lists 500/502/503/504 with no body; Laravel's default is this. */
export function serverError(status = 500): Answer {
  const message = status === 503 ? "Service Unavailable" : "Server Error";
  return { status, body: { message } };
}

/**
 * The business error codes, verbatim from the error-handling page [DOC:error-handling-780831m0]
 * ("Modified at 2025-05-12"), answered 422 {"code": n, "reason": "..."}. {additional} is filled in
 * by the caller (an amount, an ICCID) or left empty.
 */
export const ERROR_REASONS: Record<number, string> = {
  11: "Insufficient Airalo Credit: {additional}",
  13: "The requested operator is currently undergoing maintenance. Please try again later.",
  14: "Invalid checksum: {additional}",
  23: "The requested top-up has been disabled by the operator. {additional}",
  33: "Insufficient stock of eSIMs remaining: {additional}. Please try your request again later.",
  34: "The requested eSIM package is invalid or it is currently out of stock. Please try again later.",
  43: "Bad request. {additional} Please check your input and try again.",
  53: "Something unexpected happened. We're working to resolve the issue. Please try again later.",
  73: "The eSIM with iccid {additional} has been recycled. It can no longer be used or topped up.",
};

export function businessError(code: number, additional = ""): Answer {
  const template = ERROR_REASONS[code];
  if (template === undefined) throw new Error(`unknown Airalo error code ${code}`);
  // An empty {additional} leaves no double space behind ("disabled by the operator. ").
  const reason = template.replace("{additional}", additional).replace(/\s+/g, " ").trim();
  return { status: 422, body: { code, reason } };
}

/** "2025-04-15 14:02:38": Airalo's timestamps (UTC here; the docs do not name a zone: UNCONFIRMED). */
export function airaloTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace("T", " ");
}
