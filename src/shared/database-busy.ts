// A pooled connection that could not be had in time (pg-pool's connectionTimeoutMillis) means this
// process is saturated or its database is out of reach for a moment: a temporary condition, not a
// bug, so the partner is told to come back (503 with Retry-After) instead of getting a 500.
// pg-pool raises plain Errors without a code; its two messages are all there is to match on.
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

export function databaseBusy(): ApiError {
  return new ApiError("service_unavailable", "The service is busy; retry after Retry-After seconds.", {
    headers: { "retry-after": String(DATABASE_BUSY_RETRY_AFTER_S) },
  });
}
