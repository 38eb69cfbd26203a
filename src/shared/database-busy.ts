// A pooled connection that could not be had in time (pg-pool's connectionTimeoutMillis) means this
// process is saturated or its database is out of reach for a moment: a temporary condition, not a
// bug, so the partner is told to come back (503 with Retry-After) instead of getting a 500.
// pg-pool raises plain Errors without a code; its two messages are all there is to match on.
// A transaction PostgreSQL aborted to break a deadlock (40P01) or a serialization failure (40001)
// is answered the same way: it rolled back whole, so a retry is safe (a purchase or top-up retried
// with its cart_key or Idempotency-Key finishes what was started, never a second charge). The lock
// order (docs/architecture.md, "Lock order") is what keeps deadlocks away; this is defence in depth.
// A database that went away under a request (a restart, a failover) is answered 503 too
// (isDatabaseUnreachable), with a longer Retry-After.
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

/**
 * Whether the error, or one of its first causes (a deferred write's failure is the cause of the
 * statement that carried it: db/pool.ts), matches: its SQLSTATE or socket code, or its message.
 */
function causeMatches(error: unknown, matches: (cause: Error & { code?: unknown }) => boolean): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 3; depth++) {
    if (matches(cause)) return true;
    cause = cause.cause;
  }
  return false;
}

/** SQLSTATEs of a transaction aborted only because of a concurrent one: retrying it may succeed. */
const CONCURRENCY_ABORTS = new Set(["40P01", "40001"]);

/** A deadlock or serialization failure, thrown as is or as a deferred write's cause (db/pool.ts). */
export function isConcurrencyAbort(error: unknown): boolean {
  return causeMatches(error, (cause) => CONCURRENCY_ABORTS.has(String(cause.code)));
}

/**
 * A statement PostgreSQL cancelled (57014: the pool's statement_timeout, or an operator's
 * pg_cancel_backend) or whose lock wait timed out (55P03): its transaction rolled back whole, so
 * like a deadlock it is a temporary condition a retry may get past, never a bug to answer 500.
 */
const CANCELLED_STATEMENTS = new Set(["57014", "55P03"]);

export function isCancelledStatement(error: unknown): boolean {
  return causeMatches(error, (cause) => CANCELLED_STATEMENTS.has(String(cause.code)));
}

/**
 * Any of the above: a temporary condition of the database whose transaction rolled back whole,
 * answered 503 with Retry-After wherever a request meets it (the API, the console).
 */
export function isDatabaseBusy(error: unknown): boolean {
  return isPoolTimeout(error) || isConcurrencyAbort(error) || isCancelledStatement(error);
}

/**
 * SQLSTATEs of a session PostgreSQL ended or refused because the server is going away or coming
 * back: 57P01 admin_shutdown (a fast shutdown, or pg_terminate_backend), 57P02 crash_shutdown
 * (another backend crashed, or an immediate shutdown), 57P03 cannot_connect_now (starting up or
 * shutting down), and class 08, connection exceptions. 08P01 (protocol violation) is left out:
 * that is a bug of ours or the driver's, not the weather.
 */
const SESSION_ENDED = new Set(["57P01", "57P02", "57P03", "08000", "08001", "08003", "08004", "08006"]);
/** The socket's own errors on the way to PostgreSQL: the server (or its address, mid-failover) is away. */
const SOCKET_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EAI_AGAIN",
]);
/**
 * pg's own messages, raised without a code: the socket closed under a query ("Connection
 * terminated unexpectedly"), a statement sent on a client whose connection had already failed,
 * and a client ended under its query (a pool closing).
 */
const CONNECTION_LOST_MESSAGES = new Set([
  "Connection terminated unexpectedly",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
  "Connection terminated",
]);

/**
 * The database went away under the statement (a restart, a failover, a crash) or was not there to
 * connect to. Whatever the statement was, its transaction did not commit, or, for a COMMIT lost on
 * the way back, its outcome is unknown: either way the answer is a retry with the same cart_key or
 * Idempotency-Key, which finds what really happened (503 with Retry-After), never a 500 and never a
 * failure the partner would take as final.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  return causeMatches(error, (cause) => {
    const code = String(cause.code);
    return SESSION_ENDED.has(code) || SOCKET_ERRORS.has(code) || CONNECTION_LOST_MESSAGES.has(cause.message);
  });
}

/** Seconds to wait when the database was unreachable: a restart takes a few seconds, not one. */
export const DATABASE_UNREACHABLE_RETRY_AFTER_S = 2;

export function databaseUnreachable(): ApiError {
  return new ApiError(
    "service_unavailable",
    "The database is unavailable for a moment (restarting?); retry after Retry-After seconds with the same cart_key or Idempotency-Key.",
    { headers: { "retry-after": String(DATABASE_UNREACHABLE_RETRY_AFTER_S) } },
  );
}

export function databaseBusy(): ApiError {
  return new ApiError("service_unavailable", "The service is busy; retry after Retry-After seconds.", {
    headers: { "retry-after": String(DATABASE_BUSY_RETRY_AFTER_S) },
  });
}
