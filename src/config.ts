// Every setting of the service, read from the environment and validated once, here.
// Bad values stop start-up with one message that names every variable at fault and what was
// expected of it, so a deployment's typos fail loudly at boot, all in one attempt, instead of
// quietly at the first purchase. `npm run cli -- config check` runs the same reading.
import { isIP } from "node:net";
import { CRASH_POINTS, type CrashPoint } from "./lib/crash-points.ts";

export type AppEnv = "sandbox" | "production";

/** What this process runs: HTTP (api), background loops and scheduled jobs (worker), or both (all). */
export type Role = "api" | "worker" | "all";

export type Config = {
  /** ROLE: `all` (the default, `npm start`) serves HTTP and runs the background work. */
  role: Role;
  port: number;
  host: string;
  app_env: AppEnv;
  /** Absent: the service starts an embedded PostgreSQL under `data_dir`. */
  database_url: string | null;
  /**
   * DATABASE_DIRECT_URL: a direct connection to PostgreSQL for what needs a session of its own
   * (LISTEN, migrations, the heartbeat, graphile-worker's jobs). Set, it tells the service that
   * DATABASE_URL goes through a transaction-mode pooler (PgBouncer); absent, DATABASE_URL serves both.
   */
  database_direct_url: string | null;
  data_dir: string;
  /** Loopback port of the embedded PostgreSQL (only without DATABASE_URL). */
  embedded_pg_port: number;
  /** Absent: the operator API answers 404 and only the CLI can manage partners. */
  admin_token: string | null;
  /** Absent: /metrics is open (keep it internal); set: it needs `Authorization: Bearer <token>`. */
  metrics_token: string | null;
  /** Absent: confirmation emails are written as .eml files under `<data_dir>/mail/`. */
  smtp_url: string | null;
  mail_from: string;
  /**
   * PUBLIC_BASE_URL: where people reach this service, for the links in invitation and password
   * reset emails (default `http://localhost:PORT`).
   */
  public_base_url: string;
  /** Absent in sandbox: the built-in carrier simulator is started beside the API. */
  carrier_url: string | null;
  carrier_api_key: string | null;
  carrier_timeout_ms: number;
  /** Whether POST /carrier/callbacks accepts pushed eSIM signals (the pull sync runs either way). */
  carrier_callbacks_enabled: boolean;
  /** The shared secret the carrier sends as `Authorization: Bearer <token>` with each callback. */
  carrier_callback_token: string | null;
  /** Where profiles come from: our HTTP carrier protocol, or an SM-DP+ over GSMA ES2+ (issue 15). */
  carrier_profiles: "http" | "es2plus";
  /** ES2+ settings; all or none (checkEs2Plus). */
  es2plus: Es2PlusConfig | null;
  /** The SM-DP+'s bearer token for HandleDownloadProgressInfo (absent: that route answers 404). */
  es2plus_callback_token: string | null;
  /** No eSIM is pulled from the carrier more often than this (seconds). */
  usage_sync_min_interval_s: number;
  /** eSIMs each process pulls per second at most (0: no pull sync in this process). */
  usage_sync_max_per_second: number;
  log_level: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  currency: string;
  rate_limit_per_second: number;
  rate_limit_burst: number;
  /** Failed authentications per client address, per surface (API keys, ADMIN_TOKEN, console partner and operator sign-ins, each service token), per minute. */
  auth_failures_per_minute: number;
  /**
   * TRUSTED_PROXIES: the proxies (CIDRs, `address/prefix`) whose X-Forwarded-For is believed. Empty
   * (the default): the header is ignored and the TCP peer is the client.
   */
  trusted_proxies: string[];
  /** CSV statement exports streaming at once in this process; more are refused (429), not queued. */
  csv_exports_per_process: number;
  /** CSV statement exports streaming at once for one partner in this process (API and console). */
  csv_exports_per_partner: number;
  db_pool_max: number;
  db_prepare_threshold: number;
  cart_ttl_minutes: number;
  idempotency_ttl_hours: number;
  /** A completed order can be refunded this many days after its purchase (contract "Order additions"). */
  refund_window_days: number;
  /**
   * Audit log entries older than this are purged hourly (issue 31: "kept at least one year"); 365
   * or more, refused below at start-up.
   */
  audit_retention_days: number;
  /** How often each worker sweeps refunds whose driver died or whose carrier did not answer. */
  refund_sweep_interval_ms: number;
  /** Refunds one partner may start per rolling hour; past it 429 `rate_limited` (refund-budget.ts). */
  refunds_per_partner_per_hour: number;
  /**
   * Confirmation resends one partner may send to addresses other than their orders' per rolling
   * 24 hours; past it 429 `resend_limit_reached` (notifications/queue-resend.ts).
   */
  resends_to_other_addresses_per_partner_per_day: number;
  /** An ES2+ package whose free ICCIDs fall below this is reported low (metric, warn log, console). */
  profile_inventory_low_threshold: number;
  /** How long a pending order waits before the resolver asks the carrier about it. */
  resolve_after_ms: number;
  /** A pending order this old is flagged for the operator to settle (`orders settle`). */
  pending_give_up_hours: number;
  /** A pending order this old is ended by the resolver's last look (give-up-order.ts): the hold voided. */
  pending_fail_after_hours: number;
  worker_concurrency: number;
  /** Confirmation emails one worker process sends at once (and its SMTP connections at most). */
  email_concurrency: number;
  /** A job locked this long belongs to a dead process and is unlocked (every task is idempotent). */
  stale_job_after_ms: number;
  /** The web console: a session ends after this long without a request (minutes). */
  console_idle_minutes: number;
  /** The web console: a session ends this long after sign-in, however busy (hours). */
  console_session_hours: number;
  /** Test-only: SIGKILL this process at a named point of a purchase (sandbox only). */
  crash_at: CrashPoint | null;
  /**
   * Stop (draining) when the parent process exits: true when npm started this process (npm sets
   * `npm_lifecycle_event`), so a killed `npm start` never leaves the service running orphaned.
   */
  stop_with_parent: boolean;
  /**
   * SSO_ALLOW_PRIVATE_NETWORKS: lets a partner's single sign-on issuer use http:// and loopback,
   * private or link-local addresses (development, tests); refused outside the sandbox.
   */
  sso_allow_private_networks: boolean;
} & WebhookConfig &
  SupplierConfig;

