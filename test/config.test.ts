import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, loadConfig } from "../src/config.ts";

test("defaults describe a sandbox on port 3000 with an embedded database", () => {
  const config = loadConfig({});
  assert.equal(config.port, 3000);
  assert.equal(config.app_env, "sandbox");
  assert.equal(config.database_url, null);
  assert.equal(config.currency, "USD");
  assert.equal(config.rate_limit_per_second, 50);
  assert.equal(config.rate_limit_burst, 100);
  assert.equal(config.pending_give_up_hours, 24);
});

test("a bad value stops start-up with a message naming the variable", () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: "eighty" }, /^PORT: /],
    [{ PORT: "70000" }, /^PORT: /],
    [{ APP_ENV: "staging" }, /^APP_ENV: /],
    [{ DATABASE_URL: "mysql://x" }, /^DATABASE_URL: /],
    [{ DATABASE_URL: "not a url" }, /^DATABASE_URL: /],
    [{ SMTP_URL: "http://mail" }, /^SMTP_URL: /],
    [{ LOG_LEVEL: "loud" }, /^LOG_LEVEL: /],
    [{ CURRENCY: "usd" }, /^CURRENCY: /],
    [{ ADMIN_TOKEN: "short" }, /^ADMIN_TOKEN: /],
    [{ RATE_LIMIT_PER_SECOND: "0" }, /^RATE_LIMIT_PER_SECOND: /],
    [{ RATE_LIMIT_PER_SECOND: "10", RATE_LIMIT_BURST: "5" }, /^RATE_LIMIT_BURST: /],
    [{ IDEMPOTENCY_TTL_HOURS: "1" }, /^IDEMPOTENCY_TTL_HOURS: /],
    [{ AUDIT_RETENTION_DAYS: "30" }, /^AUDIT_RETENTION_DAYS: the audit log is kept at least a year/],
    [{ AUDIT_RETENTION_DAYS: "a year" }, /^AUDIT_RETENTION_DAYS: expected a whole number/],
    [{ WORKER_CONCURRENCY: "11", DB_POOL_MAX: "20" }, /^WORKER_CONCURRENCY: /],
    [{ PENDING_GIVE_UP_HOURS: "0" }, /^PENDING_GIVE_UP_HOURS: /],
    [{ PENDING_GIVE_UP_HOURS: "721" }, /^PENDING_GIVE_UP_HOURS: /],
    [{ PENDING_GIVE_UP_HOURS: "1", RESOLVE_AFTER_MS: "3600000" }, /^PENDING_GIVE_UP_HOURS: /],
  ];
  for (const [env, message] of cases) {
    assert.throws(
      () => loadConfig(env),
      (error: Error) => error instanceof ConfigError && message.test(error.message),
      JSON.stringify(env),
    );
  }
});

test("production refuses to start without DATABASE_URL, ADMIN_TOKEN, SMTP_URL and a carrier", () => {
  const full = {
    APP_ENV: "production",
    DATABASE_URL: "postgres://u:p@db/esim",
    ADMIN_TOKEN: "a-long-operator-token",
    SMTP_URL: "smtp://mail:25",
    CARRIER_URL: "https://carrier.example",
    CARRIER_API_KEY: "secret",
    CARRIER_CALLBACK_TOKEN: "a-long-callback-token",
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    PUBLIC_BASE_URL: "https://console.esim.example",
  };
  assert.equal(loadConfig(full).app_env, "production");
  assert.throws(
    () => loadConfig({ ...full, PUBLIC_BASE_URL: "" }),
    /PUBLIC_BASE_URL: must be the console's public https address/,
    "a localhost default would mail dead invitation links",
  );
  assert.throws(
    () => loadConfig({ ...full, PUBLIC_BASE_URL: "http://console.esim.example" }),
    /PUBLIC_BASE_URL/,
  );
  for (const missing of [
    "DATABASE_URL",
    "ADMIN_TOKEN",
    "SMTP_URL",
    "CARRIER_URL",
    "CARRIER_API_KEY",
    "WEBHOOK_SECRET_KEY",
  ]) {
    const env: Record<string, string> = { ...full };
    delete env[missing];
    const expected = new RegExp(`^${missing}: is required when APP_ENV=production`);
    assert.throws(
      () => loadConfig(env),
      (error: Error) => expected.test(error.message),
    );
  }
});

