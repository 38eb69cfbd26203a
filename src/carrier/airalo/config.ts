// The Airalo adapter's options, limits and the one format that carries our reference to Airalo.
import type pg from "pg";

export type AiraloFetch = typeof fetch;

export type AiraloCarrierOptions = {
  pool: pg.Pool;
  /** AIRALO_API_URL: the base including its version segment, default DEFAULT_AIRALO_API_URL. */
  base_url: string;
  /** AIRALO_CLIENT_ID, AIRALO_CLIENT_SECRET: the partner account's client credentials. */
  client_id: string;
  client_secret: string;
  /** One HTTP call, connection to last body byte. */
  timeout_ms: number;
  /** Tests: a stand-in for the global fetch. */
  fetch?: AiraloFetch;
  /** Tests: the clock (ms since the epoch) that token expiry and the in-flight window read. */
  now?: () => number;
  /**
   * How long after a POST /v2/orders(/topups) whose answer was lost it may still land at Airalo
   * (a request queued behind a slow node, a process that died mid-call). Until then a lookup that
   * finds nothing is not proof that nothing will be made, so nothing is posted again (default
   * DEFAULT_IN_FLIGHT_MS).
   */
  in_flight_ms?: number;
};

export const DEFAULT_AIRALO_API_URL = "https://partners-api.airalo.com/v2";
/**
 * 15 minutes: far beyond any request Airalo's front end still holds (their documented answers are
 * synchronous) and far below the orders' give-up time (PENDING_GIVE_UP_HOURS), so a lost answer
 * costs a retry a quarter of an hour late, never a second order from an in-flight POST.
 */
export const DEFAULT_IN_FLIGHT_MS = 15 * 60_000;
export const MAX_TIMEOUT_MS = 120_000;
/** An order list page with its eSIMs is a few KB per order; 25 orders of ours fit easily. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
export const MAX_REASON_LENGTH = 500;
/** Orders a lookup reads: a reference matches one order of ours; more is someone else's text. */
export const LOOKUP_LIMIT = 50;

/**
 * Our reference as it travels in `description`: `[esim-ref:<reference>]`. Airalo's
 * `filter[description]` is a LIKE '%x%' search (docs/suppliers/airalo.md §6), so the brackets make
 * the tag unambiguous as a substring: `[esim-ref:ord_a]` is not inside `[esim-ref:ord_ab]`. The
 * lookup still compares the parsed reference exactly (LIKE's `_` matches any character).
 */
export function descriptionFor(reference: string): string {
  return `${referenceTag(reference)} partner order`;
}

export function referenceTag(reference: string): string {
  return `[esim-ref:${reference}]`;
}

/** The reference a description carries, or null. */
export function referenceIn(description: unknown): string | null {
  if (typeof description !== "string") return null;
  const match = /\[esim-ref:([^\]\s]{1,200})\]/.exec(description);
  return match ? match[1]! : null;
}

/** References we send: our order ids (`ord_` + base64url); nothing that would break the tag. */
export function isSendableReference(reference: string): boolean {
  return /^[A-Za-z0-9_-]{1,200}$/.test(reference);
}