/**
 * The wholesale suppliers (contract, "Suppliers (operator side)"; README "Suppliers"). A URL left
 * unset is the supplier's production API in production, and in the sandbox its built-in fake,
 * started in-process for the command that needs it (src/catalog/supplier-listing.ts).
 */
export type SupplierConfig = {
  /** AIRALO_API_URL: the base including its version segment (production default https://partners-api.airalo.com/v2). */
  airalo_api_url: string | null;
  /** AIRALO_CLIENT_ID, AIRALO_CLIENT_SECRET: the partner account's client credentials; both or neither. */
  airalo_client_id: string | null;
  airalo_client_secret: string | null;
  /** ESIMGO_API_URL: the base including its version segment (production default https://api.esim-go.com/v2.4). */
  esimgo_api_url: string | null;
  /** ESIMGO_API_KEY: sent as X-API-Key. */
  esimgo_api_key: string | null;
  /** SUPPLIER_TIMEOUT_MS: one call to a supplier, connection to last byte (default 30000). */
  supplier_timeout_ms: number;
  /**
   * SUPPLIER_IN_FLIGHT_MS: how long a supplier order whose answer was lost, and which a lookup did not
   * find, may still land; only then is it posted again (default 900000, 15 minutes: neither supplier
   * documents a bound). A test-mode supplier whose latency is known (the chaos run) may use less.
   */
  supplier_in_flight_ms: number;
  /** SUPPLIER_SYNC_MINUTES: a supplier's catalog sync repeats this often once run (default 60). */
  supplier_sync_minutes: number;
};

/** Webhook delivery (README "Webhooks"). */
export type WebhookConfig = {
  /**
   * Base64 of at least 32 random bytes: the key that encrypts webhook signing secrets at rest.
   * Required in production; absent in the sandbox, main.ts makes one and keeps it under DATA_DIR.
   */
  webhook_secret_key: string | null;
  /** Lets endpoints use http:// and loopback, private or link-local addresses (development, tests). */
  webhook_allow_private_networks: boolean;
  /** One attempt (connect, send, answer) gets this long; a 2xx later is a failure. */
  webhook_timeout_ms: number;
  /** Receivers called at once by this process (0: this process delivers nothing). */
  webhook_concurrency: number;
  /** Calls in flight to one endpoint at once, across all processes. */
  webhook_endpoint_concurrency: number;
  /** The first retry's delay (the contract's 5 s); shorter only in the sandbox, for tests. */
  webhook_first_retry_delay_ms: number;
  /** How often the delivery loop looks for new events and due retries without being woken. */
  webhook_poll_ms: number;
};