test("production refuses to start without the carrier callback token unless callbacks are disabled", () => {
  const env: Record<string, string> = {
    APP_ENV: "production",
    DATABASE_URL: "postgres://u:p@db/esim",
    ADMIN_TOKEN: "a-long-operator-token",
    SMTP_URL: "smtp://mail:25",
    CARRIER_URL: "https://carrier.example",
    CARRIER_API_KEY: "secret",
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    PUBLIC_BASE_URL: "https://console.esim.example",
  };
  assert.throws(
    () => loadConfig(env),
    (error: Error) => /^CARRIER_CALLBACK_TOKEN: is required when APP_ENV=production/.test(error.message),
  );
  const disabled = loadConfig({ ...env, CARRIER_CALLBACKS_ENABLED: "false" });
  assert.equal(disabled.carrier_callbacks_enabled, false);
  assert.throws(() => loadConfig({ ...env, CARRIER_CALLBACK_TOKEN: "short" }), /CARRIER_CALLBACK_TOKEN/);
  const sandbox = loadConfig({});
  assert.deepEqual(
    [sandbox.usage_sync_min_interval_s, sandbox.usage_sync_max_per_second, sandbox.carrier_callback_token],
    [900, 5, null],
    "the documented defaults",
  );
});

test("the service exits naming every bad variable at once when started with several", async () => {
  const { spawnSync } = await import("node:child_process");
  const result = spawnSync(process.execPath, ["src/main.ts"], {
    env: { ...process.env, PORT: "nope", LOG_LEVEL: "loud", APP_ENV: "production", DATABASE_URL: "" },
    encoding: "utf8",
    timeout: 20_000,
  });
  assert.equal(result.status, 2, result.stderr);
  assert.match(result.stderr, /PORT: expected a whole number/);
  assert.match(result.stderr, /LOG_LEVEL: expected one of/);
  assert.match(result.stderr, /DATABASE_URL: is required when APP_ENV=production/);
  assert.match(result.stderr, /configuration error \(\d+ problems\)/);
});

test("every problem is reported at once, each with its variable and what is expected", () => {
  let caught: unknown;
  try {
    loadConfig({
      APP_ENV: "production",
      PORT: "eighty",
      CURRENCY: "usd",
      TRUSTED_PROXIES: "0.0.0.0/0",
      ADMIN_TOKEN: "short",
      ES2PLUS_URL: "https://smdp.example",
      ES2PLUS_CA_FILE: "/etc/esim/ca.pem",
    });
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ConfigError);
  const problems = new Map(caught.problems.map(({ variable, problem }) => [variable, problem]));
  assert.match(problems.get("PORT")!, /^expected a whole number, got "eighty"$/);
  assert.match(problems.get("CURRENCY")!, /^expected an ISO 4217 code/);
  assert.match(problems.get("TRUSTED_PROXIES")!, /the prefix must be 1 to 32/);
  assert.match(problems.get("ADMIN_TOKEN")!, /^must be at least 16 characters$/);
  // Every missing ES2+ setting is named, not only the first.
  for (const missing of ["ES2PLUS_REQUESTER_ID", "ES2PLUS_CLIENT_CERT_FILE", "ES2PLUS_CLIENT_KEY_FILE"]) {
    assert.match(problems.get(missing)!, /^is required with ES2PLUS_URL, ES2PLUS_CA_FILE$/);
  }
  for (const required of ["DATABASE_URL", "SMTP_URL", "CARRIER_URL", "WEBHOOK_SECRET_KEY"]) {
    assert.equal(problems.get(required), "is required when APP_ENV=production");
  }
  // A bad ADMIN_TOKEN is reported as what it is, not again as missing.
  assert.equal(caught.problems.filter((p) => p.variable === "ADMIN_TOKEN").length, 1);
  assert.equal(caught.message.split("\n").length, caught.problems.length, "one line per problem");
});

