// Every choice the fake makes where eSIM Go's documentation is silent or contradicts itself, in
// one place so it can be corrected when the real platform answers otherwise. Each is listed with
// its reason in README.md ("UNCONFIRMED"); docs/suppliers/esimgo.md is the research behind it.

/** GET /orders: the official page renders a bare array; a third party's OpenAPI claims {orders, pageCount, rows}. */
export const ORDER_LIST_IS_BARE_ARRAY = true;
/**
 * The order date's spelling: `createdDate` in the POST /orders answer (the Go client reads it),
 * `createDate` in the list and in GET /orders/{reference} (as the official list and the v2.1
 * detail page print it). An adapter must accept both.
 */
export const ORDER_DATE_FIELD = { placed: "createdDate", listed: "createDate" } as const;
/** The name of the revoke's "refund to organisation balance" query parameter (no source names it). */
export const REVOKE_REFUND_PARAM = "refundToBalance";
/** Bundle states are printed lower case by the v2.5 guide; the Go client uses Title case. */
export const BUNDLE_STATE_CASE: "lower" | "title" = "lower";
/** Messages no source gives: the documented statuses are used with these texts. */
export const MESSAGES = {
  missing_key: "Unauthorised",
  invalid_key: "Unauthorised",
  rate_limited: "Rate limit exceeded",
  insufficient_balance: "Insufficient balance",
  unknown_bundle: (name: string) => `Bundle not found: ${name}`,
  unknown_iccid: (iccid: string) => `eSIM not found: ${iccid}`,
  unknown_order: (reference: string) => `Order not found: ${reference}`,
  incompatible: (iccid: string, bundle: string) => `Bundle ${bundle} is not compatible with eSIM ${iccid}`,
  processing: "Processing - Please come back later or use the Retry-After (seconds) header",
  deactivated: (iccid: string) => `eSIM ${iccid} is deactivated`,
  not_found: "Not Found",
  server_error: "Internal Server Error",
} as const;
/** Insufficient balance: no page gives its status; 400 like the other refused orders. */
export const INSUFFICIENT_BALANCE_STATUS = 400;
/** Statuses for errors whose status no page states: an unknown order or bundle answers 400 like an unknown ICCID. */
export const NOT_FOUND_STATUS = 400;
/** A missing X-API-Key answers 401 (POST /orders v2.2); a wrong one 403 ("the api token is invalid"). */
export const AUTH_STATUS = { missing: 401, invalid: 403 } as const;
/** Every endpoint costs one token: per-endpoint costs are not published. */
export const TOKEN_COST = 1;
/** The POST /orders status of an asynchronous (more than 5 bundles) order until it is done. */
export const ORDER_STATUS = { processing: "processing", completed: "completed" } as const;
/** The revoke answer's `status` (only `{status: "<string>"}` is documented). */
export const REVOKE_STATUS = {
  validate_refundable: "refundable",
  validate_revocable: "revocable",
  refunded: "refunded",
  revoked: "revoked",
} as const;
/** The refund period: "typically 60 days". */
export const REFUND_PERIOD_DAYS = 60;
/** GET /catalogue page size when perPage is absent, and its ceiling. */
export const CATALOGUE_PAGE = { default: 50, max: 500 } as const;
/** GET /orders and GET /esims page size when limit/perPage is absent, and its ceiling. */
export const LIST_PAGE = { default: 25, max: 200 } as const;
/** The JSON install details: one object for one eSIM (as the example), an array for several. */
export const ASSIGNMENTS_SINGLE_AS_OBJECT = true;
/** CSV columns of GET /esims/assignments: those of the deprecated v2.1 CSV endpoint. */
export const ASSIGNMENTS_CSV_HEADER = ["ICCID", "Matching ID", "RSP URL", "Bundle"] as const;
/** Callback signature encoding when ESIMGO_SIM_SIGNATURE_ENCODING is unset: the API reference's Node example. */
export const DEFAULT_SIGNATURE_ENCODING: "base64" | "hex" = "base64";
/** Callback retries (no policy is documented): attempts and the first pause, doubled each time. */
export const CALLBACK_RETRY = { attempts: 4, first_pause_ms: 500 } as const;
