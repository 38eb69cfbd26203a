// What a chaos run did and saw: its operations, partners, counters and breaches.
import type { AuditResult } from "../audit.ts";
import type { Cluster } from "../cluster.ts";
import type { WebhookReceiver } from "../webhook-receiver.ts";
import type { ChaosOptions, ChaosSupplier } from "./options.ts";

/**
 * How an operation ended for the client. `not_available`: a top-up refused before any order (422
 * topup_not_available: its eSIM was refunded, cancelled, between the offer and the submit).
 */
export type Final = "completed" | "failed" | "insufficient" | "not_available" | "unresolved";
/** A completed operation's refund: none asked, asked (answer not final yet), or its final answer. */
export type RefundFinal = "refunded" | "refused" | "unresolved";

export type Operation = {
  op: number;
  kind: "purchase" | "topup";
  /** The supplier of the package bought (a top-up's is its eSIM's). */
  supplier: ChaosSupplier;
  partner: Partner;
  client_reference: string;
  cart_key: string | null;
  idempotency_key: string | null;
  body: Record<string, unknown> | null;
  /** eSIMs bought: more than 1 is a group order (issue 34); 1 for a top-up. */
  quantity: number;
  final: Final;
  /** Every orderID a 200 (or a 502's detail) named for this operation. */
  order_ids: Set<string>;
  refund: "none" | "requested" | RefundFinal;
  /** The eSIM a purchase made or a top-up went to, once known. */
  iccid: string | null;
};

export type Partner = {
  name: string;
  partner_id: string;
  api_key: string;
  thin: boolean;
  credit_minor: number;
  iccids: string[];
};

export type PackageChoice = { package_id: string; price_minor: number; supplier: ChaosSupplier };

/**
 * One PostgreSQL restart of the run: when it was back (performance.now()), and how long after that
 * the first purchase was answered 200 (null until one is): the service's recovery time.
 */
export type PostgresRestart = {
  mode: "fast" | "immediate";
  down_ms: number;
  back_at: number;
  /** The first answer 2xx of any request (a read, a cart) after back_at: the database in use again. */
  first_ok_ms: number | null;
  recovered_ms: number | null;
};

export type ChaosStats = {
  requests: Record<string, number>;
  operations: Record<string, number>;
  outcomes: Record<string, number>;
  /** Final outcomes per supplier ("airalo purchase completed": 12), and supplier fault changes. */
  suppliers: Record<string, number>;
  kills: number;
  restarts: number;
  postgres_restarts: PostgresRestart[];
  crash_point_deaths: number;
  armed_restarts: number;
  fault_changes: number;
  retries: number;
  client_timeouts: number;
  duplicate_submits: number;
  replays_checked: number;
  key_reuses_checked: number;
  reconciled: number;
  topups_available: boolean;
  refunds_available: boolean;
  stream_s: number;
  drain_s: number;
  webhooks_answered: number;
  /** 2xx answers beyond the first for one event: a delivery sent again after it had succeeded. */
  webhooks_repeated: number;
};

export type ChaosReport = {
  seed: number;
  options: Omit<ChaosOptions, "log" | "cluster">;
  stats: ChaosStats;
  client_breaches: string[];
  audit: AuditResult;
  passed: boolean;
};

export class Run {
  readonly stats: ChaosStats = {
    requests: {},
    operations: {},
    outcomes: {},
    suppliers: {},
    kills: 0,
    restarts: 0,
    postgres_restarts: [],
    crash_point_deaths: 0,
    armed_restarts: 0,
    fault_changes: 0,
    retries: 0,
    client_timeouts: 0,
    duplicate_submits: 0,
    replays_checked: 0,
    key_reuses_checked: 0,
    reconciled: 0,
    topups_available: false,
    refunds_available: false,
    stream_s: 0,
    drain_s: 0,
    webhooks_answered: 0,
    webhooks_repeated: 0,
  };
  readonly breaches: string[] = [];
  readonly operations: Operation[] = [];
  readonly partners: Partner[] = [];
  packages: PackageChoice[] = [];
  /** The supplier of each eSIM bought in the run: its top-ups go to the same one. */
  readonly iccid_suppliers = new Map<string, ChaosSupplier>();
  /** eSIMs a top-up was tried on (set before its first request), and eSIM Go eSIMs whose refund was asked. */
  readonly topped_up_iccids = new Set<string>();
  readonly refunded_iccids = new Set<string>();
  started_ops = 0;
  stream_started_at = 0;
  streaming = true;
  readonly cluster: Cluster;
  readonly options: ChaosOptions;
  /** Every partner's webhook endpoint points here (setup.ts); verify.ts checks what it received. */
  receiver: WebhookReceiver | null = null;
  /** Slots whose current process was started with CRASH_AT. */
  readonly armed = new Set<number>();
  /** One restart at a time per slot. */
  readonly slotLocks: Promise<unknown>[] = [];
  stopping = false;

  constructor(cluster: Cluster, options: ChaosOptions) {
    this.cluster = cluster;
    this.options = options;
  }

  count(bucket: Record<string, number>, key: string): void {
    bucket[key] = (bucket[key] ?? 0) + 1;
  }

  breach(message: string): void {
    if (this.breaches.length < 200) this.breaches.push(message);
  }

  /** A purchase was answered 200 now: the first after a PostgreSQL restart ends its recovery. */
  purchaseCompleted(): void {
    const now = performance.now();
    for (const restart of this.stats.postgres_restarts) {
      if (restart.recovered_ms === null && now >= restart.back_at)
        restart.recovered_ms = now - restart.back_at;
    }
  }

  /** A request was answered 2xx now: the first after a PostgreSQL restart is its first_ok_ms. */
  requestSucceeded(): void {
    const now = performance.now();
    for (const restart of this.stats.postgres_restarts) {
      if (restart.first_ok_ms === null && now >= restart.back_at) restart.first_ok_ms = now - restart.back_at;
    }
  }

  progress(): number {
    const elapsed = (Date.now() - this.stream_started_at) / 1000;
    return Math.max(this.started_ops / this.options.operations, elapsed / this.options.duration_s);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
