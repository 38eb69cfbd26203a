// What a benchmark run starts before its first scenario: an embedded PostgreSQL (not migrated:
// the service migrates it with its own tree's migrations), the carrier simulator, the service,
// and the partners; with --profile, the service's inspector and pg_stat_statements.
import { randomBytes } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { createPool } from "../../src/db/pool.ts";
import { startPgBouncer } from "../../test/support/pgbouncer.ts";
import { startOwnPostgres } from "../../test/support/postgres.ts";
import { quiesce } from "./carts.ts";
import { type Context, log, type Options, PARTNER_CREDIT_MINOR, PARTNERS, RESULTS_DIR } from "./context.ts";
import { InspectorSession } from "./inspector.ts";
import {
  FAKE_AIRALO,
  FAKE_ESIMGO_KEY,
  freePort,
  type Running,
  startMailRelay,
  startService,
  startSimulator,
  startSupplierFake,
  startWebhookReceiver,
} from "./processes.ts";
import { createPartners } from "./setup.ts";
import { subscribeWebhooks } from "./webhooks.ts";

/** Everything started is pushed on `stops`, to be stopped in reverse order by the caller. */
export async function startStack(
  options: Options,
  tmp: string,
  stops: (() => Promise<unknown>)[],
): Promise<Context> {
  const embedded = await startOwnPostgres({
    dataDir: path.join(tmp, "pg"),
    migrate: false,
    // Statement counts per answer (pg_stat_statements) with the profiles.
    preload: options.profile ? ["pg_stat_statements"] : [],
  });
  stops.push(embedded.stop);
  const postmaster_pid = (await embedded.postmasterPid()) ?? undefined;
  const pool = createPool(embedded.url, 4, "bench-harness");
  stops.push(() => pool.end());
  if (options.profile) await pool.query("create extension if not exists pg_stat_statements");

  const simulator_key = `sim_${crypto.randomUUID()}`;
  const simulator = await startSimulator({
    database_url: embedded.url,
    api_key: simulator_key,
    log_dir: tmp,
    cwd: options.service_dir,
  });
  stops.push(simulator.stop);
  const supplier_fakes = await startSupplierFakes(options, embedded.url, tmp, stops);
  const mail_relay = options.mail_relay ? await startMailRelay({ log_dir: tmp }) : null;
  if (mail_relay !== null) stops.push(mail_relay.stop);
  const service_database_url = await throughPgBouncer(options, embedded.url, stops);
  const admin_token = `bench-admin-${crypto.randomUUID()}`;
  const inspect_port = options.profile ? await freePort() : 0;
  const service_env = benchServiceEnv(tmp, {
    database_url: service_database_url,
    direct_url: service_database_url === embedded.url ? null : embedded.url,
    admin_token,
    simulator,
    simulator_key,
    mail_relay,
    supplier_fakes,
  });
  const service = await startService({
    log_dir: tmp,
    cwd: options.service_dir,
    // Loopback only, and only when asked: the inspector lets the harness profile one run at a time.
    node_flags: options.profile ? [`--inspect=127.0.0.1:${inspect_port}`] : [],
    env: service_env,
  });
  stops.push(service.stop);
  log(
    `service ${service.url} (pid ${service.pid}), simulator ${simulator.url}, PostgreSQL pid ${postmaster_pid}, ` +
      (mail_relay ? `emails over SMTP to ${mail_relay.url} (pid ${mail_relay.pid})` : "emails as .eml files"),
  );

  const partners = await createPartners(service.url, admin_token, PARTNERS, PARTNER_CREDIT_MINOR);
  log(`${partners.length} partners, each credited ${PARTNER_CREDIT_MINOR} minor units`);

  const webhook_receiver = options.webhooks ? await startWebhookReceiver({ log_dir: tmp }) : null;
  if (webhook_receiver !== null) {
    stops.push(webhook_receiver.stop);
    await subscribeWebhooks(service.url, webhook_receiver.url, partners);
    log(
      `a webhook endpoint for every event per partner, at ${webhook_receiver.url} (pid ${webhook_receiver.pid})`,
    );
  }

  const inspector = options.profile ? await InspectorSession.connect(inspect_port) : null;
  if (inspector) stops.push(async () => inspector.close());
  const ctx: Context = {
    tmp,
    inspector,
    profile_dir: path.join(RESULTS_DIR, "profiles", new Date().toISOString().replace(/[:.]/g, "-")),
    database_url: embedded.url,
    postmaster_pid,
    pool,
    service,
    service_env,
    more_services: [],
    simulator,
    simulator_key,
    supplier_fakes,
    bare: null,
    webhook_receiver,
    mail_relay,
    admin_token,
    partners,
    options,
    results: [],
    ratios: [],
    notes: [],
  };
  // The credits' wallet events go out before the first scenario, not inside it.
  await quiesce(ctx);
  return ctx;
}

