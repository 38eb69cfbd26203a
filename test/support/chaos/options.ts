// The chaos run's options, their defaults, and the environment of its processes (scripts/chaos.ts
// is the command line; test/chaos.test.ts runs it in small).
import type { Cluster } from "../cluster.ts";
import { endUser } from "../fixtures.ts";

export type ChaosOptions = {
  seed: number;
  duration_s: number;
  operations: number;
  kills: number;
  /**
   * Restarts of PostgreSQL spread over the stream, alternately with `pg_ctl stop -m fast` and
   * `-m immediate` (a crash); only on a cluster that started its own PostgreSQL.
   */
  postgres_restarts: number;
  clients: number;
  drain_timeout_s: number;
  crash_points: boolean;
  /** Where profiles come from: the carrier API, or the SM-DP+ simulator over ES2+ (the production path). */
  profiles: "http" | "es2plus";
  /**
   * A share of the stream on Airalo's and eSIM Go's packages (synced into the catalog at setup,
   * the fakes as child processes of the cluster, their faults changed with the carrier's); off:
   * the carrier's packages only.
   */
  suppliers: boolean;
  /** Use this database instead of an embedded PostgreSQL of the cluster's own. */
  databaseUrl?: string;
  /** Run against this cluster (not stopped at the end) instead of starting one. */
  cluster?: Cluster;
  log: (line: string) => void;
};

export const CHAOS_DEFAULTS: Omit<ChaosOptions, "seed" | "log"> = {
  duration_s: 120,
  operations: 100_000,
  kills: 12,
  postgres_restarts: 2,
  clients: 6,
  drain_timeout_s: 120,
  crash_points: true,
  profiles: "es2plus",
  suppliers: true,
};
/** The suppliers the stream buys from when `suppliers` is on, each about an equal share. */
export const CHAOS_SUPPLIERS = ["carrier", "airalo", "esimgo"] as const;
export type ChaosSupplier = (typeof CHAOS_SUPPLIERS)[number];
/** The markup of the setup's catalog sync (any will do: the run checks counts, not prices). */
export const CHAOS_SUPPLIER_MARKUP_PERCENT = "15";
/** The destinations the stream buys in (setup.ts). */
export const CHAOS_DESTINATIONS = ["FR", "DE", "JP", "US"] as const;
/** ICCIDs per package at the SM-DP+ and in our inventory for an ES2+ run: far more than a run buys. */
export const CHAOS_ES2PLUS_STOCK = { profiles_per_package: 2_000, destinations: CHAOS_DESTINATIONS };

/** Environment of the API processes: short carrier timeout and resolver delay, so a run settles fast. */
export const CHAOS_SERVICE_ENV = {
  CARRIER_TIMEOUT_MS: "1000",
  // A supplier call's timeout: a fake's delay fault outlives it; the leases (8 calls of it + 1 s at
  // eSIM Go) stay far below the drain's timeout.
  SUPPLIER_TIMEOUT_MS: "2000",
  // A supplier order whose answer was lost (a SIGKILL mid-call) and which a lookup did not find is
  // posted again after this long, not 15 minutes: the fakes land nothing later than the slowest
  // delay fault (faults.ts, 2.5 s), and the drain could not wait 15 minutes.
  SUPPLIER_IN_FLIGHT_MS: "20000",
  RESOLVE_AFTER_MS: "1500",
  LOG_LEVEL: "info",
  DB_POOL_MAX: "10",
  // A job locked by a SIGKILLed process is unlocked after this long (src/server/worker.ts), not 4 hours.
  STALE_JOB_AFTER_MS: "6000",
  // Webhooks to the run's receiver on loopback; a first failure is retried after 200 ms, not 5 s.
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  WEBHOOK_SECRET_KEY: Buffer.alloc(32, 11).toString("base64"),
  WEBHOOK_TIMEOUT_MS: "2000",
  WEBHOOK_FIRST_RETRY_DELAY_MS: "200",
  WEBHOOK_POLL_MS: "100",
};
/** A slow carrier call (slow@carrier.test, timeout_share) outlives the API's carrier timeout. */
export const CHAOS_SIMULATOR_ENV = { SIMULATOR_SLOW_MS: "2500" };

export const RICH_PARTNERS = 4;
export const THIN_PARTNERS = 2;
export const RICH_CREDIT_MINOR = 10_000_000;
/** A client gives up on one logical operation after this long and leaves it to reconciliation. */
export const OPERATION_DEADLINE_MS = 45_000;
export const LONG_CLIENT_TIMEOUT_MS = 15_000;
export const MAX_WAIT_FOR_LIVE_PROCESS_MS = 60_000;
/** The end user of every body; each purchase and top-up names an email of its own (endUserEmail). */
export const CHAOS_END_USER = endUser({ first_name: "Chaos", last_name: "Monkey" });
