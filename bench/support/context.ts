// What every part of a benchmark run shares: the scenarios, their sizes, the results they
// record and the context they run in.
import path from "node:path";
import { loadConfig } from "../../src/config.ts";
import type { Pool } from "../../src/db/pool.ts";
import type { InspectorSession } from "./inspector.ts";
import type { Running } from "./processes.ts";
import type { Partner } from "./setup.ts";

export const SCENARIOS = [
  "discovery",
  "discovery-prices",
  "destinations",
  "esim-read",
  "purchase",
  "purchase-airalo",
  "purchase-esimgo",
  "purchase-group",
  "replay",
  "slow64",
  "slow256",
  "topup",
  "search",
  "roles",
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** Connections of the discovery, bare, eSIM read and replay runs. */
export const READ_CONNECTIONS = 64;
/** Clients of the purchase, pgbench and top-up runs. */
export const PURCHASE_CONCURRENCY = 32;
export const SLOW_CARRIER_MS = 250;
/** The service's DB_POOL_MAX: the harness leaves it at its default. */
export const SERVICE_POOL_MAX = loadConfig({}).db_pool_max;
export const WRK_THREADS = 2;
/** One partner per connection of the largest run, so no two requests in flight share a wallet. */
export const PARTNERS = 256;
export const PARTNER_CREDIT_MINOR = 1_000_000_000;
export const PACKAGE_ID = "fr-1gb-7d";
/** eSIMs of a group purchase's cart (purchase-group): set against ten single purchases. */
export const GROUP_QUANTITY = 10;
export const DISCOVERY_PATH = "/v1/esim/destination/FR/packages";
/** pgbench's carts are sized for this rate, far above what two cores can do. */
export const PGBENCH_MAX_TPS = 5_000;
/** Completed carts the replay run goes round. */
export const MAX_REPLAY_CARTS = 20_000;
export const RESULTS_DIR = path.resolve(import.meta.dirname, "..", "results");

export type Options = {
  duration_s: number;
  warmup_s: number;
  only: Set<ScenarioName>;
  profile: boolean;
  /** A webhook endpoint per partner, every event type, delivered to bench/webhook-receiver.ts. */
  webhooks: boolean;
  /** Confirmation emails over SMTP to bench/mail-relay.ts (else .eml files, the sandbox default). */
  mail_relay: boolean;
  /** The checkout whose service and simulator run: another commit's tree, for before/after figures. */
  service_dir: string;
  /**
   * Server connections of a PgBouncer in transaction mode that the service's DATABASE_URL goes
   * through (DATABASE_DIRECT_URL direct, as README "Behind PgBouncer" says); 0: none, direct.
   */
  pgbouncer_pool: number;
};

export type CpuShares = {
  load_generator: number;
  service: number;
  simulator: number;
  bare_server: number;
  webhook_receiver: number;
  mail_relay: number;
  postgres: number;
  harness: number;
  /** Everything else on the machine: other people's work, the kernel's. Percent of one core. */
  others: number;
};

export type ScenarioResult = {
  name: string;
  target: string;
  generator: "wrk" | "pgbench";
  concurrency: number;
  seconds: number;
  requests: number;
  requests_per_s: number;
  /** 2xx answers (pgbench: transactions) per second: the figure the ratios use. */
  ok_per_s: number;
  p50_ms: number | null;
  p99_ms: number | null;
  non_2xx: number;
  socket_errors: number;
  notes: string[];
  cpu_percent: CpuShares;
  /** CPU per 2xx answer (pgbench: per transaction), in microseconds: steadier than rates on a busy machine. */
  cpu_us_per_ok: { service: number; postgres: number; simulator: number; load_generator: number };
  /**
   * Purchase runs: CPU per eSIM made of the run and its drain (its requests in flight at the end,
   * the emails and webhooks it queued), so that a group of 10 and ten single purchases compare.
   */
  cpu_us_per_esim?: { service: number; postgres: number; simulator: number; load_generator: number };
  busiest_others: string[];
  load_average_before: [number, number, number];
};

export type Ratio = { name: string; value: number; target: number; met: boolean; explain: string };

export type Context = {
  tmp: string;
  /** Set with --profile: the service's inspector, to profile each measured run alone. */
  inspector: InspectorSession | null;
  profile_dir: string;

  database_url: string;
  postmaster_pid: number | undefined;
  pool: Pool;
  service: Running;
  /** The environment `service` was started with: the role split (scenarios/roles.ts) starts more like it. */
  service_env: Record<string, string>;
  /** Service processes beside `service` (the role split's second API process and its worker); their CPU counts as the service's. */
  more_services: Running[];
  simulator: Running;
  simulator_key: string;
  /**
   * The supplier fakes, each a process of its own, started only for its purchase scenario
   * (scenarios/purchase-supplier.ts); their CPU is counted as the simulator's.
   */
  supplier_fakes: { airalo: Running | null; esimgo: Running | null };
  bare: Running | null;
  /** The webhook receiver; null with --no-webhooks. */
  webhook_receiver: Running | null;
  mail_relay: Running | null;
  admin_token: string;
  partners: Partner[];
  options: Options;
  results: ScenarioResult[];
  ratios: Ratio[];
  notes: string[];
};

export function log(message: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

export function ms(us: number): number {
  return Math.round(us / 10) / 100;
}