test("a rule between settings is not reported when one of them has a problem of its own", () => {
  // DB_POOL_MAX falls back to 20 after its own problem; WORKER_CONCURRENCY=16 is more than half of
  // that default, but the operator did not choose the default: only DB_POOL_MAX is reported.
  assert.throws(
    () => loadConfig({ DB_POOL_MAX: "many", WORKER_CONCURRENCY: "16" }),
    (error: Error) =>
      error instanceof ConfigError &&
      error.problems.length === 1 &&
      error.problems[0]!.variable === "DB_POOL_MAX",
  );
  assert.throws(
    () => loadConfig({ DB_POOL_MAX: "20", WORKER_CONCURRENCY: "16" }),
    /WORKER_CONCURRENCY: may use at most half of DB_POOL_MAX/,
  );
});

test("an ADMIN_TOKEN that no Authorization header can carry stops start-up naming the variable", () => {
  for (const token of [
    "operator token with spaces",
    "operator-token-with\ttab",
    "operator-token-with\u0001control",
    "operator-token-with\u00a0nbsp",
    "opérateur-token-0123456789",
  ]) {
    assert.throws(
      () => loadConfig({ ADMIN_TOKEN: token }),
      (error: Error) => error instanceof ConfigError && /^ADMIN_TOKEN: /.test(error.message),
      JSON.stringify(token),
    );
  }
  assert.equal(
    loadConfig({ ADMIN_TOKEN: "  padded-operator-token-0123  " }).admin_token,
    "padded-operator-token-0123",
  );
});

test("METRICS_TOKEN is off by default; one with a space or under 16 characters stops start-up", () => {
  assert.equal(loadConfig({}).metrics_token, null);
  assert.equal(
    loadConfig({ METRICS_TOKEN: "metrics-token-0123456789" }).metrics_token,
    "metrics-token-0123456789",
  );
  for (const token of ["metrics token 0123456789", "short"]) {
    assert.throws(
      () => loadConfig({ METRICS_TOKEN: token }),
      (error: Error) => error instanceof ConfigError && /^METRICS_TOKEN: /.test(error.message),
    );
  }
});

