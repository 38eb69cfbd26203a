/** A usage mistake: told on stderr with the usage, exit status 2, nothing started or changed. */
export class UsageError extends Error {}