export type Es2PlusConfig = {
  /** The SM-DP+'s ES2+ base URL (https). */
  url: string;
  /** Our functionRequesterIdentifier, as registered at the SM-DP+. */
  requester_id: string;
  /** PEM files: our client certificate, its key, and the CA that signed the SM-DP+'s certificate. */
  client_cert_file: string;
  client_key_file: string;
  ca_file: string;
  /** The SM-DP+ address in activation codes (LPA:1$<address>$<matching id>). */
  smdp_address: string;
};

/** One problem of the environment: the variable, and what was expected of it. */
export type ConfigProblem = { variable: string; problem: string };

/** Every problem found in the environment at once, one line each (`PORT: expected ...`). */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    super(problems.map(({ variable, problem }) => `${variable}: ${problem}`).join("\n"));
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/**
 * The environment being read, and the problems found in it so far. A reader that finds a problem
 * records it and goes on with the default, so one start-up (or `config check`) reports them all;
 * loadConfig throws once at the end, and a config with a problem never leaves this file.
 */
type Env = { vars: Record<string, string | undefined>; problems: ConfigProblem[] };

function report(env: Env, variable: string, problem: string): void {
  env.problems.push({ variable, problem });
}

/** Whether any of `variables` has a problem already (a rule between them would only echo it). */
function hasProblem(env: Env, ...variables: string[]): boolean {
  return env.problems.some((found) => variables.includes(found.variable));
}

function text(env: Env, name: string): string | null {
  const value = env.vars[name];
  if (value === undefined || value.trim() === "") return null;
  return value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) {
    report(env, name, `expected a whole number, got "${raw}"`);
    return fallback;
  }
  const value = Number(raw);
  if (value < min || value > max) {
    report(env, name, `expected ${min} to ${max}, got ${value}`);
    return fallback;
  }
  return value;
}

/** The contract keeps the audit log at least a year: a shorter retention is a mistake, said plainly. */
export const MIN_AUDIT_RETENTION_DAYS = 365;
const DEFAULT_AUDIT_RETENTION_DAYS = 400;

function auditRetentionDays(env: Env): number {
  const raw = text(env, "AUDIT_RETENTION_DAYS");
  if (raw !== null && /^\d+$/.test(raw) && Number(raw) < MIN_AUDIT_RETENTION_DAYS) {
    report(
      env,
      "AUDIT_RETENTION_DAYS",
      `the audit log is kept at least a year: expected ${MIN_AUDIT_RETENTION_DAYS} days or more, got ${raw}`,
    );
    return DEFAULT_AUDIT_RETENTION_DAYS;
  }
  return integer(env, "AUDIT_RETENTION_DAYS", DEFAULT_AUDIT_RETENTION_DAYS, MIN_AUDIT_RETENTION_DAYS, 36_500);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    report(env, name, `expected one of ${allowed.join(", ")}, got "${raw}"`);
    return fallback;
  }
  return raw as T;
}

function url(env: Env, name: string, protocols: readonly string[]): string | null {
  const raw = text(env, name);
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    report(env, name, "is not a valid URL");
    return null;
  }
  if (!protocols.includes(parsed.protocol)) {
    report(env, name, `expected a ${protocols.join(" or ")} URL, got ${parsed.protocol}`);
    return null;
  }
  return raw;
}

/** A token sent as `Authorization: Bearer <token>`: one header token, so no space or control character. */
function bearerToken(env: Env, name: string): string | null {
  const value = text(env, name);
  if (value === null) return null;
  if (!/^[\x21-\x7e]*$/.test(value)) {
    report(env, name, "must be printable ASCII without spaces or control characters");
    return null;
  }
  if (value.length < 16) {
    report(env, name, "must be at least 16 characters");
    return null;
  }
  return value;
}

/** Entries of TRUSTED_PROXIES at most: a load balancer tier is a few subnets, not a table. */
const MAX_TRUSTED_PROXIES = 64;

/**
 * A comma-separated list of IPv4 and IPv6 CIDRs (a bare address is a /32 or /128), written back as
 * `address/prefix`. A /0 is refused: it would believe every client's X-Forwarded-For, letting any
 * client choose the address its failed-authentication budget is counted against.
 */
