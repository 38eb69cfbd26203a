// Process entry: config -> database -> migrations -> carrier -> worker -> HTTP.
// `npm start` with no settings runs a sandbox on port 3000 over an embedded PostgreSQL in .data/.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { type Logger, pino } from "pino";
import { startInventoryWatch } from "./carrier/es2plus/inventory-alerts.ts";
import { catalogChanged } from "./catalog/catalog-cache.ts";
import { seedCompatibleDevices } from "./catalog/compatible-devices.ts";
import { seedDefaultCatalogIfEmpty } from "./catalog/seed-catalog.ts";
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { startEmbeddedPostgres } from "./db/embedded.ts";
import { type InvalidationHandlers, listenForInvalidations } from "./db/invalidations.ts";
import { migrateDirect } from "./db/migrate.ts";
import { createKysely, createPool, type Pool } from "./db/pool.ts";
import { checkPooledSessions } from "./db/pooler.ts";
import type { Database } from "./db/schema.ts";
import { esimChanged, esimNoticesMissed } from "./esims/esim-cache.ts";
import { ensureOperatorAccounts } from "./ledger/accounts.ts";
import { armCrashPoint } from "./lib/crash-points.ts";
import { loadOrCreateSecretKey } from "./lib/secret-box.ts";
import { createMailer } from "./notifications/mailer.ts";
import { recentPartners } from "./partners/list-partners.ts";
import { startRefundSweep } from "./refunds/sweep-refunds.ts";
import { buildApp, loggerOptions } from "./server/app.ts";
import { type LiveProcesses, startLiveProcesses } from "./server/live-processes.ts";
import { addNoticeCounter } from "./server/metrics.ts";
import { whenAskedToStop } from "./server/stop-requests.ts";
import {
  startEmailSweep,
  startEsimSync,
  startResolverSweep,
  startStaleJobSweeper,
  startTravellerNoticeSweep,
  startWorker,
} from "./server/worker.ts";
import type { AppContext } from "./shared/context.ts";
import { KeyedSlots } from "./shared/keyed-slots.ts";
import { type StartedCarrier, startCarrier } from "./suppliers/start-carrier.ts";
import { startWebhookDelivery } from "./webhooks/delivery-loop.ts";

type Closer = { name: string; close: () => Promise<unknown> };

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      // Every problem at once, one per line, so a deployment is fixed in one attempt.
      const count = error.problems.length;
      console.error(`configuration error (${count} ${count === 1 ? "problem" : "problems"}):`);
      for (const line of error.message.split("\n")) console.error(`  ${line}`);
      console.error("Check a configuration without starting: npm run cli -- config check");
      process.exit(2);
    }
    throw error;
  }
}

/** Closed in reverse order of opening: HTTP first (drain requests), the database last. */
type Closers = Closer[];

/**
 * Where the service connects. `pooled` (DATABASE_URL) carries every request's and sweep's
 * transactions, through PgBouncer in transaction mode when `through_pooler`; `direct`
 * (DATABASE_DIRECT_URL, else DATABASE_URL) carries what needs a session of its own: LISTEN, the
 * migrations' advisory lock, the heartbeat (never queued behind requests at the pooler), graphile-worker.
 */
type DatabaseUrls = { pooled: string; direct: string; through_pooler: boolean };

/** DATABASE_URL (and DATABASE_DIRECT_URL), or an embedded PostgreSQL under DATA_DIR started for this process. */
async function openDatabaseUrls(config: Config, log: Logger, closers: Closers): Promise<DatabaseUrls> {
  if (config.database_url !== null) {
    const through_pooler = config.database_direct_url !== null;
    return {
      pooled: config.database_url,
      direct: config.database_direct_url ?? config.database_url,
      through_pooler,
    };
  }
  const embedded = await startEmbeddedPostgres({
    dir: path.join(config.data_dir, "pg"),
    port: config.embedded_pg_port,
    log: (message) => log.info(message),
  });
  closers.push({ name: "embedded PostgreSQL", close: embedded.stop });
  log.info({ data_dir: config.data_dir, port: config.embedded_pg_port }, "embedded PostgreSQL ready");
  return { pooled: embedded.url, direct: embedded.url, through_pooler: false };
}