test("webhook settings: the secret key is base64 of 32+ bytes, the first retry's delay is shortened only in the sandbox", () => {
  const sandbox = loadConfig({});
  assert.deepEqual(
    [
      sandbox.webhook_secret_key,
      sandbox.webhook_allow_private_networks,
      sandbox.webhook_timeout_ms,
      sandbox.webhook_concurrency,
      sandbox.webhook_endpoint_concurrency,
      sandbox.webhook_first_retry_delay_ms,
      sandbox.webhook_poll_ms,
    ],
    [null, false, 15_000, 64, 2, 5_000, 500],
    "the documented defaults",
  );
  assert.throws(
    () => loadConfig({ WEBHOOK_SECRET_KEY: Buffer.alloc(16, 1).toString("base64") }),
    /WEBHOOK_SECRET_KEY: must be base64 of at least 32/,
  );
  assert.throws(() => loadConfig({ WEBHOOK_SECRET_KEY: "not base64!" }), /WEBHOOK_SECRET_KEY/);
  assert.equal(loadConfig({ WEBHOOK_FIRST_RETRY_DELAY_MS: "200" }).webhook_first_retry_delay_ms, 200);
  assert.throws(
    () => loadConfig({ APP_ENV: "production", WEBHOOK_FIRST_RETRY_DELAY_MS: "200" }),
    (error: Error) => /^WEBHOOK_FIRST_RETRY_DELAY_MS: is a test setting/.test(error.message),
  );
  // The contract: `https://` and public addresses only in production. The flag is for development
  // and tests; in production it would let any partner point deliveries at the internal network.
  assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" }).webhook_allow_private_networks, true);
  assert.throws(
    () => loadConfig({ APP_ENV: "production", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" }),
    (error: Error) =>
      /^WEBHOOK_ALLOW_PRIVATE_NETWORKS: is a development and test setting/.test(error.message),
  );
});

const ES2PLUS = {
  ES2PLUS_URL: "https://smdp.example:8443",
  ES2PLUS_REQUESTER_ID: "esim-api",
  ES2PLUS_CLIENT_CERT_FILE: "/etc/esim/client.pem",
  ES2PLUS_CLIENT_KEY_FILE: "/etc/esim/client.key",
  ES2PLUS_CA_FILE: "/etc/esim/smdp-ca.pem",
  ES2PLUS_SMDP_ADDRESS: "smdp.example",
};

test("CSV exports at once: 4 per process and 1 per partner by default, each 1 to 64", () => {
  const defaults = loadConfig({});
  assert.deepEqual([defaults.csv_exports_per_process, defaults.csv_exports_per_partner], [4, 1]);
  const set = loadConfig({ CSV_EXPORTS_PER_PROCESS: "8", CSV_EXPORTS_PER_PARTNER: "2" });
  assert.deepEqual([set.csv_exports_per_process, set.csv_exports_per_partner], [8, 2]);
  assert.throws(
    () => loadConfig({ CSV_EXPORTS_PER_PROCESS: "0" }),
    /CSV_EXPORTS_PER_PROCESS: expected 1 to 64/,
  );
  assert.throws(
    () => loadConfig({ CSV_EXPORTS_PER_PARTNER: "65" }),
    /CSV_EXPORTS_PER_PARTNER: expected 1 to 64/,
  );
});

test("ES2+ settings are all or none: a partial set is refused, naming each missing one", () => {
  const production = {
    APP_ENV: "production",
    DATABASE_URL: "postgres://db.example/esim",
    ADMIN_TOKEN: "a-long-admin-token",
    SMTP_URL: "smtp://mail.example",
    CARRIER_URL: "https://carrier.example",
    CARRIER_API_KEY: "secret",
    CARRIER_CALLBACK_TOKEN: "a-long-callback-token",
    CARRIER_PROFILES: "es2plus",
    ES2PLUS_CALLBACK_TOKEN: "a-long-smdp-callback-token",
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    PUBLIC_BASE_URL: "https://console.esim.example",
  };
  const config = loadConfig({ ...production, ...ES2PLUS });
  assert.equal(config.carrier_profiles, "es2plus");
  assert.equal(config.es2plus?.smdp_address, "smdp.example");
  for (const missing of Object.keys(ES2PLUS)) {
    const partial: Record<string, string> = { ...production, ...ES2PLUS };
    delete partial[missing];
    assert.throws(() => loadConfig(partial), new RegExp(`${missing}: is required with`));
    // The same half configuration is refused with CARRIER_PROFILES=http too: it is a mistake either way.
    assert.throws(() => loadConfig({ ...partial, CARRIER_PROFILES: "http" }), new RegExp(`${missing}:`));
  }
  assert.throws(() => loadConfig({ ...production, CARRIER_PROFILES: "es2plus" }), /ES2PLUS_URL:/);
  assert.throws(
    () => loadConfig({ ...production, ...ES2PLUS, ES2PLUS_URL: "http://smdp.example" }),
    /ES2PLUS_URL/,
  );
  const { ES2PLUS_CALLBACK_TOKEN: _, ...without_token } = production;
  assert.throws(() => loadConfig({ ...without_token, ...ES2PLUS }), /ES2PLUS_CALLBACK_TOKEN:/);
  assert.equal(loadConfig({}).carrier_profiles, "es2plus", "the sandbox's built-in carrier runs ES2+");
  assert.equal(loadConfig({ CARRIER_URL: "https://carrier.example" }).carrier_profiles, "http");
  assert.equal(loadConfig({ CARRIER_PROFILES: "http" }).carrier_profiles, "http");
});

test("TRUSTED_PROXIES: empty by default; IPv4 and IPv6 CIDRs (a bare address is one host); anything else stops start-up", () => {
  assert.deepEqual(loadConfig({}).trusted_proxies, []);
  assert.deepEqual(loadConfig({ TRUSTED_PROXIES: " 10.0.0.0/8, 192.0.2.7 ,fd00::/8, ::1" }).trusted_proxies, [
    "10.0.0.0/8",
    "192.0.2.7/32",
    "fd00::/8",
    "::1/128",
  ]);
  for (const value of [
    "10.0.0.0/33",
    "fd00::/129",
    "0.0.0.0/0",
    "::/0",
    "10.0.0",
    "lb.internal",
    "10.0.0.0/8,",
    "fe80::1%eth0",
    "010.0.0.1",
  ]) {
    assert.throws(
      () => loadConfig({ TRUSTED_PROXIES: value }),
      (error: Error) => error instanceof ConfigError && /^TRUSTED_PROXIES: /.test(error.message),
      value,
    );
  }
  const many = Array.from({ length: 65 }, (_, i) => `10.0.${i}.0/24`).join(",");
  assert.throws(() => loadConfig({ TRUSTED_PROXIES: many }), /TRUSTED_PROXIES: at most 64 entries/);
});

test("DATABASE_DIRECT_URL: absent by default; set, it needs DATABASE_URL and prepares nothing unless DB_PREPARE_THRESHOLD says", () => {
  assert.equal(loadConfig({}).database_direct_url, null);
  assert.equal(loadConfig({ DATABASE_URL: "postgres://u:p@db/esim" }).db_prepare_threshold, 3);
  const pooled = loadConfig({
    DATABASE_URL: "postgres://u:p@pgbouncer:6432/esim",
    DATABASE_DIRECT_URL: "postgres://u:p@db:5432/esim",
  });
  assert.equal(pooled.database_direct_url, "postgres://u:p@db:5432/esim");
  assert.equal(pooled.db_prepare_threshold, 0, "PgBouncer before 1.21 cannot carry prepared statements");
  const newer = loadConfig({
    DATABASE_URL: "postgres://u:p@pgbouncer:6432/esim",
    DATABASE_DIRECT_URL: "postgres://u:p@db:5432/esim",
    DB_PREPARE_THRESHOLD: "3",
  });
  assert.equal(newer.db_prepare_threshold, 3, "PgBouncer 1.21+ with max_prepared_statements");
  for (const [env, message] of [
    [{ DATABASE_DIRECT_URL: "postgres://u:p@db/esim" }, /^DATABASE_DIRECT_URL: .*DATABASE_URL/],
    [{ DATABASE_URL: "postgres://u:p@b/esim", DATABASE_DIRECT_URL: "http://db" }, /^DATABASE_DIRECT_URL: /],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (error: Error) => error instanceof ConfigError && message.test(error.message),
      JSON.stringify(env),
    );
  }
});

test("resends to other addresses than the orders': 100 per partner per day by default, 1 to 100000", () => {
  assert.equal(loadConfig({}).resends_to_other_addresses_per_partner_per_day, 100);
  const set = loadConfig({ RESENDS_TO_OTHER_ADDRESSES_PER_PARTNER_PER_DAY: "20" });
  assert.equal(set.resends_to_other_addresses_per_partner_per_day, 20);
  for (const value of ["0", "100001", "many"]) {
    assert.throws(
      () => loadConfig({ RESENDS_TO_OTHER_ADDRESSES_PER_PARTNER_PER_DAY: value }),
      /RESENDS_TO_OTHER_ADDRESSES_PER_PARTNER_PER_DAY: expected (1 to 100000|a whole number)/,
    );
  }
});