function cidrList(env: Env, name: string): string[] {
  const raw = text(env, name);
  if (raw === null) return [];
  const entries = raw.split(",").map((entry) => entry.trim());
  if (entries.length > MAX_TRUSTED_PROXIES) {
    report(env, name, `at most ${MAX_TRUSTED_PROXIES} entries, got ${entries.length}`);
    return [];
  }
  const cidrs = entries.map((entry) => cidr(entry));
  const refused = cidrs.find((parsed) => typeof parsed === "object");
  if (refused) {
    report(env, name, refused.problem);
    return [];
  }
  return cidrs as string[];
}

/** One entry of a CIDR list as `address/prefix`, or what is wrong with it. */
function cidr(entry: string): string | { problem: string } {
  const match = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(entry);
  const family = match ? isIP(match[1]!) : 0;
  // Zone ids (fe80::1%eth0) name an interface, not an address a peer can have on the wire.
  if (!match || family === 0 || match[1]!.includes("%")) {
    return { problem: `expected IPv4 or IPv6 CIDRs such as 10.0.0.0/8 or fd00::/8, got "${entry}"` };
  }
  const bits = family === 4 ? 32 : 128;
  const prefix = match[2] === undefined ? bits : Number(match[2]);
  if (prefix < 1 || prefix > bits) return { problem: `"${entry}": the prefix must be 1 to ${bits}` };
  return `${match[1]}/${prefix}`;
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** Where the service runs and what it talks to (database, mail). */
function readServer(env: Env, app_env: AppEnv) {
  const admin_token = bearerToken(env, "ADMIN_TOKEN");
  const port = integer(env, "PORT", 3000, 0, 65535);
  return {
    port,
    host: text(env, "HOST") ?? "0.0.0.0",
    app_env,
    database_url: url(env, "DATABASE_URL", ["postgres:", "postgresql:"]),
    database_direct_url: url(env, "DATABASE_DIRECT_URL", ["postgres:", "postgresql:"]),
    data_dir: text(env, "DATA_DIR") ?? ".data",
    embedded_pg_port: integer(env, "EMBEDDED_PG_PORT", 54329, 1024, 65535),
    admin_token,
    metrics_token: bearerToken(env, "METRICS_TOKEN"),
    trusted_proxies: cidrList(env, "TRUSTED_PROXIES"),
    smtp_url: url(env, "SMTP_URL", ["smtp:", "smtps:"]),
    mail_from: text(env, "MAIL_FROM") ?? "eSIM Orders <orders@esim.example>",
    public_base_url: (url(env, "PUBLIC_BASE_URL", ["http:", "https:"]) ?? `http://localhost:${port}`).replace(
      /\/+$/,
      "",
    ),
  };
}

function readCarrier(env: Env, app_env: AppEnv) {
  return {
    carrier_url: url(env, "CARRIER_URL", ["http:", "https:"]),
    carrier_api_key: text(env, "CARRIER_API_KEY"),
    carrier_timeout_ms: integer(env, "CARRIER_TIMEOUT_MS", 10_000, 100, 120_000),
    carrier_callbacks_enabled:
      oneOf(env, "CARRIER_CALLBACKS_ENABLED", ["true", "false"] as const, "true") === "true",
    carrier_callback_token: bearerToken(env, "CARRIER_CALLBACK_TOKEN"),
    // The sandbox's built-in carrier runs the production path: profiles over ES2+ from its own
    // SM-DP+ simulator. Anything pointed at a carrier (CARRIER_URL) keeps the HTTP protocol unless told.
    carrier_profiles: oneOf(
      env,
      "CARRIER_PROFILES",
      ["http", "es2plus"] as const,
      app_env === "sandbox" && text(env, "CARRIER_URL") === null ? "es2plus" : "http",
    ),
    es2plus: readEs2Plus(env),
    es2plus_callback_token: bearerToken(env, "ES2PLUS_CALLBACK_TOKEN"),
    usage_sync_min_interval_s: integer(env, "USAGE_SYNC_MIN_INTERVAL_S", 900, 1, 7 * 86_400),
    usage_sync_max_per_second: integer(env, "USAGE_SYNC_MAX_PER_SECOND", 5, 0, 1_000),
  };
}

const ES2PLUS_VARIABLES = [
  "ES2PLUS_URL",
  "ES2PLUS_REQUESTER_ID",
  "ES2PLUS_CLIENT_CERT_FILE",
  "ES2PLUS_CLIENT_KEY_FILE",
  "ES2PLUS_CA_FILE",
  "ES2PLUS_SMDP_ADDRESS",
] as const;

/** All six ES2+ settings or none: half a configuration is refused, in every environment. */
function readEs2Plus(env: Env): Es2PlusConfig | null {
  const given = ES2PLUS_VARIABLES.filter((name) => text(env, name) !== null);
  if (given.length === 0) return null;
  const missing = ES2PLUS_VARIABLES.filter((name) => text(env, name) === null);
  for (const name of missing) report(env, name, `is required with ${given.join(", ")}`);
  if (missing.length > 0) return null;
  const requester_id = text(env, "ES2PLUS_REQUESTER_ID")!;
  if (!/^[\x21-\x7e]{1,128}$/.test(requester_id)) {
    report(env, "ES2PLUS_REQUESTER_ID", "must be 1 to 128 printable characters without spaces");
  }
  const smdp_address = text(env, "ES2PLUS_SMDP_ADDRESS")!;
  if (!/^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$/.test(smdp_address)) {
    report(env, "ES2PLUS_SMDP_ADDRESS", "must be a host name with an optional port");
  }
  return {
    // Empty only when refused above: loadConfig then throws before anyone reads it.
    url: url(env, "ES2PLUS_URL", ["https:"]) ?? "",
    requester_id,
    client_cert_file: text(env, "ES2PLUS_CLIENT_CERT_FILE")!,
    client_key_file: text(env, "ES2PLUS_CLIENT_KEY_FILE")!,
    ca_file: text(env, "ES2PLUS_CA_FILE")!,
    smdp_address,
  };
}

/** The limits of the running service: rates, pool, lifetimes, background work. */
function readLimits(env: Env) {
  return {
    rate_limit_per_second: integer(env, "RATE_LIMIT_PER_SECOND", 50, 1, 1_000_000),
    rate_limit_burst: integer(env, "RATE_LIMIT_BURST", 100, 1, 1_000_000),
    auth_failures_per_minute: integer(env, "AUTH_FAILURES_PER_MINUTE", 300, 1, 1_000_000),
    csv_exports_per_process: integer(env, "CSV_EXPORTS_PER_PROCESS", 4, 1, 64),
    csv_exports_per_partner: integer(env, "CSV_EXPORTS_PER_PARTNER", 1, 1, 64),
    db_pool_max: integer(env, "DB_POOL_MAX", 20, 2, 500),
    // Behind a transaction-mode pooler (DATABASE_DIRECT_URL set) nothing is prepared unless asked:
    // PgBouncer before 1.21 (Debian 12 ships 1.18) would run a statement prepared on one server
    // connection on another, which does not have it. PgBouncer 1.21+ with max_prepared_statements may set 3.
    db_prepare_threshold: integer(
      env,
      "DB_PREPARE_THRESHOLD",
      text(env, "DATABASE_DIRECT_URL") === null ? 3 : 0,
      0,
      1_000,
    ),
    cart_ttl_minutes: integer(env, "CART_TTL_MINUTES", 30, 1, 24 * 60),
    idempotency_ttl_hours: integer(env, "IDEMPOTENCY_TTL_HOURS", 24, 24, 24 * 30),
    refund_window_days: integer(env, "REFUND_WINDOW_DAYS", 30, 0, 3650),
    audit_retention_days: auditRetentionDays(env),
    refund_sweep_interval_ms: integer(env, "REFUND_SWEEP_INTERVAL_MS", 2_000, 100, 600_000),
    refunds_per_partner_per_hour: integer(env, "REFUNDS_PER_PARTNER_PER_HOUR", 30, 1, 100_000),
    resends_to_other_addresses_per_partner_per_day: integer(
      env,
      "RESENDS_TO_OTHER_ADDRESSES_PER_PARTNER_PER_DAY",
      100,
      1,
      100_000,
    ),
    profile_inventory_low_threshold: integer(env, "PROFILE_INVENTORY_LOW_THRESHOLD", 100, 0, 10_000_000),
    resolve_after_ms: integer(env, "RESOLVE_AFTER_MS", 30_000, 100, 3_600_000),
    worker_concurrency: integer(env, "WORKER_CONCURRENCY", 4, 1, 64),
    email_concurrency: integer(env, "EMAIL_CONCURRENCY", 48, 1, 256),
    pending_give_up_hours: integer(env, "PENDING_GIVE_UP_HOURS", 24, 1, 24 * 30),
    pending_fail_after_hours: integer(env, "PENDING_FAIL_AFTER_HOURS", 72, 1, 24 * 90),
    stale_job_after_ms: integer(env, "STALE_JOB_AFTER_MS", 120_000, 1_000, 24 * 3_600_000),
    console_idle_minutes: integer(env, "CONSOLE_IDLE_MINUTES", 30, 1, 24 * 60),
    console_session_hours: integer(env, "CONSOLE_SESSION_HOURS", 12, 1, 7 * 24),
  };
}

/** base64 of at least 32 bytes, or absent. */
function secretKey(env: Env, name: string): string | null {
  const value = text(env, name);
  if (value === null) return null;
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value) || Buffer.from(value, "base64").length < 32) {
    report(env, name, "must be base64 of at least 32 random bytes (openssl rand -base64 32)");
    return null;
  }
  return value;
}

