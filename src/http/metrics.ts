// Prometheus metrics, served at /metrics. One registry per app so tests can build many apps.
import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";

export type Metrics = {
  registry: Registry;
  http_request_duration_seconds: Histogram<"method" | "route" | "status">;
  orders_total: Counter<"type" | "status">;
};

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    http_request_duration_seconds: new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request duration by route and status.",
      labelNames: ["method", "route", "status"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    orders_total: new Counter({
      name: "orders_total",
      help: "Orders that reached a final or pending state, by type and status.",
      labelNames: ["type", "status"],
      registers: [registry],
    }),
  };
}
