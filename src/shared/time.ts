// How the wire writes instants: the contract fixes RFC 3339 UTC strings.

/** RFC 3339 UTC with second precision, e.g. 2026-11-22T10:00:00Z. */
export function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