/** The pool, migrated, with the operator accounts and (sandbox) the default catalog. */
async function openDatabase(config: Config, urls: DatabaseUrls, log: Logger, closers: Closers) {
  const pool = createPool(urls.pooled, config.db_pool_max, "esim-api", {
    prepare_threshold: config.db_prepare_threshold,
    through_pooler: urls.through_pooler,
  });
  closers.push({ name: "database pool", close: () => pool.end() });
  const db = createKysely<Database>(pool);
  if (urls.through_pooler) await checkPooledSessions(pool);
  const { applied } = await migrateDirect(urls.direct, "esim-migrations");
  if (applied.length > 0) log.info({ applied }, "migrations applied");
  await ensureOperatorAccounts(db, config.currency);
  // Every environment: partners need the devices list in production too.
  log.info({ devices: await seedCompatibleDevices(db) }, "compatible devices ready");
  if (config.app_env === "sandbox") {
    const seeded = await seedDefaultCatalogIfEmpty(pool, config.currency);
    log.info({ seeded }, "catalog ready");
  }
  return { pool, db };
}

/**
 * The built-in simulators (sandbox without CARRIER_URL, or with CARRIER_PROFILES=es2plus and no
 * ES2PLUS_URL) push their signals to this process: tokens not set are made for this run.
 */
function withSandboxCallbackToken(config: Config): Config {
  const token = () => randomBytes(24).toString("base64url");
  let next = config;
  if (config.carrier_url === null && config.carrier_callback_token === null) {
    next = { ...next, carrier_callback_token: token() };
  }
  if (
    config.carrier_profiles === "es2plus" &&
    config.es2plus === null &&
    config.es2plus_callback_token === null
  ) {
    next = { ...next, es2plus_callback_token: token() };
  }
  return next;
}

/** The carrier (src/suppliers/start-carrier.ts), its closers registered with the process's. */
async function startCarrierOf(
  config: Config,
  pool: Pool,
  log: Logger,
  closers: Closers,
): Promise<StartedCarrier> {
  const started = await startCarrier(config, pool, (message) => log.info(message));
  closers.push(...started.closers);
  return started;
}

/**
 * WEBHOOK_SECRET_KEY, or in the sandbox (config.ts refuses production without it) one made once
 * and kept in DATA_DIR, so secrets sealed by an earlier run still open.
 */
async function withWebhookSecretKey(config: Config, log: Logger): Promise<Config> {
  if (config.webhook_secret_key !== null) return config;
  const webhook_secret_key = await loadOrCreateSecretKey(config.data_dir);
  log.info({ data_dir: config.data_dir }, "sandbox webhook secret key kept in DATA_DIR/webhook-secret-key");
  return { ...config, webhook_secret_key };
}

/** The webhook delivery loop, woken by NOTIFY from any process and by its own timer. */
async function startWebhooks(ctx: AppContext, direct_url: string, log: Logger, closers: Closers) {
  const loop = startWebhookDelivery(ctx, log);
  closers.push({ name: "webhook delivery", close: loop.close });
  if (ctx.config.webhook_concurrency === 0) return;
  const listener = await listenForInvalidations(
    direct_url,
    { webhook_deliveries_due: () => loop.wake() },
    (error) => log.warn({ err: error }, "webhook listener"),
    () => loop.wake(),
  );
  closers.push({ name: "webhook listener", close: listener.close });
}

