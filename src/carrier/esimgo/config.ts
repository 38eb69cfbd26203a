// The eSIM Go adapter's options, limits and defaults (README.md beside this file).
import type pg from "pg";

export type EsimGoFetch = typeof fetch;

export type EsimGoCarrierOptions = {
  pool: pg.Pool;
  /** ESIMGO_API_URL: the base including its version segment, default DEFAULT_ESIMGO_API_URL. */
  base_url: string;
  /** ESIMGO_API_KEY: sent as `X-API-Key` on every call (docs/suppliers/esimgo.md §1). */
  api_key: string;
  /** One HTTP call, connection to last body byte. */
  timeout_ms: number;
  /** Tests: a stand-in for the global fetch. */
  fetch?: EsimGoFetch;
  /** Tests: the clock (ms since the epoch) of the rate limiter. */
  now?: () => number;
  /**
   * How long after a POST /orders whose answer was lost it may still land at eSIM Go (a request
   * queued behind a slow node, a process that died mid-call). Until then a lookup that finds
   * nothing is not proof that nothing will be made, so nothing is posted again (default
   * DEFAULT_IN_FLIGHT_MS).
   */
  in_flight_ms?: number;
};

export const DEFAULT_ESIMGO_API_URL = "https://api.esim-go.com/v2.4";
/**
 * 15 minutes, as for Airalo: far beyond any request eSIM Go's front end still holds (an order of one
 * bundle is answered synchronously, §3) and far below the orders' give-up time, so a lost answer
 * costs a retry a quarter of an hour late, never a second order from an in-flight POST.
 */
export const DEFAULT_IN_FLIGHT_MS = 15 * 60_000;
export const MAX_TIMEOUT_MS = 120_000;
/** An order list page of 200 orders with their eSIMs is well under this. */
export const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
export const MAX_REASON_LENGTH = 500;
/** Orders asked for on one page of GET /orders (the fake's ceiling, 200; eSIM Go's is not documented, so a shorter page is not taken for the last). */
export const ORDER_PAGE_LIMIT = 200;
/** Pages a lookup reads (the last one empty); a window holding more orders is left to an operator. */
export const MAX_ORDER_PAGES = 5;
/** Slack for the clocks of eSIM Go and our database when bounding the createdAt window. */
export const CLOCK_SLACK_MS = 5 * 60_000;
/** Bytes per MB: the docs show 1 GB as 1000000000 bytes (§5), the catalogue's dataAmount is MB (§2). */
export const BYTES_PER_MB = 1_000_000;

/** References we send (as an eSIM's customerRef): our order ids (`ord_` + base64url). */
export function isSendableReference(reference: string): boolean {
  return /^[A-Za-z0-9_-]{1,200}$/.test(reference);
}
