// Database probes behind the service routes (/readyz, the pending-order gauges of /metrics) that
// anyone may call, often: several load balancers, Prometheus replicas, a curl loop. Each probe
// runs at most once per interval per process; callers meanwhile share its outcome.

/** How long a probe's outcome answers for the database: a second is still "now" to a balancer. */
export const PROBE_TTL_MS = 1_000;

/**
 * `probe`, asked at most once per `ttl_ms`: concurrent callers share the one query in flight, and
 * callers within `ttl_ms` after it settled get its outcome, a failure included.
 */
export function sharedProbe<T>(probe: () => Promise<T>, ttl_ms = PROBE_TTL_MS): () => Promise<T> {
  let outcome: Promise<T> | null = null;
  let running = false;
  let settled_ms = 0;
  return () => {
    if (outcome !== null && (running || Date.now() - settled_ms < ttl_ms)) return outcome;
    running = true;
    outcome = probe().finally(() => {
      running = false;
      settled_ms = Date.now();
    });
    return outcome;
  };
}
