// When to try a request again, and how long to wait first. Pure functions, so the rules read in
// one place: exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff
// and Jitter"), the API's Retry-After honoured up to a cap.

/** Statuses that say "not now", not "no": the same request may succeed later. */
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

/** The first backoff ceiling; it doubles per attempt up to MAX_BACKOFF_MS. */
export const BASE_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 8_000;
/** A Retry-After above this is cut to it: a caller with a deadline should not sleep for minutes. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Whether an answer with this status and problem `code` is worth another attempt. 409 only when
 * the first attempt is still running (`request_in_progress`); a 502 `carrier_error` is the
 * carrier's definitive refusal, so it is final even though 502 is otherwise retried. A 429 only
 * when it is `rate_limited` (a throttle of seconds) or has no problem code (a proxy's throttle):
 * another code is a quota, such as `resend_limit_reached`, whose Retry-After is hours away, and a
 * retry would only sleep a minute before failing the same way.
 */
export function isRetryableAnswer(status: number, code: string | null): boolean {
  if (status === 409) return code === "request_in_progress";
  if (status === 429) return code === "rate_limited" || code === null;
  if (code === "carrier_error") return false;
  return RETRYABLE_STATUSES.has(status);
}

const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** Retry-After as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now_ms = Date.now()): number | null {
  if (value === null || value.trim() === "") return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only an HTTP date (IMF-fixdate, RFC 9110): Date.parse alone reads "-1" as a year.
  if (!HTTP_DATE.test(text)) return null;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now_ms);
}

/** How long to wait before retry number `retry` (0 for the first retry). */
export function retryDelayMs(retry: number, retry_after_ms: number | null, random = Math.random): number {
  if (retry_after_ms !== null) return Math.min(retry_after_ms, MAX_RETRY_AFTER_MS);
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