/**
 * The fakes of the suppliers whose purchase is measured, each its own process (not the service's
 * in-process sandbox fake): their CPU is theirs, not the service's. Before the service, which is
 * given their URLs.
 */
async function startSupplierFakes(
  options: Options,
  database_url: string,
  tmp: string,
  stops: (() => Promise<unknown>)[],
): Promise<Context["supplier_fakes"]> {
  const start = async (supplier: "airalo" | "esimgo") => {
    if (!options.only.has(`purchase-${supplier}`)) return null;
    const fake = await startSupplierFake({ supplier, database_url, log_dir: tmp, cwd: options.service_dir });
    stops.push(fake.stop);
    log(`${supplier} fake ${fake.url} (pid ${fake.pid}), latency 0`);
    return fake;
  };
  return { airalo: await start("airalo"), esimgo: await start("esimgo") };
}

/**
 * With --pgbouncer: a PgBouncer in transaction mode in front of the bench's PostgreSQL, and the
 * session limits on the database as an operator sets them on the role behind a pooler (README,
 * "Behind PgBouncer"; the service checks them at start-up). Answers the service's DATABASE_URL.
 */
async function throughPgBouncer(
  options: Options,
  direct_url: string,
  stops: (() => Promise<unknown>)[],
): Promise<string> {
  if (options.pgbouncer_pool === 0) return direct_url;
  const admin = new pg.Client({ connectionString: direct_url });
  await admin.connect();
  try {
    const name = pg.escapeIdentifier(new URL(direct_url).pathname.slice(1));
    await admin.query(`alter database ${name} set statement_timeout = '15s'`);
    await admin.query(`alter database ${name} set idle_in_transaction_session_timeout = '30s'`);
  } finally {
    await admin.end();
  }
  const bouncer = await startPgBouncer({ server_url: direct_url, pool_size: options.pgbouncer_pool });
  stops.push(bouncer.stop);
  log(`${bouncer.version} in transaction mode, ${options.pgbouncer_pool} server connections`);
  return bouncer.url;
}

/** The service's environment; every process of the role split gets the same (one WEBHOOK_SECRET_KEY). */
function benchServiceEnv(
  tmp: string,
  to: {
    database_url: string;
    /** DATABASE_DIRECT_URL when DATABASE_URL is a pooler's. */
    direct_url: string | null;
    admin_token: string;
    simulator: Running;
    simulator_key: string;
    mail_relay: Running | null;
    supplier_fakes: Context["supplier_fakes"];
  },
): Record<string, string> {
  const { airalo, esimgo } = to.supplier_fakes;
  return {
    APP_ENV: "sandbox",
    DATABASE_URL: to.database_url,
    ...(to.direct_url === null ? {} : { DATABASE_DIRECT_URL: to.direct_url }),
    DATA_DIR: path.join(tmp, "data"),
    LOG_LEVEL: "warn",
    ADMIN_TOKEN: to.admin_token,
    CARRIER_URL: to.simulator.url,
    CARRIER_API_KEY: to.simulator_key,
    // Far above the slow carrier's 250 ms plus queueing: a benchmark measures, it does not time out.
    CARRIER_TIMEOUT_MS: "30000",
    // The resolver sweep looks at no order younger than this: pushed past the end of the run so
    // one scenario's leftovers (orders in flight when wrk stopped) are not driven in the next one.
    RESOLVE_AFTER_MS: "900000",
    RATE_LIMIT_PER_SECOND: "1000000",
    RATE_LIMIT_BURST: "1000000",
    // The webhook receiver listens on loopback; a key of the run's own, not one generated under DATA_DIR.
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_SECRET_KEY: randomBytes(32).toString("base64"),
    ...(to.mail_relay ? { SMTP_URL: to.mail_relay.url } : {}),
    // A supplier's URL set: the service calls it over HTTP, as in production, with its credentials.
    ...(airalo
      ? {
          AIRALO_API_URL: `${airalo.url}/v2`,
          AIRALO_CLIENT_ID: FAKE_AIRALO.client_id,
          AIRALO_CLIENT_SECRET: FAKE_AIRALO.client_secret,
        }
      : {}),
    ...(esimgo ? { ESIMGO_API_URL: `${esimgo.url}/v2.4`, ESIMGO_API_KEY: FAKE_ESIMGO_KEY } : {}),
  };
}