function readSuppliers(env: Env): SupplierConfig {
  return {
    airalo_api_url: url(env, "AIRALO_API_URL", ["http:", "https:"]),
    airalo_client_id: text(env, "AIRALO_CLIENT_ID"),
    airalo_client_secret: text(env, "AIRALO_CLIENT_SECRET"),
    esimgo_api_url: url(env, "ESIMGO_API_URL", ["http:", "https:"]),
    esimgo_api_key: text(env, "ESIMGO_API_KEY"),
    supplier_timeout_ms: integer(env, "SUPPLIER_TIMEOUT_MS", 30_000, 100, 120_000),
    supplier_in_flight_ms: integer(env, "SUPPLIER_IN_FLIGHT_MS", 900_000, 1_000, 86_400_000),
    supplier_sync_minutes: integer(env, "SUPPLIER_SYNC_MINUTES", 60, 1, 7 * 24 * 60),
  };
}

function readWebhooks(env: Env): WebhookConfig {
  return {
    webhook_secret_key: secretKey(env, "WEBHOOK_SECRET_KEY"),
    webhook_allow_private_networks:
      oneOf(env, "WEBHOOK_ALLOW_PRIVATE_NETWORKS", ["true", "false"] as const, "false") === "true",
    webhook_timeout_ms: integer(env, "WEBHOOK_TIMEOUT_MS", 15_000, 100, 60_000),
    webhook_concurrency: integer(env, "WEBHOOK_CONCURRENCY", 64, 0, 256),
    webhook_endpoint_concurrency: integer(env, "WEBHOOK_ENDPOINT_CONCURRENCY", 2, 1, 64),
    webhook_first_retry_delay_ms: integer(env, "WEBHOOK_FIRST_RETRY_DELAY_MS", 5_000, 100, 5_000),
    webhook_poll_ms: integer(env, "WEBHOOK_POLL_MS", 500, 20, 10_000),
  };
}