/** The worker role: the sweeps (resolver, emails, eSIM sync) and the scheduled jobs. */
async function startBackground(ctx: AppContext, urls: DatabaseUrls, log: Logger, closers: Closers) {
  const { config } = ctx;
  const mailer = createMailer({
    smtp_url: config.smtp_url,
    mail_from: config.mail_from,
    data_dir: config.data_dir,
    max_connections: config.email_concurrency,
  });
  closers.push({ name: "mailer", close: async () => mailer.close() });
  const worker = await startWorker({ ctx, log, jobs_pool: jobsPool(ctx, urls, closers) });
  closers.push({ name: "worker", close: () => worker.stop() });
  closers.push({ name: "resolver sweep", ...startResolverSweep(ctx, log) });
  closers.push({ name: "email sweep", ...startEmailSweep(ctx, mailer, log) });
  closers.push({ name: "traveller notice sweep", ...startTravellerNoticeSweep(ctx, mailer, log) });
  closers.push({ name: "stale job sweeper", ...startStaleJobSweeper(ctx, log) });
  closers.push({ name: "eSIM sync", ...startEsimSync(ctx, log) });
  closers.push({ name: "refund sweep", ...startRefundSweep(ctx, log) });
  if (config.carrier_profiles === "es2plus") {
    const threshold = config.profile_inventory_low_threshold;
    closers.push({ name: "profile inventory watch", ...startInventoryWatch(ctx.pool, threshold, log) });
  }
}

/**
 * graphile-worker LISTENs for new jobs on a connection it keeps: through a transaction-mode pooler
 * it would hear nothing (and its named statements would miss), so it gets a pool of its own on the
 * direct URL then, one connection per job at once plus its LISTEN and its cron. Directly, it shares
 * the process's pool, as before.
 */
function jobsPool(ctx: AppContext, urls: DatabaseUrls, closers: Closers): Pool {
  if (!urls.through_pooler) return ctx.pool;
  const pool = createPool(urls.direct, ctx.config.worker_concurrency + 2, "esim-worker-jobs");
  closers.push({ name: "worker jobs pool", close: () => pool.end() });
  return pool;
}

/**
 * This process's heartbeat (server/live-processes.ts), started before anything that takes a lease
 * and so closed after all of them: its row goes only once no drive of this process is left.
 */
async function startHeartbeat(
  config: Config,
  direct_url: string,
  log: Logger,
  closers: Closers,
): Promise<LiveProcesses> {
  const live = await startLiveProcesses(direct_url, { serves_api: config.role !== "worker" }, (error) =>
    log.warn({ err: error }, "process heartbeat failed"),
  );
  closers.push({ name: "process heartbeat", close: live.close });
  return live;
}

/** The HTTP application, its cache invalidations, and the listening socket. */
async function listen(
  ctx: AppContext,
  live: LiveProcesses,
  direct_url: string,
  log: Logger,
  closers: Closers,
): Promise<number> {
  const { config, pool } = ctx;
  const { app, authenticator, keyLimiter, metrics } = await buildApp(ctx, { loggerInstance: log });
  authenticator.start();
  closers.push({ name: "last-used flush", close: () => authenticator.stop() });
  // Each API process allows its share of a key's rate: 1/N with N processes alive.
  live.onCount((processes) => keyLimiter.shareWith(processes));
  const listener = await listenForInvalidations(
    direct_url,
    counted(addNoticeCounter(metrics), {
      api_key_revoked: (key_id) => authenticator.onKeyRevoked(key_id),
      partner_status_changed: (partner_id) => authenticator.onPartnerStatusChanged(partner_id),
      catalog_changed: (version) => catalogChanged(pool, version),
      esim_changed: (iccid) => esimChanged(pool, iccid),
    }),
    (error) => log.warn({ err: error }, "invalidation listener"),
    // Notices missed while the connection was down (a PostgreSQL restart): caches without a
    // version check of their own start again; the catalog's re-reads its version every 2 s.
    () => {
      esimNoticesMissed(pool);
      authenticator.onNoticesMissed();
    },
  );
  closers.push({ name: "invalidation listener", close: listener.close });
  closers.push({ name: "HTTP server", close: () => app.close() });
  const address = await app.listen({ port: config.port, host: config.host });
  const port =
    app.server.address() && typeof app.server.address() === "object"
      ? (app.server.address() as { port: number }).port
      : config.port;
  log.info({ port, address, app_env: config.app_env, pid: process.pid }, "eSIM ordering service listening");
  return port;
}

