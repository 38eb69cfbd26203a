// A pooled connection that could not be had in time (pg-pool's connectionTimeoutMillis) means this
// process is saturated or its database is out of reach for a moment: a temporary condition, not a
// bug, so the partner is told to come back (503 with Retry-After) instead of getting a 500.
// pg-pool raises plain Errors without a code; its two messages are all there is to match on.
// A transaction PostgreSQL aborted to break a deadlock (40P01) or a serialization failure (40001)
// is answered the same way: it rolled back whole, so a retry is safe (a purchase or top-up retried
// with its cart_key or Idempotency-Key finishes what was started, never a second charge). The lock
// order (docs/architecture.md, "Lock order") is what keeps deadlocks away; this is defence in depth.
import { ApiError } from "./errors.ts";

/** Seconds a client should wait before retrying when no database connection was free. */
export const DATABASE_BUSY_RETRY_AFTER_S = 1;

const POOL_TIMEOUT_MESSAGES = [
  // Every connection of the pool is in use and none was released in time.
  "timeout exceeded when trying to connect",
  // A new connection was being opened and the server did not finish the handshake in time.
  "Connection terminated due to connection timeout",
];

export function isPoolTimeout(error: unknown): boolean {
  return error instanceof Error && POOL_TIMEOUT_MESSAGES.includes(error.message);
}

/** SQLSTATEs of a transaction aborted only because of a concurrent one: retrying it may succeed. */
const CONCURRENCY_ABORTS = new Set(["40P01", "40001"]);

/** A deadlock or serialization failure, thrown as is or as a deferred write's cause (db/pool.ts). */
export function isConcurrencyAbort(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 3; depth++) {
    if (CONCURRENCY_ABORTS.has(String((cause as { code?: unknown }).code))) return true;
    cause = cause.cause;
  }
  return false;
}

/**
 * A statement PostgreSQL cancelled (57014: the pool's statement_timeout, or an operator's
 * pg_cancel_backend) or whose lock wait timed out (55P03): its transaction rolled back whole, so
 * like a deadlock it is a temporary condition a retry may get past, never a bug to answer 500.
 */
const CANCELLED_STATEMENTS = new Set(["57014", "55P03"]);

export function isCancelledStatement(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 3; depth++) {
    if (CANCELLED_STATEMENTS.has(String((cause as { code?: unknown }).code))) return true;
    cause = cause.cause;
  }
  return false;
}

/**
 * Any of the above: a temporary condition of the database whose transaction rolled back whole,
 * answered 503 with Retry-After wherever a request meets it (the API, the console).
 */
export function isDatabaseBusy(error: unknown): boolean {
  return isPoolTimeout(error) || isConcurrencyAbort(error) || isCancelledStatement(error);
}

export function databaseBusy(): ApiError {
  return new ApiError("service_unavailable", "The service is busy; retry after Retry-After seconds.", {
    headers: { "retry-after": String(DATABASE_BUSY_RETRY_AFTER_S) },
  });
}
