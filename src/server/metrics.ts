// Prometheus metrics, served at /metrics. One registry per app so tests can build many apps.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

type RequestLabels = "method" | "route" | "status";

export type Metrics = {
  registry: Registry;
  http_request_duration_seconds: Histogram<RequestLabels>;
  /** The histogram's series by method, route and status: found without hashing labels per request. */
  request_series: Map<string, Map<string, Map<number, Histogram.Internal<RequestLabels>>>>;
};

/** One request into http_request_duration_seconds; the series (method, route, status) is looked up once. */
export function observeRequest(
  metrics: Metrics,
  method: string,
  route: string,
  status: number,
  seconds: number,
): void {
  let routes = metrics.request_series.get(method);
  if (!routes) {
    routes = new Map();
    metrics.request_series.set(method, routes);
  }
  let statuses = routes.get(route);
  if (!statuses) {
    statuses = new Map();
    routes.set(route, statuses);
  }
  let series = statuses.get(status);
  if (!series) {
    series = metrics.http_request_duration_seconds.labels({ method, route, status: String(status) });
    statuses.set(status, series);
  }
  series.observe(seconds);
}

/** What an operator alerts on: orders whose outcome is not known yet, and how old the oldest is. */
export type PendingOrders = () => Promise<{
  count: number;
  oldest_age_seconds: number;
  given_up: number;
  /** Failed orders the carrier may still hold a profile or bundle for (orders/check-failed-at-carrier.ts). */
  carrier_unreconciled: number;
}>;

export function createMetrics(pendingOrders?: PendingOrders): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics: Metrics = {
    registry,
    http_request_duration_seconds: new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request duration by route and status.",
      labelNames: ["method", "route", "status"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    request_series: new Map(),
  };
  if (pendingOrders) {
    // Read at scrape time from the database, so every process reports the same truth.
    let last: ReturnType<PendingOrders> | null = null;
    const read = () => {
      last ??= pendingOrders().finally(() => {
        last = null;
      });
      return last;
    };
    new Gauge({
      name: "esim_orders_pending",
      help: "Orders waiting for the carrier's outcome (the resolver finishes them).",
      registers: [registry],
      async collect() {
        this.set((await read()).count);
      },
    });
    new Gauge({
      name: "esim_orders_pending_oldest_age_seconds",
      help: "Age of the oldest pending order; alert when it grows past a few minutes.",
      registers: [registry],
      async collect() {
        this.set((await read()).oldest_age_seconds);
      },
    });
    new Gauge({
      name: "esim_orders_pending_given_up",
      help: "Orders pending longer than PENDING_GIVE_UP_HOURS: settle each with `npm run cli -- orders settle`.",
      registers: [registry],
      async collect() {
        this.set((await read()).given_up);
      },
    });
    new Gauge({
      name: "esim_orders_carrier_unreconciled",
      help: "Failed orders (hold voided) the carrier may still hold a profile or bundle for: owed a look, or left for the operator.",
      registers: [registry],
      async collect() {
        this.set((await read()).carrier_unreconciled);
      },
    });
  }
  return metrics;
}

/** The number of API processes this one shares each key's rate limit with (rate-limit.ts). */
export function addRateLimitShareGauge(metrics: Metrics, processes: () => number): void {
  new Gauge({
    name: "esim_rate_limit_processes",
    help: "API processes alive that share each API key's rate limit; this process allows 1/N of it.",
    registers: [metrics.registry],
    collect() {
      this.set(processes());
    },
  });
}

/** What the operator alerts on for ES2+ profiles: free ICCIDs per package, refunds held (read at scrape). */
export type ProfileAlerts = {
  levels: () => Promise<{ external_package_id: string; profile_type: string; free: number }[]>;
  held: () => Promise<number>;
};

export function addProfileGauges(metrics: Metrics, alerts: ProfileAlerts, low_threshold: number): void {
  new Gauge({
    name: "esim_profile_inventory_free",
    help: `Free ICCIDs of a package's ES2+ inventory; low below PROFILE_INVENTORY_LOW_THRESHOLD (${low_threshold}).`,
    labelNames: ["external_package_id", "profile_type"],
    registers: [metrics.registry],
    async collect() {
      this.reset();
      for (const level of await alerts.levels()) {
        this.set(
          { external_package_id: level.external_package_id, profile_type: level.profile_type },
          level.free,
        );
      }
    },
  });
  new Gauge({
    name: "esim_refunds_held",
    help: "Refunds held on an ambiguous CancelOrder (nothing credited): settle with `npm run cli -- refunds settle`.",
    registers: [metrics.registry],
    async collect() {
      this.set(await alerts.held());
    },
  });
}

/**
 * Counts the cache invalidation notices (LISTEN/NOTIFY) this process has handled, by channel.
 * Flat at zero while other processes' rise: this one's listener hears nothing (a LISTEN through a
 * transaction-mode pooler: set DATABASE_DIRECT_URL), and its caches live out their TTLs instead.
 */
export function addNoticeCounter(metrics: Metrics): (channel: string) => void {
  const notices = new Counter({
    name: "esim_invalidation_notices_total",
    help: "Cache invalidation notices (LISTEN/NOTIFY) this process has handled, by channel.",
    labelNames: ["channel"],
    registers: [metrics.registry],
  });
  return (channel) => notices.inc({ channel });
}