/**
 * A rule between settings each valid alone: reported against `variable` when `broken`, unless one
 * of the variables it `involves` (its own included) already has a problem of its own: the rule would
 * then judge a default the operator did not choose.
 */
type Rule = {
  variable: string;
  involves: readonly string[];
  broken: (config: Config) => boolean;
  problem: string;
};

const TEST_SETTING = "is a test setting and is refused outside the sandbox";

/** Settings that are valid alone but not together. */
const RULES: readonly Rule[] = [
  {
    // The embedded PostgreSQL is reached directly; a direct URL alone names no pooler to go around.
    variable: "DATABASE_DIRECT_URL",
    involves: ["DATABASE_URL"],
    broken: (c) => c.database_direct_url !== null && c.database_url === null,
    problem: "is the direct connection beside DATABASE_URL: set DATABASE_URL too",
  },
  {
    variable: "CRASH_AT",
    involves: ["APP_ENV"],
    broken: (c) => c.crash_at !== null && c.app_env !== "sandbox",
    problem: TEST_SETTING,
  },
  {
    variable: "WEBHOOK_FIRST_RETRY_DELAY_MS",
    involves: ["APP_ENV"],
    broken: (c) => c.webhook_first_retry_delay_ms !== 5_000 && c.app_env !== "sandbox",
    problem: TEST_SETTING,
  },
  {
    // The contract: https and public addresses only in production; the flag would let any partner
    // point deliveries at the internal network (SSRF).
    variable: "WEBHOOK_ALLOW_PRIVATE_NETWORKS",
    involves: ["APP_ENV"],
    broken: (c) => c.webhook_allow_private_networks && c.app_env !== "sandbox",
    problem: "is a development and test setting and is refused outside the sandbox",
  },
  {
    // The same door as the webhook flag: the service fetches an issuer's discovery document,
    // keys and tokens, so a partner could point it at the internal network (SSRF).
    variable: "SSO_ALLOW_PRIVATE_NETWORKS",
    involves: ["APP_ENV"],
    broken: (c) => c.sso_allow_private_networks && c.app_env !== "sandbox",
    problem: "is a development and test setting and is refused outside the sandbox",
  },
  {
    // A live job (a carrier call, an SMTP send) must never look stale in production.
    variable: "STALE_JOB_AFTER_MS",
    involves: ["CARRIER_TIMEOUT_MS", "APP_ENV"],
    broken: (c) => c.stale_job_after_ms <= c.carrier_timeout_ms + 30_000 && c.app_env === "production",
    problem: "must exceed CARRIER_TIMEOUT_MS by at least 30 seconds",
  },
  {
    // A job (an email send) may hold a connection for seconds: jobs must never take the whole pool.
    variable: "WORKER_CONCURRENCY",
    involves: ["DB_POOL_MAX"],
    broken: (c) => c.worker_concurrency * 2 > c.db_pool_max,
    problem: "may use at most half of DB_POOL_MAX connections",
  },
  {
    // Without ES2PLUS_* only the sandbox's built-in carrier brings its own SM-DP+ (production
    // always has CARRIER_URL, so it never gets here without them).
    variable: "ES2PLUS_URL",
    involves: ["CARRIER_PROFILES", "CARRIER_URL", ...ES2PLUS_VARIABLES],
    broken: (c) => c.carrier_profiles === "es2plus" && c.es2plus === null && c.carrier_url !== null,
    problem: "and the other ES2PLUS_* settings are required with CARRIER_PROFILES=es2plus and CARRIER_URL",
  },
  {
    variable: "RATE_LIMIT_BURST",
    involves: ["RATE_LIMIT_PER_SECOND"],
    broken: (c) => c.rate_limit_burst < c.rate_limit_per_second,
    problem: "must be at least RATE_LIMIT_PER_SECOND",
  },
  {
    // Giving up before the resolver has even looked would hand the operator orders it would finish.
    variable: "PENDING_GIVE_UP_HOURS",
    involves: ["RESOLVE_AFTER_MS"],
    broken: (c) => c.pending_give_up_hours * 3_600_000 <= c.resolve_after_ms,
    problem: "must be longer than RESOLVE_AFTER_MS",
  },
  {
    // The operator is told of a stuck order (PENDING_GIVE_UP_HOURS) before the resolver ends it.
    variable: "PENDING_FAIL_AFTER_HOURS",
    involves: ["PENDING_GIVE_UP_HOURS"],
    broken: (c) => c.pending_fail_after_hours < c.pending_give_up_hours,
    problem: "must be at least PENDING_GIVE_UP_HOURS",
  },
  {
    // The resolver must not race a request that is still legitimately waiting on the carrier.
    variable: "RESOLVE_AFTER_MS",
    involves: ["CARRIER_TIMEOUT_MS"],
    broken: (c) => c.resolve_after_ms <= c.carrier_timeout_ms,
    problem: "must be greater than CARRIER_TIMEOUT_MS",
  },
  {
    // Half a credential is a typo, not a choice.
    variable: "AIRALO_CLIENT_SECRET",
    involves: ["AIRALO_CLIENT_ID"],
    broken: (c) => (c.airalo_client_id === null) !== (c.airalo_client_secret === null),
    problem: "and AIRALO_CLIENT_ID are set together or not at all",
  },
  {
    // A real supplier's URL without its credentials could only ever answer 401.
    variable: "AIRALO_CLIENT_ID",
    involves: ["AIRALO_API_URL"],
    broken: (c) => c.airalo_api_url !== null && c.airalo_client_id === null,
    problem: "and AIRALO_CLIENT_SECRET are required with AIRALO_API_URL",
  },
  {
    variable: "ESIMGO_API_KEY",
    involves: ["ESIMGO_API_URL"],
    broken: (c) => c.esimgo_api_url !== null && c.esimgo_api_key === null,
    problem: "is required with ESIMGO_API_URL",
  },
];