/** Each handler, then the notice counted (esim_invalidation_notices_total): counted once handled. */
function counted(count: (channel: string) => void, handlers: InvalidationHandlers): InvalidationHandlers {
  return Object.fromEntries(
    Object.entries(handlers).map(([channel, handle]) => [
      channel,
      (payload: string) => {
        handle(payload);
        count(channel);
      },
    ]),
  );
}

async function printSandboxHint(ctx: AppContext, port: number): Promise<void> {
  if (ctx.config.app_env !== "sandbox" || (await recentPartners(ctx.db, 1)).length > 0) return;
  console.log(
    `\nSandbox ready on http://localhost:${port} (docs: /docs).\n` +
      "Create a partner with:  npm run cli -- partners create 'Acme Travel'\n" +
      (ctx.config.admin_token ? "or POST /admin/partners with Authorization: Bearer $ADMIN_TOKEN\n" : ""),
  );
}

/**
 * Closes what start-up opened, in reverse order, once: a signal and a failed start-up may both ask.
 */
function closerOfAll(log: Logger, closers: Closers): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => {
    closing ??= (async () => {
      for (const closer of closers.reverse()) {
        await closer.close().catch((error: unknown) => log.error({ err: error }, `closing ${closer.name}`));
        log.debug(`closed ${closer.name}`);
      }
    })();
    return closing;
  };
}

/**
 * Installed before anything starts: a stop asked for while start-up is still running (the
 * embedded PostgreSQL half started, the port just opened) waits for start-up to finish, then closes
 * everything it opened. Without this, Node's default SIGTERM would exit at once and orphan postgres.
 */
function closeOnStopRequests(
  config: Config,
  log: Logger,
  closeAll: () => Promise<void>,
  started: Promise<unknown>,
): void {
  whenAskedToStop({ log, watch_parent: config.stop_with_parent }, async (reason) => {
    log.info({ reason }, "shutting down");
    await started.catch(() => undefined);
    await closeAll();
    log.info("stopped");
    process.exit(0);
  });
}

async function start(config: Config, log: Logger, closers: Closers): Promise<void> {
  const urls = await openDatabaseUrls(config, log, closers);
  const { pool, db } = await openDatabase(config, urls, log, closers);
  const { carrier, pointCallbacksAt } = await startCarrierOf(config, pool, log, closers);
  const live = await startHeartbeat(config, urls.direct, log, closers);
  const ctx: AppContext = {
    config: await withWebhookSecretKey(config, log),
    pool,
    db,
    carrier,
    csv_exports: new KeyedSlots(config.csv_exports_per_process, config.csv_exports_per_partner),
    liveness: { process_id: live.process_id, fresh: live.fresh },
  };
  armCrashPoint(config.crash_at);
  // ROLE: api serves HTTP only, worker runs the background work only, all (the default) both.
  if (config.role !== "api") {
    await startBackground(ctx, urls, log, closers);
    await startWebhooks(ctx, urls.direct, log, closers);
  }
  if (config.role === "worker") {
    log.info({ role: config.role, pid: process.pid }, "eSIM ordering worker running");
    return;
  }
  const port = await listen(ctx, live, urls.direct, log, closers);
  pointCallbacksAt?.(`http://127.0.0.1:${port}`);
  await printSandboxHint(ctx, port);
}

async function main(): Promise<void> {
  const config = withSandboxCallbackToken(readConfig());
  const log = pino(loggerOptions(config.log_level) as object);
  const closers: Closers = [];
  const closeAll = closerOfAll(log, closers);
  let finished: (value: unknown) => void = () => undefined;
  const started = new Promise((resolve) => {
    finished = resolve;
  });
  closeOnStopRequests(config, log, closeAll, started);
  try {
    await start(config, log, closers);
  } catch (error) {
    // A start-up refused half-way (an ES2+ file that cannot be read, a migration that fails) stops
    // what it had started: the embedded PostgreSQL runs in a session of its own and would outlive us.
    console.error(`start-up failed: ${(error as Error).message ?? String(error)}`);
    log.fatal({ err: error }, "start-up failed");
    await closeAll();
    process.exit(1);
  } finally {
    finished(undefined);
  }
}

await main();
