// The chaos engine: a cluster, a stream of operations under kills and carrier faults, a drain,
// and the audit (test/support/audit.ts) plus the client's own observations. scripts/chaos.ts is
// its command line; test/chaos.test.ts runs it in small.
import { auditSystem, formatAudit } from "../audit.ts";
import { startCluster } from "../cluster.ts";
import { drain } from "./drain.ts";
import { faultChanger, killer, postgresRestarter, watch } from "./faults.ts";
import { clientLoop } from "./operations.ts";
import {
  CHAOS_ES2PLUS_STOCK,
  CHAOS_SERVICE_ENV,
  CHAOS_SIMULATOR_ENV,
  CHAOS_SUPPLIERS,
  type ChaosOptions,
  THIN_PARTNERS,
} from "./options.ts";
import { setup } from "./setup.ts";
import { type ChaosReport, Run } from "./state.ts";
import { checkWebhooks, crossCheck, reconcile } from "./verify.ts";

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log;
  log(`chaos: seed ${options.seed} (rerun with --seed ${options.seed})`);
  log(
    `chaos: ${options.duration_s} s or ${options.operations} operations, ${options.kills} kills, ` +
      `${options.clients} clients, crash points ${options.crash_points ? "on" : "off"}, ` +
      `profiles ${options.cluster ? (options.cluster.smdp ? "es2plus" : "http") : options.profiles}, ` +
      `suppliers ${options.suppliers ? "carrier, airalo, esimgo" : "carrier only"}`,
  );
  const cluster =
    options.cluster ??
    (await startCluster({
      services: 2,
      databaseUrl: options.databaseUrl,
      env: CHAOS_SERVICE_ENV,
      simulatorEnv: CHAOS_SIMULATOR_ENV,
      es2plus: options.profiles === "es2plus" ? CHAOS_ES2PLUS_STOCK : undefined,
      suppliers: options.suppliers,
      log: (message) => log(`  ${message}`),
    }));
  const run = new Run(cluster, options);
  try {
    if (options.postgres_restarts > 0 && cluster.restartPostgres === null)
      throw new Error("PostgreSQL restarts need a cluster that started its own PostgreSQL (no database URL)");
    // Adopt the processes the cluster started, so a death of theirs is noticed too.
    cluster.services.forEach((service, slot) => {
      if (service) watch(run, slot, service);
    });
    await setup(run);
    const perSupplier = CHAOS_SUPPLIERS.map(
      (supplier) => `${run.packages.filter((p) => p.supplier === supplier).length} ${supplier}`,
    ).join(", ");
    log(
      `chaos: ${run.partners.length} partners (${THIN_PARTNERS} with thin wallets), ${run.packages.length} packages (${perSupplier}), ` +
        `top-ups ${run.stats.topups_available ? "in the stream" : "not offered by this build: purchases only"}`,
    );

    run.stream_started_at = Date.now();
    const faults = faultChanger(run);
    const kills = killer(run);
    const restarts = postgresRestarter(run);
    // Rejected only when the run cannot restart PostgreSQL at all: reported after the stream.
    restarts.catch(() => undefined);
    await Promise.all(Array.from({ length: options.clients }, (_, i) => clientLoop(run, i)));
    await kills;
    run.streaming = false;
    await faults;
    await restarts;
    run.stats.stream_s = Math.round((Date.now() - run.stream_started_at) / 100) / 10;
    log(`chaos: stream done in ${run.stats.stream_s} s; clearing faults and draining`);

    await drain(run);
    await reconcile(run);
    await crossCheck(run);
    await checkWebhooks(run);
    const audit = await auditSystem({
      pool: cluster.pool,
      simulator: cluster.simulator,
      smtp: cluster.smtp,
      smdp: cluster.smdp,
      uniqueClientReferences: true,
    });
    const { cluster: _cluster, log: _log, ...printable } = options;
    return {
      seed: options.seed,
      options: printable,
      stats: run.stats,
      client_breaches: run.breaches,
      audit,
      passed: audit.breaches.length === 0 && run.breaches.length === 0,
    };
  } finally {
    run.stopping = true;
    await run.receiver?.close();
    if (!options.cluster) await cluster.stop();
  }
}

function since(ms: number | null): string {
  return ms === null ? "never during the stream" : `after ${Math.round(ms)} ms`;
}

export function formatChaosReport(report: ChaosReport): string {
  const s = report.stats;
  const line = (record: Record<string, number>) =>
    Object.entries(record)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}: ${v}`)
      .join(", ");
  return [
    `chaos summary (seed ${report.seed})`,
    `  stream ${s.stream_s} s, drain ${s.drain_s} s; top-ups ${s.topups_available ? "included" : "not available"}, ` +
      `refunds ${s.refunds_available ? "included" : "not available"}`,
    `  operations: ${line(s.operations)}`,
    `  outcomes: ${line(s.outcomes)}`,
    `  requests by outcome: ${line(s.requests)}`,
    `  kills ${s.kills} (SIGKILL), restarts ${s.restarts} (${s.armed_restarts} armed with a crash point), ` +
      `deaths at crash points ${s.crash_point_deaths}`,
    `  retries ${s.retries}, client timeouts ${s.client_timeouts}, racing duplicate submits ${s.duplicate_submits}, ` +
      `replays checked ${s.replays_checked}, key reuses checked ${s.key_reuses_checked}, reconciled after drain ${s.reconciled}`,
    ...CHAOS_SUPPLIERS.map((supplier) => supplierLine(s.suppliers, supplier)).filter((l) => l !== null),
    `  carrier fault changes ${s.fault_changes}; webhook events answered 2xx ${s.webhooks_answered} ` +
      `(again after a success: ${s.webhooks_repeated})`,
    ...s.postgres_restarts.map(
      (r, i) =>
        `  PostgreSQL restart ${i + 1} (-m ${r.mode}): down ${Math.round(r.down_ms)} ms; after it was back, ` +
        `the first request answered 2xx ${since(r.first_ok_ms)}, the first purchase answered 200 ${since(r.recovered_ms)}`,
    ),
    formatAudit(report.audit),
    `client-side checks: ${report.client_breaches.length === 0 ? "PASS" : `FAIL (${report.client_breaches.length})`}`,
    ...report.client_breaches.map((breach) => `  BREACH ${breach}`),
    report.passed ? "CHAOS PASSED" : "CHAOS FAILED",
  ].join("\n");
}

/** "  airalo: purchase completed 12, failed 1; topup completed 3; refund refused 1; faults drop 2, …". */
function supplierLine(counts: Record<string, number>, supplier: string): string | null {
  const groups = new Map<string, string[]>();
  for (const [key, n] of Object.entries(counts).sort(([a], [b]) => a.localeCompare(b))) {
    const [name, what, outcome] = key.split(" ");
    if (name !== supplier || what === undefined || outcome === undefined) continue;
    groups.set(what, [...(groups.get(what) ?? []), `${outcome} ${n}`]);
  }
  if (groups.size === 0) return null;
  return `  ${supplier}: ${[...groups].map(([what, parts]) => `${what} ${parts.join(", ")}`).join("; ")}`;
}