/**
 * Production never falls back to a default that would lose data, skip authentication,
 * drop customer email, or send purchases to the simulator.
 */
const PRODUCTION_RULES: readonly Rule[] = [
  ...(
    [
      ["DATABASE_URL", (c) => c.database_url],
      ["ADMIN_TOKEN", (c) => c.admin_token],
      ["SMTP_URL", (c) => c.smtp_url],
      ["CARRIER_URL", (c) => c.carrier_url],
      ["CARRIER_API_KEY", (c) => c.carrier_api_key],
      // Without it, partners' webhook secrets could not be stored encrypted.
      ["WEBHOOK_SECRET_KEY", (c) => c.webhook_secret_key],
    ] as const satisfies readonly (readonly [string, (c: Config) => string | null])[]
  ).map(([variable, value]) => ({
    variable,
    involves: [],
    broken: (c: Config) => value(c) === null,
    problem: "is required when APP_ENV=production",
  })),
  {
    // Invitation and password-reset links point at it: a localhost default would mail dead links.
    variable: "PUBLIC_BASE_URL",
    involves: [],
    broken: (c) =>
      !c.public_base_url.startsWith("https://") || new URL(c.public_base_url).hostname === "localhost",
    problem:
      "must be the console's public https address when APP_ENV=production (invitation and reset links point at it)",
  },
  {
    // The SM-DP+'s notifications move eSIMs to installed or deleted: never an open door.
    variable: "ES2PLUS_CALLBACK_TOKEN",
    involves: ["CARRIER_PROFILES"],
    broken: (c) => c.carrier_profiles === "es2plus" && c.es2plus_callback_token === null,
    problem: "is required with CARRIER_PROFILES=es2plus in production",
  },
  {
    // An open callback endpoint would let anyone move eSIMs' states and fire partners' webhooks.
    variable: "CARRIER_CALLBACK_TOKEN",
    involves: ["CARRIER_CALLBACKS_ENABLED"],
    broken: (c) => c.carrier_callbacks_enabled && c.carrier_callback_token === null,
    problem: "is required when APP_ENV=production (or set CARRIER_CALLBACKS_ENABLED=false)",
  },
];

