// The fuzz run's limits and operator token.

export const FUZZ_ADMIN_TOKEN = "fuzz-admin-token-0123456789abcdef";
/** Per request: a hung request is a failure, not a hung run. */
export const REQUEST_TIMEOUT_MS = 20_000;
/** Longest string kept in a failure report. */
export const REPORT_CHARS = 400;
/** Failure examples kept per distinct failure. */
export const EXAMPLES_PER_FAILURE = 3;