function checkRules(env: Env, config: Config, rules: readonly Rule[]): void {
  for (const rule of rules) {
    if (hasProblem(env, rule.variable, ...rule.involves) || !rule.broken(config)) continue;
    report(env, rule.variable, rule.problem);
  }
}

/** ISO 4217: three capital letters. */
function currencyCode(env: Env): string {
  const currency = text(env, "CURRENCY") ?? "USD";
  if (/^[A-Z]{3}$/.test(currency)) return currency;
  report(env, "CURRENCY", `expected an ISO 4217 code such as USD, got "${currency}"`);
  return "USD";
}

/**
 * Every setting, from `vars` (the process's environment by default). Throws one ConfigError that
 * lists every problem found, each with its variable and what was expected.
 */
export function loadConfig(vars: Record<string, string | undefined> = process.env): Config {
  const env: Env = { vars, problems: [] };
  const app_env = oneOf(env, "APP_ENV", ["sandbox", "production"] as const, "sandbox");
  const config: Config = {
    role: oneOf(env, "ROLE", ["all", "api", "worker"] as const, "all"),
    ...readServer(env, app_env),
    ...readCarrier(env, app_env),
    log_level: oneOf(env, "LOG_LEVEL", LOG_LEVELS, "info"),
    currency: currencyCode(env),
    ...readLimits(env),
    crash_at: text(env, "CRASH_AT") === null ? null : oneOf(env, "CRASH_AT", CRASH_POINTS, CRASH_POINTS[0]),
    ...readWebhooks(env),
    ...readSuppliers(env),
    sso_allow_private_networks:
      oneOf(env, "SSO_ALLOW_PRIVATE_NETWORKS", ["true", "false"] as const, "false") === "true",
    // npm sets npm_lifecycle_event for the scripts it runs: under `npm start` the service also
    // stops when npm goes away (server/stop-requests.ts), so it is never left running orphaned.
    stop_with_parent: text(env, "npm_lifecycle_event") !== null,
  };
  checkRules(env, config, RULES);
  if (config.app_env === "production") checkRules(env, config, PRODUCTION_RULES);
  if (env.problems.length > 0) throw new ConfigError(env.problems);
  return config;
}
